package io.talos.client.admin;

import java.util.OptionalInt;

/**
 * What {@link TalosAdmin#changeTopicAttribute} changes; an empty field keeps the current value.
 *
 * <pre>{@code
 * admin.changeTopicAttribute("orders", TopicAttributeChange.ofPartitionCount(16).withRetentionSecs(86_400));
 * }</pre>
 *
 * @param partitionCount the new number of partitions (servers only allow more than now)
 * @param retentionSecs the new message retention, seconds
 */
public record TopicAttributeChange(OptionalInt partitionCount, OptionalInt retentionSecs) {

  public TopicAttributeChange {
    check("partitionCount", partitionCount);
    check("retentionSecs", retentionSecs);
  }

  public static TopicAttributeChange ofPartitionCount(int partitionCount) {
    return new TopicAttributeChange(OptionalInt.of(partitionCount), OptionalInt.empty());
  }

  public static TopicAttributeChange ofRetentionSecs(int retentionSecs) {
    return new TopicAttributeChange(OptionalInt.empty(), OptionalInt.of(retentionSecs));
  }

  public TopicAttributeChange withPartitionCount(int count) {
    return new TopicAttributeChange(OptionalInt.of(count), retentionSecs);
  }

  public TopicAttributeChange withRetentionSecs(int secs) {
    return new TopicAttributeChange(partitionCount, OptionalInt.of(secs));
  }

  private static void check(String name, OptionalInt value) {
    if (value == null) throw new NullPointerException(name);
    if (value.isPresent() && value.getAsInt() < 1) {
      throw new IllegalArgumentException(name + " must be >= 1, got " + value.getAsInt());
    }
  }
}
