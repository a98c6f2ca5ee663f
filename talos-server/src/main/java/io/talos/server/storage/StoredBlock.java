package io.talos.server.storage;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * One message block as the partition log stores and returns it. The payload is opaque to the
 * server: a compressed run of serialized messages, exactly as the client sent it.
 *
 * <p>The payload is {@code buffer[payloadOffset, payloadOffset + payloadLength)}: a read hands
 * out slices of the array it read the records into instead of copying each payload out of it.
 * Nobody writes to that array once a block refers to it.
 *
 * @param startOffset offset of the block's first message; the block holds
 *     [startOffset, startOffset + messageCount)
 * @param compressionType the wire MessageCompressionType number (0 none, 1 snappy, 2 gzip)
 * @param messageBlockSize the client's declared uncompressed size, or -1 when it sent none
 * @param createTimestampMs the client's create time, or -1
 */
public record StoredBlock(long startOffset, int messageCount, int compressionType,
    long appendTimestampMs, long createTimestampMs, int messageBlockSize, byte[] buffer,
    int payloadOffset, int payloadLength) {

  public StoredBlock {
    if (payloadOffset < 0 || payloadLength < 0 || payloadOffset + payloadLength > buffer.length) {
      throw new IllegalArgumentException("payload [" + payloadOffset + ", +" + payloadLength
          + ") outside a buffer of " + buffer.length + " bytes");
    }
  }

  /** A block whose payload is all of {@code payload}. */
  public StoredBlock(long startOffset, int messageCount, int compressionType, long appendTimestampMs,
      long createTimestampMs, int messageBlockSize, byte[] payload) {
    this(startOffset, messageCount, compressionType, appendTimestampMs, createTimestampMs,
        messageBlockSize, payload, 0, payload.length);
  }

  public long nextOffset() {
    return startOffset + messageCount;
  }

  /** The payload as a buffer over the shared array (position at its first byte); no copy. */
  public ByteBuffer payloadBuffer() {
    return ByteBuffer.wrap(buffer, payloadOffset, payloadLength);
  }

  /** The payload in an array of its own: the buffer itself when it holds exactly the payload, else a copy. */
  public byte[] payload() {
    return payloadOffset == 0 && payloadLength == buffer.length ? buffer
        : Arrays.copyOfRange(buffer, payloadOffset, payloadOffset + payloadLength);
  }
}
