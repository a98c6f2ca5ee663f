package io.talos.client.producer.internals;

import io.talos.client.admin.TalosAdmin;
import io.talos.client.admin.TopicDescription;

/**
 * What a producer knows about its topic: name, resource name and partition count. The count is
 * refreshed by {@link #refresh} (describeTopic) and only ever grows: Talos topics cannot shrink,
 * and an answer with fewer partitions (a topic deleted and made again) is ignored here; puts to
 * the old resource name then fail with {@code TOPIC_NOT_EXIST}.
 *
 * <p>All requests go to the client's configured endpoint: there is no partition-to-server map
 * in the protocol yet, so a producer never routes by partition. Thread-safe.
 */
public final class TopicMetadata {
  private final String topicName;
  private final String resourceName;
  private volatile int partitionCount;

  public TopicMetadata(TopicDescription topic) {
    this.topicName = topic.name();
    this.resourceName = topic.resourceName();
    this.partitionCount = Math.max(1, topic.partitionCount());
  }

  public String topicName() {
    return topicName;
  }

  public String resourceName() {
    return resourceName;
  }

  public int partitionCount() {
    return partitionCount;
  }

  /**
   * Asks the server for the topic's partition count.
   *
   * @return true if the count grew
   * @throws io.talos.client.TalosException if the server could not answer
   */
  public boolean refresh(TalosAdmin admin) {
    TopicDescription d = admin.describeTopic(topicName);
    if (!d.resourceName().equals(resourceName) || d.partitionCount() <= partitionCount) return false;
    partitionCount = d.partitionCount();
    return true;
  }
}
