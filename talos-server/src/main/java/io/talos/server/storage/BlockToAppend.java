package io.talos.server.storage;

/**
 * A block as a producer sent it, before the log assigns its offset and append time. Its payload
 * is {@code payload[payloadOffset, payloadOffset + payloadLength)}: normally a slice of the request
 * body it arrived in, which is copied once, into the record the log writes.
 *
 * @param messageBlockSize the client's declared uncompressed size, or -1
 * @param createTimestampMs the client's create time, or -1
 */
public record BlockToAppend(int messageCount, int compressionType, int messageBlockSize,
    long createTimestampMs, byte[] payload, int payloadOffset, int payloadLength) {

  public BlockToAppend {
    if (payload != null && (payloadOffset < 0 || payloadLength < 0 || payloadOffset > payload.length - payloadLength)) {
      throw new IllegalArgumentException("payload slice [" + payloadOffset + ", +" + payloadLength
          + ") is outside the " + payload.length + "-byte array");
    }
  }

  /** A block whose payload is all of {@code payload}. */
  public BlockToAppend(int messageCount, int compressionType, int messageBlockSize, long createTimestampMs,
      byte[] payload) {
    this(messageCount, compressionType, messageBlockSize, createTimestampMs, payload, 0,
        payload == null ? 0 : payload.length);
  }
}
