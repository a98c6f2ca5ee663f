package io.talos.server.storage;

/**
 * A read asked for an offset outside {@code [startOffset, endOffset]} of a partition: below the
 * first offset retention kept, or beyond the next offset to be assigned. Checked, and deliberately
 * not an {@link java.io.IOException}, so callers map it to its own error rather than to a storage
 * failure.
 */
public final class OffsetOutOfRangeException extends Exception {
  private final long requestedOffset;
  private final long startOffset;
  private final long endOffset;

  public OffsetOutOfRangeException(String partition, long requestedOffset, long startOffset,
      long endOffset) {
    super("offset " + requestedOffset + " is out of range for " + partition + ": startOffset="
        + startOffset + ", endOffset=" + endOffset + " (readable offsets are [startOffset, endOffset])");
    this.requestedOffset = requestedOffset;
    this.startOffset = startOffset;
    this.endOffset = endOffset;
  }

  public long requestedOffset() {
    return requestedOffset;
  }

  /** The partition's first available offset when the read was refused. */
  public long startOffset() {
    return startOffset;
  }

  /** The partition's next offset to assign when the read was refused. */
  public long endOffset() {
    return endOffset;
  }
}
