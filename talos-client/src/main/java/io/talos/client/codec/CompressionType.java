package io.talos.client.codec;

import io.talos.thrift.MessageCompressionType;

/** How the serialized messages of a block are compressed; the wire numbers are fixed. */
public enum CompressionType {
  /** The serialized messages as they are. */
  NONE(MessageCompressionType.NONE),
  /**
   * snappy-java's stream format ({@code SnappyOutputStream}): a 16-byte header
   * ({@code "\x82SNAPPY\0"}, version 1, compatible version 1) then chunks of
   * {@code [i32 BE compressed length][raw snappy block]}. Not a bare {@code Snappy.compress}
   * buffer.
   */
  SNAPPY(MessageCompressionType.SNAPPY),
  /** One gzip member (RFC 1952), as {@code java.util.zip.GZIPOutputStream} writes it. */
  GZIP(MessageCompressionType.GZIP);

  private final MessageCompressionType wireType;

  CompressionType(MessageCompressionType wireType) {
    this.wireType = wireType;
  }

  /** The value of {@code MessageBlock.compressionType}. */
  public MessageCompressionType wireType() {
    return wireType;
  }

  /** @return the type of a wire value, or null for a value this client does not know */
  public static CompressionType fromWire(MessageCompressionType wireType) {
    if (wireType == null) return null;
    for (CompressionType t : values()) {
      if (t.wireType == wireType) return t;
    }
    return null;
  }
}
