package io.talos.server.storage;

/**
 * One message block as the partition log stores and returns it. The payload is opaque to the
 * server: a compressed run of serialized messages, exactly as the client sent it.
 *
 * @param startOffset offset of the block's first message; the block holds
 *     [startOffset, startOffset + messageCount)
 * @param compressionType the wire MessageCompressionType number (0 none, 1 snappy, 2 gzip)
 * @param messageBlockSize the client's declared uncompressed size, or -1 when it sent none
 * @param createTimestampMs the client's create time, or -1
 */
public record StoredBlock(long startOffset, int messageCount, int compressionType,
    long appendTimestampMs, long createTimestampMs, int messageBlockSize, byte[] payload) {

  public long nextOffset() {
    return startOffset + messageCount;
  }
}
