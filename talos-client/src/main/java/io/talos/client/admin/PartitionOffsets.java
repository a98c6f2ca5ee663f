package io.talos.client.admin;

import io.talos.thrift.ErrorCode;

/**
 * The offset range of one partition.
 *
 * @param startOffset offset of the oldest retained message
 * @param endOffset offset of the newest message, inclusive; {@code startOffset - 1} when the
 *     partition is empty
 * @param errorCode null when the server could report this partition, else why it could not (the
 *     offsets are then meaningless)
 * @param errorMessage the server's explanation when {@code errorCode} is set, else null
 */
public record PartitionOffsets(int partitionId, long startOffset, long endOffset,
    ErrorCode errorCode, String errorMessage) {

  /** Whether the server could not report this partition. */
  public boolean hasError() {
    return errorCode != null;
  }

  /** The offset the next message written to the partition will get. */
  public long nextOffset() {
    return endOffset + 1;
  }
}
