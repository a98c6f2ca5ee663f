package io.talos.server.storage;

import java.io.IOException;
import java.util.List;

/**
 * What a read of one partition needs: the writer's {@link PartitionLog} when this server has it
 * open, else the read-only {@link PartitionReader}, both handed out by {@link
 * PartitionLogs#readable}. Thread-safe.
 */
public interface ReadablePartition {
  /** First readable offset; equals {@link #endOffset()} when nothing is readable. */
  long startOffset();

  /** The offset after the last readable message (the next one to be appended, as far as known). */
  long endOffset();

  /** Bytes of the readable records, as far as known. */
  long sizeBytes();

  /**
   * Reads the blocks from the one that contains {@code offset} onwards; see {@link
   * PartitionLog#read}.
   */
  List<StoredBlock> read(long offset, int maxMessages, int maxBytes) throws OffsetOutOfRangeException, IOException;

  /**
   * As {@link #read(long, int, int)}, possibly into buffers of {@code lease} (see {@link
   * PartitionLog#read(long, int, int, ReadLease)}); this default reads into heap arrays.
   */
  default List<StoredBlock> read(long offset, int maxMessages, int maxBytes, ReadLease lease)
      throws OffsetOutOfRangeException, IOException {
    return read(offset, maxMessages, maxBytes);
  }

  /**
   * The offset of the first message appended at or after {@code timestampMs} (append timestamps,
   * the server's clock); {@link #endOffset()} when every readable message is older. Uses the
   * segments' newest timestamps to skip whole segments and their {@link TimeIndex} within one.
   */
  long offsetForTimestamp(long timestampMs) throws IOException;

  /** Closed by its cache (idle, over the limits): fetch it again from {@link PartitionLogs}. */
  boolean isClosed();

  /** Another server took the partition over from this one's writer; a read-only view never is. */
  boolean isFenced();
}
