package io.talos.client.codec;

import io.talos.thrift.MessageBlock;
import io.talos.thrift.MessageType;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.zip.GZIPOutputStream;
import org.xerial.snappy.SnappyOutputStream;

/**
 * Builds {@code MessageBlock}s in the format of {@link io.talos.client.codec}: {@link #add}
 * serializes messages into a growing buffer, {@link #finish} compresses them into one block and
 * makes the encoder empty again, ready for the next block. Without compression the block takes
 * the encoder's buffer as it is (its {@code messageBlock} is the buffer's first
 * {@link #serializedBytes()} bytes): the messages are copied once, by {@link #add}.
 *
 * <p>{@link #serializedBytes()} is the uncompressed size so far, which is what a producer uses
 * to decide where one block ends and the next begins.
 *
 * <p>Not thread-safe.
 */
public final class MessageBlockEncoder {
  /** Bytes a version 2 message takes besides its sequence number and payload. */
  public static final int MESSAGE_OVERHEAD_BYTES = 20;
  /** The largest payload the protocol allows (10 MiB). */
  public static final int MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;
  /** Sequence numbers have 1 to this many characters. */
  public static final int MAX_SEQUENCE_NUMBER_CHARS = 256;

  private static final byte[] NO_BYTES = new byte[0];
  private static final byte VERSION_MARKER = 'V';
  private static final int VERSION = 2;

  private final CompressionType compression;
  private byte[] buffer;
  private int length;
  private int count;
  private long firstCreateTimestampMs;
  /** Sum of (createTimestamp - first), so that the mean does not overflow for real clocks. */
  private long createTimestampDeltaSum;

  public MessageBlockEncoder(CompressionType compression) {
    this(compression, 4096);
  }

  /**
   * @param expectedBytes the serialized size of the messages the first block will hold, when
   *     known: a buffer of that size is never grown
   */
  public MessageBlockEncoder(CompressionType compression, int expectedBytes) {
    this.compression = Objects.requireNonNull(compression, "compression");
    if (expectedBytes < 1) throw new IllegalArgumentException("expectedBytes must be >= 1, got " + expectedBytes);
    this.buffer = new byte[expectedBytes];
  }

  /**
   * Encodes one block with all messages created at {@code createTimestampMs}.
   *
   * @throws IllegalArgumentException if {@code payloads} is empty or a payload is empty or larger
   *     than {@link #MAX_PAYLOAD_BYTES}
   */
  public static MessageBlock encode(List<byte[]> payloads, CompressionType compression,
      long createTimestampMs) {
    if (payloads.isEmpty()) throw new IllegalArgumentException("no messages to encode");
    long bytes = 0;
    for (byte[] payload : payloads) {
      bytes += serializedSize(Objects.requireNonNull(payload, "payload").length, null);
    }
    // sized exactly: growing by doubling would copy and zero about twice the block again
    MessageBlockEncoder encoder = new MessageBlockEncoder(compression,
        (int) Math.min(bytes, Integer.MAX_VALUE - 8));
    for (byte[] payload : payloads) encoder.add(payload, createTimestampMs, null);
    return encoder.finish();
  }

  /** The serialized (uncompressed) size of one message. */
  public static int serializedSize(int payloadBytes, String sequenceNumber) {
    int seq = sequenceNumber == null ? 0 : sequenceNumber.getBytes(StandardCharsets.UTF_8).length;
    return MESSAGE_OVERHEAD_BYTES + seq + payloadBytes;
  }

  /**
   * Appends one message. The payload is copied; the caller may reuse the array.
   *
   * @param sequenceNumber the user's sequence number (1 to 256 characters), or null
   * @throws IllegalArgumentException if the payload is empty or larger than
   *     {@link #MAX_PAYLOAD_BYTES}, or the sequence number is empty or too long
   */
  public MessageBlockEncoder add(byte[] payload, long createTimestampMs, String sequenceNumber) {
    checkMessage(payload, sequenceNumber);
    byte[] seq = sequenceNumber == null ? NO_BYTES : sequenceNumber.getBytes(StandardCharsets.UTF_8);
    ensureCapacity(MESSAGE_OVERHEAD_BYTES + seq.length + payload.length);
    buffer[length++] = VERSION_MARKER;
    putShort(VERSION);
    buffer[length++] = 0;
    putLong(createTimestampMs);
    putShort(MessageType.BINARY.getValue());
    putShort(seq.length);
    System.arraycopy(seq, 0, buffer, length, seq.length);
    length += seq.length;
    putInt(payload.length);
    System.arraycopy(payload, 0, buffer, length, payload.length);
    length += payload.length;

    if (count == 0) {
      firstCreateTimestampMs = createTimestampMs;
      createTimestampDeltaSum = 0;
    } else {
      createTimestampDeltaSum += createTimestampMs - firstCreateTimestampMs;
    }
    count++;
    return this;
  }

  /**
   * Checks what {@link #add} checks, without adding.
   *
   * @throws IllegalArgumentException as {@link #add} does
   */
  public static void checkMessage(byte[] payload, String sequenceNumber) {
    Objects.requireNonNull(payload, "payload");
    if (payload.length < 1 || payload.length > MAX_PAYLOAD_BYTES) {
      throw new IllegalArgumentException("message payload has " + payload.length
          + " bytes; allowed: 1 to " + MAX_PAYLOAD_BYTES);
    }
    if (sequenceNumber != null
        && (sequenceNumber.isEmpty() || sequenceNumber.length() > MAX_SEQUENCE_NUMBER_CHARS)) {
      throw new IllegalArgumentException("sequence number has " + sequenceNumber.length()
          + " characters; allowed: 1 to " + MAX_SEQUENCE_NUMBER_CHARS);
    }
  }

  /** Messages added since the last {@link #finish}. */
  public int messageCount() {
    return count;
  }

  /** Serialized, uncompressed bytes added since the last {@link #finish}. */
  public int serializedBytes() {
    return length;
  }

  public CompressionType compression() {
    return compression;
  }

  /**
   * Compresses the messages added so far into a block and empties the encoder.
   *
   * @throws IllegalStateException if no message was added
   */
  public MessageBlock finish() {
    if (count == 0) throw new IllegalStateException("a message block needs at least one message");
    ByteBuffer payload = compress();
    MessageBlock block = new MessageBlock()
        .setStartMessageOffset(0)
        .setMessageNumber(count)
        .setCompressionType(compression.wireType())
        .setMessageBlockSize(payload.remaining())
        .setCreateTimestamp(firstCreateTimestampMs + createTimestampDeltaSum / count);
    block.messageBlock = payload; // the setter would copy the array once more
    length = 0;
    count = 0;
    return block;
  }

  private ByteBuffer compress() {
    if (compression == CompressionType.NONE) {
      // the block takes the buffer itself, however full: no copy of the messages; the encoder
      // starts a new buffer should it be used again
      ByteBuffer handed = ByteBuffer.wrap(buffer, 0, length);
      buffer = new byte[0];
      return handed;
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream(Math.max(64, length / 2));
    try (OutputStream compressing = compression == CompressionType.SNAPPY
        ? new SnappyOutputStream(out) : new GZIPOutputStream(out, 8192)) {
      compressing.write(buffer, 0, length);
    } catch (IOException e) {
      throw new UncheckedIOException("in-memory " + compression + " compression failed", e);
    }
    return ByteBuffer.wrap(out.toByteArray());
  }

  /**
   * Grows the buffer to {@code capacity} bytes (nothing if it is already that large), so that a
   * caller that accounts for the buffer's memory decides how it grows: {@link #add} grows it only
   * when a message does not fit.
   */
  public void growTo(int capacity) {
    if (capacity > buffer.length) buffer = Arrays.copyOf(buffer, capacity);
  }

  private void ensureCapacity(int more) {
    long needed = (long) length + more;
    if (needed > Integer.MAX_VALUE - 8) {
      throw new IllegalStateException("message block would exceed 2 GiB; finish() it first");
    }
    if (needed > buffer.length) {
      buffer = Arrays.copyOf(buffer, (int) Math.min(Integer.MAX_VALUE - 8,
          Math.max(needed, (long) buffer.length * 2)));
    }
  }

  private void putShort(int v) {
    buffer[length++] = (byte) (v >>> 8);
    buffer[length++] = (byte) v;
  }

  private void putInt(int v) {
    buffer[length++] = (byte) (v >>> 24);
    buffer[length++] = (byte) (v >>> 16);
    buffer[length++] = (byte) (v >>> 8);
    buffer[length++] = (byte) v;
  }

  private void putLong(long v) {
    putInt((int) (v >>> 32));
    putInt((int) v);
  }
}
