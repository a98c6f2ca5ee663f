package io.talos.server.storage;

/**
 * Whether this server may open a partition for writing (and append to it): asked by {@link
 * PartitionLogs#log} before every use of a partition's log, so before every append and before an
 * open claims the partition. A single server allows everything ({@link #ALWAYS}); a cluster node
 * allows only the partitions it owns (and claims their owner epoch on first use). Reads never ask:
 * they use read-only views, which claim nothing.
 *
 * <p>Implementations are thread-safe and answer from memory except when they claim.
 */
public interface PartitionWriteGate {
  PartitionWriteGate ALWAYS = (topicResourceName, partitionId) -> {};

  /**
   * Returns if this server may write the partition now.
   *
   * @throws PartitionFencedException (PARTITION_NOT_SERVING, retriable) if it may not
   * @throws java.io.IOException a claim could not be stored (retriable)
   */
  void checkWritable(String topicResourceName, int partitionId) throws java.io.IOException;
}
