package io.talos.server.service;

import io.talos.common.errors.TalosErrors;
import io.talos.server.metadata.MetadataStore;
import io.talos.server.metadata.TopicRecord;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicTalosResourceName;
import io.talos.common.TopicNames;
import io.talos.server.storage.PartitionDataMissingException;
import io.talos.server.storage.PartitionLog;
import io.talos.server.storage.PartitionLogs;
import io.talos.server.storage.TopicDeletedException;
import java.io.IOException;

/**
 * Resolves the topic and partition a request names, with the wire errors for every way it can be
 * wrong. A request that names a resource name of a deleted incarnation of the topic gets
 * TOPIC_NOT_EXIST even if a topic of the same name exists again. Thread-safe.
 */
public final class Topics {
  private final MetadataStore metadata;

  public Topics(MetadataStore metadata) {
    this.metadata = metadata;
  }

  public MetadataStore metadata() {
    return metadata;
  }

  public TopicRecord byName(String name) throws GalaxyTalosException {
    if (name == null || name.isEmpty()) throw TalosErrors.of(ErrorCode.INVALID_TOPIC_NAME, "topic name is missing");
    return metadata.topic(name).orElseThrow(() -> TalosErrors.topicNotExist(name));
  }

  public TopicRecord byResourceName(TopicTalosResourceName trn) throws GalaxyTalosException {
    String resourceName = trn == null ? null : trn.getTopicTalosResourceName();
    String name = TopicNames.topicNameOf(resourceName);
    if (name == null) {
      throw TalosErrors.of(ErrorCode.INVALID_TOPIC_NAME, "topic resource name '" + resourceName
          + "' is malformed; expected ownerId#topicName#suffix");
    }
    TopicRecord topic = metadata.topic(name).orElse(null);
    if (topic == null || !topic.resourceName().equals(resourceName)) {
      throw TalosErrors.of(ErrorCode.TOPIC_NOT_EXIST, "topic resource '" + resourceName + "' does not exist"
          + (topic == null ? "" : " (topic '" + name + "' now has resource name " + topic.resourceName() + ")"));
    }
    return topic;
  }

  /** The topic of a TopicAndPartition, checking the resource name (if given) and the partition id. */
  public TopicRecord partition(TopicAndPartition tap) throws GalaxyTalosException {
    if (tap == null) throw TalosErrors.invalidParams("topicAndPartition is missing");
    TopicRecord topic = tap.isSetTopicTalosResourceName()
        && tap.getTopicTalosResourceName().getTopicTalosResourceName() != null
        ? byResourceName(tap.getTopicTalosResourceName())
        : byName(tap.getTopicName());
    checkPartition(topic, tap.getPartitionId());
    return topic;
  }

  /**
   * The log of one partition of {@code topic}: TOPIC_NOT_EXIST if the topic was deleted meanwhile,
   * HDFS_FILE_NOT_EXIST (not retriable) if its data is missing (until an operator resets it),
   * HDFS_OPERATION_FAILED (retriable) if storage cannot open it.
   */
  public static PartitionLog openLog(PartitionLogs logs, TopicRecord topic, int partition) throws GalaxyTalosException {
    try {
      return logs.log(topic.resourceName(), partition);
    } catch (TopicDeletedException e) {
      throw TalosErrors.topicNotExist(topic.name());
    } catch (PartitionDataMissingException e) {
      throw dataMissing(topic, partition, e);
    } catch (IOException e) {
      throw TalosErrors.of(ErrorCode.HDFS_OPERATION_FAILED, "cannot open partition " + partition
          + " of topic '" + topic.name() + "': " + e.getMessage());
    }
  }

  /** HDFS_FILE_NOT_EXIST: the partition's data is gone; the message says how to reset it. */
  static GalaxyTalosException dataMissing(TopicRecord topic, int partition, PartitionDataMissingException e) {
    return TalosErrors.of(ErrorCode.HDFS_FILE_NOT_EXIST, "partition " + partition + " of topic '" + topic.name()
        + "' is unavailable: " + e.getMessage().replace("<topic> <partition>", topic.name() + " " + partition));
  }

  public static void checkPartition(TopicRecord topic, int partitionId) throws GalaxyTalosException {
    if (partitionId < 0 || partitionId >= topic.partitionCount()) {
      throw TalosErrors.of(ErrorCode.PARTITION_NOT_EXIST, "partition " + partitionId + " of topic '"
          + topic.name() + "' does not exist; partitions are 0.." + (topic.partitionCount() - 1));
    }
  }
}
