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
import io.talos.server.storage.PartitionFencedException;
import io.talos.server.storage.PartitionLogs;
import io.talos.server.storage.PartitionOffsets;
import io.talos.server.storage.ReadablePartition;
import io.talos.server.storage.StorageDeadlineException;
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
   * The log of one partition of {@code topic}, waiting for its open at most until the request's
   * {@link RequestDeadline} (or the logs' default): TOPIC_NOT_EXIST if the topic was deleted
   * meanwhile, PARTITION_NOT_SERVING if another server took it over, HDFS_FILE_NOT_EXIST (not retriable) if its
   * data is missing (until an operator resets it), REQUEST_PROCESS_TIMEOUT
   * (retriable) if the open did not finish in time, HDFS_OPERATION_FAILED (retriable) if storage
   * cannot open it.
   */
  public static PartitionLog openLog(PartitionLogs logs, TopicRecord topic, int partition) throws GalaxyTalosException {
    try {
      long deadline = RequestDeadline.current();
      return deadline == RequestDeadline.NONE ? logs.log(topic.resourceName(), partition)
          : logs.log(topic.resourceName(), partition, deadline);
    } catch (IOException e) {
      throw storageError(topic, partition, "open", e);
    }
  }

  /**
   * What a read of one partition of {@code topic} uses: its log if this server has it open, else a
   * read-only view that never takes the partition over from its writer (see {@link
   * PartitionLogs#readable}); deadline and errors as {@link #openLog}.
   */
  public static ReadablePartition readable(PartitionLogs logs, TopicRecord topic, int partition)
      throws GalaxyTalosException {
    try {
      long deadline = RequestDeadline.current();
      return deadline == RequestDeadline.NONE ? logs.readable(topic.resourceName(), partition)
          : logs.readable(topic.resourceName(), partition, deadline);
    } catch (IOException e) {
      throw storageError(topic, partition, "open", e);
    }
  }

  /** HDFS_FILE_NOT_EXIST: the partition's data is gone; the message says how to reset it. */
  static GalaxyTalosException dataMissing(TopicRecord topic, int partition, PartitionDataMissingException e) {
    return TalosErrors.of(ErrorCode.HDFS_FILE_NOT_EXIST, "partition " + partition + " of topic '" + topic.name()
        + "' is unavailable: " + e.getMessage().replace("<topic> <partition>", topic.name() + " " + partition));
  }

  /**
   * The offsets of one partition of {@code topic}, without opening its log where it is not open
   * (see {@link PartitionLogs#offsets}); errors as {@link #openLog}.
   */
  public static PartitionOffsets offsets(PartitionLogs logs, TopicRecord topic, int partition)
      throws GalaxyTalosException {
    try {
      return logs.offsets(topic.resourceName(), partition);
    } catch (IOException e) {
      throw storageError(topic, partition, "read the offsets of", e);
    }
  }

  private static GalaxyTalosException storageError(TopicRecord topic, int partition, String what, IOException e) {
    if (e instanceof TopicDeletedException) return TalosErrors.topicNotExist(topic.name());
    if (e instanceof PartitionDataMissingException missing) return dataMissing(topic, partition, missing);
    if (e instanceof PartitionFencedException) {
      return TalosErrors.of(ErrorCode.PARTITION_NOT_SERVING, "partition " + partition + " of topic '"
          + topic.name() + "' is now served by another server: " + e.getMessage());
    }
    if (e instanceof StorageDeadlineException) {
      return TalosErrors.of(ErrorCode.REQUEST_PROCESS_TIMEOUT, "cannot " + what + " partition " + partition
          + " of topic '" + topic.name() + "' before the request's deadline: " + e.getMessage());
    }
    return TalosErrors.of(ErrorCode.HDFS_OPERATION_FAILED, "cannot " + what + " partition " + partition
        + " of topic '" + topic.name() + "': " + e.getMessage());
  }

  public static void checkPartition(TopicRecord topic, int partitionId) throws GalaxyTalosException {
    if (partitionId < 0 || partitionId >= topic.partitionCount()) {
      throw TalosErrors.of(ErrorCode.PARTITION_NOT_EXIST, "partition " + partitionId + " of topic '"
          + topic.name() + "' does not exist; partitions are 0.." + (topic.partitionCount() - 1));
    }
  }
}
