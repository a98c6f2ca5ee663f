package io.talos.server.metadata;

import java.util.Optional;

/**
 * Owner epochs of partitions, kept in the shared metadata store (HBase): the arbitration of
 * cluster ownership. A node that takes a partition over first {@link #claimPartitionOwner claims}
 * the next epoch with one compare-and-set; of two nodes racing for a partition exactly one gets each
 * epoch, and the storage layer's own fencing (owner markers and lease recovery on HDFS) then stops
 * every older writer. Deleting a topic deletes its epochs with it.
 *
 * <p>Thread-safe.
 */
public interface PartitionOwnerEpochs {
  /**
   * Stores {@code nodeId} as the owner of the partition at one more than the stored epoch (1 if
   * none), atomically with respect to every other claim.
   *
   * @return the owner and epoch stored
   * @throws MetadataException the store failed (nothing was claimed unless its message says the
   *     outcome is unknown)
   */
  PartitionOwner claimPartitionOwner(String topicResourceName, int partitionId, String nodeId);

  /** The stored owner of the partition, or empty if it was never claimed. */
  Optional<PartitionOwner> partitionOwner(String topicResourceName, int partitionId);
}
