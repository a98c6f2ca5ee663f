package io.talos.server.storage;

import java.nio.ByteBuffer;

/**
 * One message block as the partition log stores and returns it. The payload is opaque to the
 * server: a compressed run of serialized messages, exactly as the client sent it.
 *
 * <p>The payload is {@code payloadBytes} from position 0 to its limit: a read hands out slices of
 * the buffer it read the records into (a heap array, or a pooled direct buffer valid until its
 * {@link ReadLease} is released) instead of copying each payload out of it. Nobody writes to that
 * buffer while a block refers to it; readers take {@link #payloadBuffer()}, a view of their own.
 *
 * @param startOffset offset of the block's first message; the block holds
 *     [startOffset, startOffset + messageCount)
 * @param compressionType the wire MessageCompressionType number (0 none, 1 snappy, 2 gzip)
 * @param messageBlockSize the client's declared uncompressed size, or -1 when it sent none
 * @param createTimestampMs the client's create time, or -1
 */
public record StoredBlock(long startOffset, int messageCount, int compressionType,
    long appendTimestampMs, long createTimestampMs, int messageBlockSize, ByteBuffer payloadBytes) {

  public StoredBlock {
    payloadBytes = payloadBytes.slice(); // position 0, limit the length, a position of its own
  }

  /** A block whose payload is all of {@code payload}. */
  public StoredBlock(long startOffset, int messageCount, int compressionType, long appendTimestampMs,
      long createTimestampMs, int messageBlockSize, byte[] payload) {
    this(startOffset, messageCount, compressionType, appendTimestampMs, createTimestampMs,
        messageBlockSize, ByteBuffer.wrap(payload));
  }

  public long nextOffset() {
    return startOffset + messageCount;
  }

  public int payloadLength() {
    return payloadBytes.limit();
  }

  /** The payload as a view of the shared buffer (position at its first byte); no copy. */
  public ByteBuffer payloadBuffer() {
    return payloadBytes.duplicate();
  }

  /** The payload in an array of its own: the backing array when it holds exactly the payload, else a copy. */
  public byte[] payload() {
    if (payloadBytes.hasArray() && payloadBytes.arrayOffset() == 0
        && payloadBytes.array().length == payloadBytes.limit()) {
      return payloadBytes.array();
    }
    byte[] copy = new byte[payloadBytes.limit()];
    payloadBytes.get(0, copy);
    return copy;
  }
}
