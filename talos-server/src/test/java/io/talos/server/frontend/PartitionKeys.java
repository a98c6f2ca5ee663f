package io.talos.server.frontend;

/** For tests outside this package: the task-pool key of a partition's puts and gets. */
public final class PartitionKeys {
  private PartitionKeys() {}

  /** The key the front-end gives the puts and gets of {@code partitionId} of {@code topicName}. */
  public static Object of(String topicName, int partitionId) {
    return new PartitionKey(topicName, partitionId);
  }
}
