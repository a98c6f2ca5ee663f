package io.talos.client.producer.internals;

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
 * <p>Fields other than the final ones are guarded by the lock of the batch's partition queue in
 * the accumulator, except
 * {@link #attempts} and {@link #lastError}, written only by the one thread sending the batch.
 */
public final class ProducerBatch {
  /** One accepted record: its own copy of the payload, its future and callback. */
  public record Entry(byte[] payload, String sequenceNumber, long createTimestampMs,
      int serializedBytes, CompletableFuture<RecordMetadata> future, Callback callback) {}

  final int partition;
  final long createdMs;
  final List<Entry> entries = new ArrayList<>();
  int serializedBytes;
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

  ProducerBatch(int partition, long createdMs) {
    this.partition = partition;
    this.createdMs = createdMs;
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
