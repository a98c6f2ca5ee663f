package io.talos.server.metadata;

import java.util.Map;

/**
 * A topic as stored. {@code version} increases by one on every change ({@link
 * MetadataStore#replaceTopic}); new topics start at 0.
 *
 * @param resourceName ownerId#name#uniqueSuffix, unique over the store's lifetime
 * @param retentionSecs how long messages are kept; whole segments older than this are deleted
 * @param acl permissions granted to accounts other than the owner: account id → the bits of an
 *     SDK {@code Permission} value (see {@code io.talos.server.auth.TopicPermission}); the owner
 *     is never listed here, it always has every permission on its topic
 * @param quota the topic's rate quota, or {@link RateQuota#UNLIMITED} when none is set
 */
public record TopicRecord(String name, String resourceName, String ownerId, int partitionCount,
    int retentionSecs, Map<String, String> attributes, long createTimestampMs, long version,
    Map<String, Integer> acl, RateQuota quota) {

  public TopicRecord {
    attributes = Map.copyOf(attributes);
    acl = acl == null ? Map.of() : Map.copyOf(acl);
    quota = quota == null ? RateQuota.UNLIMITED : quota;
  }

  /** A topic with no grants and no quota. */
  public TopicRecord(String name, String resourceName, String ownerId, int partitionCount,
      int retentionSecs, Map<String, String> attributes, long createTimestampMs, long version) {
    this(name, resourceName, ownerId, partitionCount, retentionSecs, attributes, createTimestampMs, version,
        Map.of(), RateQuota.UNLIMITED);
  }

  public TopicRecord withPartitionCount(int count) {
    return new TopicRecord(name, resourceName, ownerId, count, retentionSecs, attributes, createTimestampMs, version,
        acl, quota);
  }

  public TopicRecord withRetentionSecs(int secs) {
    return new TopicRecord(name, resourceName, ownerId, partitionCount, secs, attributes, createTimestampMs, version,
        acl, quota);
  }

  public TopicRecord withAttributes(Map<String, String> attrs) {
    return new TopicRecord(name, resourceName, ownerId, partitionCount, retentionSecs, attrs, createTimestampMs,
        version, acl, quota);
  }

  public TopicRecord withAcl(Map<String, Integer> newAcl) {
    return new TopicRecord(name, resourceName, ownerId, partitionCount, retentionSecs, attributes, createTimestampMs,
        version, newAcl, quota);
  }

  public TopicRecord withQuota(RateQuota newQuota) {
    return new TopicRecord(name, resourceName, ownerId, partitionCount, retentionSecs, attributes, createTimestampMs,
        version, acl, newQuota);
  }
}
