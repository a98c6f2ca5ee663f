package io.talos.client.admin;

import java.util.List;
import java.util.Map;
import java.util.OptionalInt;

/**
 * Everything the server says about a topic.
 *
 * @param retentionSecs how long messages are kept, if the topic sets it (else the server's
 *     default applies)
 * @param attributes free-form topic attributes
 * @param createTimestampMs when the topic was created, epoch ms
 * @param messageCount messages retained in all partitions
 * @param messageBytes bytes retained in all partitions
 * @param partitions one entry per partition the server reported, by partition id
 */
public record TopicDescription(String name, String resourceName, String ownerId,
    int partitionCount, OptionalInt retentionSecs, Map<String, String> attributes,
    TopicStatus status, long createTimestampMs, long messageCount, long messageBytes,
    List<PartitionDescription> partitions) {

  public TopicDescription {
    attributes = Map.copyOf(attributes);
    partitions = List.copyOf(partitions);
  }

  public TopicListing listing() {
    return new TopicListing(name, resourceName, ownerId);
  }
}
