package io.talos.server.metadata;

import java.util.Map;

/**
 * A topic as stored. {@code version} increases by one on every change ({@link
 * MetadataStore#replaceTopic}); new topics start at 0.
 *
 * @param resourceName ownerId#name#uniqueSuffix, unique over the store's lifetime
 * @param retentionSecs how long messages are kept; whole segments older than this are deleted
 */
public record TopicRecord(String name, String resourceName, String ownerId, int partitionCount,
    int retentionSecs, Map<String, String> attributes, long createTimestampMs, long version) {

  public TopicRecord {
    attributes = Map.copyOf(attributes);
  }

  public TopicRecord withPartitionCount(int count) {
    return new TopicRecord(name, resourceName, ownerId, count, retentionSecs, attributes, createTimestampMs, version);
  }

  public TopicRecord withRetentionSecs(int secs) {
    return new TopicRecord(name, resourceName, ownerId, partitionCount, secs, attributes, createTimestampMs, version);
  }

  public TopicRecord withAttributes(Map<String, String> attrs) {
    return new TopicRecord(name, resourceName, ownerId, partitionCount, retentionSecs, attrs, createTimestampMs, version);
  }
}
