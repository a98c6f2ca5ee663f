package io.talos.client.producer.internals;

import io.talos.client.codec.CompressionType;
import io.talos.client.codec.MessageBlockEncoder;
import io.talos.client.producer.Callback;
import io.talos.client.producer.RecordMetadata;
import io.talos.thrift.MessageBlock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Records for one partition that travel in one put request (one message block). Filled by
 * {@link RecordAccumulator#append} until closed; then sent, possibly several times (retries),
 * until it completes once, successfully or not.
 *
 * <p>A record is serialized into the batch's buffer when it is appended (its value is copied
 * once, into the bytes that are sent); the batch keeps of it only its create time, future and
 * callback. The buffer's whole size ({@link #heldBytes}) is reserved in the producer's
 * {@link BufferMemory} while the batch lives: the accumulator reserves what the buffer grows by.
 *
 * <p>Fields other than the final ones are guarded by the lock of the batch's partition queue in
 * the accumulator, except
 * {@link #attempts} and {@link #lastError}, written only by the one thread sending the batch, and
 * the encoder, which appends change under that lock until the batch closes and which only the
 * thread sending the batch (it drained the batch under the lock) ends with {@link #finishBlock}.
 */
public final class ProducerBatch {
  /** One accepted record, once serialized into the batch: what its outcome is told with. */
  public record Entry(long createTimestampMs, CompletableFuture<RecordMetadata> future,
      Callback callback) {}

  final int partition;
  final long createdMs;
  final List<Entry> entries = new ArrayList<>();
  /** The records serialized so far; null once the block is made. */
  private MessageBlockEncoder encoder;
  int serializedBytes;
  /** The size of the encoder's buffer, reserved in the producer's memory until the batch completes. */
  int heldBytes;
  boolean closed;
  boolean inFlight;
  long retryAtMs;
  volatile int attempts;
  /** Set when first sent, by the sending thread; kept for retries. */
  volatile String sequenceId;
  /** The encoded block, made when first sent; retries send it again. */
  volatile MessageBlock block;
  volatile Exception lastError;
  /** Idempotent produce: the producer id and sequence of the batch, set when first sent; -1 if none. */
  volatile long producerId = -1;
  volatile int producerSequence = -1;
  private final CompletableFuture<Void> done = new CompletableFuture<>();

  ProducerBatch(int partition, long createdMs, CompressionType compression, int capacity) {
    this.partition = partition;
    this.createdMs = createdMs;
    this.encoder = new MessageBlockEncoder(compression, capacity);
    this.heldBytes = capacity;
  }

  /** Bytes of the buffer not yet taken by records. Under the queue's lock. */
  int freeBytes() {
    return heldBytes - serializedBytes;
  }

  /** Grows the buffer to {@code capacity} bytes, already reserved by the caller. Under the queue's lock. */
  void growTo(int capacity) {
    encoder.growTo(capacity);
    heldBytes = capacity;
  }

  /**
   * Serializes one record into the buffer, which must have room for its {@code serializedBytes}.
   * Under the queue's lock.
   */
  void add(byte[] value, String sequenceNumber, long createTimestampMs, int serializedBytes,
      CompletableFuture<RecordMetadata> future, Callback callback) {
    if (serializedBytes > freeBytes()) {
      throw new IllegalStateException("no room for " + serializedBytes + " bytes: " + freeBytes() + " free");
    }
    encoder.add(value, createTimestampMs, sequenceNumber);
    this.serializedBytes += serializedBytes;
    entries.add(new Entry(createTimestampMs, future, callback));
  }

  /**
   * Makes the batch's message block from the records serialized so far (compressing them, if
   * so configured, in one pass); called once, when the closed batch is first sent. Without
   * compression the block is the batch's buffer itself.
   */
  MessageBlock finishBlock() {
    MessageBlock made = encoder.finish();
    encoder = null;
    block = made;
    return made;
  }

  /** Bytes of the producer's memory the batch holds (its buffer's size). */
  public int heldBytes() {
    return heldBytes;
  }

  public int partition() {
    return partition;
  }

  public long createdMs() {
    return createdMs;
  }

  /** The records; not to be changed once the batch is closed. */
  public List<Entry> entries() {
    return entries;
  }

  public int recordCount() {
    return entries.size();
  }

  public int serializedBytes() {
    return serializedBytes;
  }

  public int attempts() {
    return attempts;
  }

  /** The producer id the batch is sent with (idempotent produce), or -1. */
  public long producerId() {
    return producerId;
  }

  /** The batch's sequence for its producer id and partition, or -1. */
  public int producerSequence() {
    return producerSequence;
  }

  public Exception lastError() {
    return lastError;
  }

  /** Completes once, when the batch is stored or failed for good. */
  public CompletableFuture<Void> done() {
    return done;
  }

  void markDone() {
    done.complete(null);
  }
}
