package io.talos.server.service;

import io.talos.common.TopicNames;
import io.talos.common.errors.TalosErrors;
import io.talos.server.frontend.RequestContext;
import io.talos.server.metadata.MetadataStore;
import io.talos.server.metadata.TopicRecord;
import io.talos.server.storage.PartitionLog;
import io.talos.server.storage.PartitionOffsets;
import io.talos.server.storage.PartitionLogs;
import io.talos.server.storage.TopicDeletedException;
import io.talos.thrift.AddSubResourceNameRequest;
import io.talos.thrift.BaseQuota;
import io.talos.thrift.ChangeTopicAttributeRequest;
import io.talos.thrift.CreateTopicRequest;
import io.talos.thrift.CreateTopicResponse;
import io.talos.thrift.DeleteTopicQuotaRequest;
import io.talos.thrift.DeleteTopicRequest;
import io.talos.thrift.DescribeTopicRequest;
import io.talos.thrift.DescribeTopicResponse;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.GetPermissionRequest;
import io.talos.thrift.GetPermissionResponse;
import io.talos.thrift.ListPermissionRequest;
import io.talos.thrift.ListPermissionResponse;
import io.talos.thrift.ListTopicsResponse;
import io.talos.thrift.PartitionState;
import io.talos.thrift.Permission;
import io.talos.thrift.QueryTopicQuotaRequest;
import io.talos.thrift.QueryTopicQuotaResponse;
import io.talos.thrift.ResetPartitionRequest;
import io.talos.thrift.ResetPartitionResponse;
import io.talos.thrift.RevokePermissionRequest;
import io.talos.thrift.SetPermissionRequest;
import io.talos.thrift.SetTopicQuotaRequest;
import io.talos.thrift.TopicAttribute;
import io.talos.thrift.TopicInfo;
import io.talos.thrift.TopicService;
import io.talos.thrift.TopicState;
import io.talos.thrift.TopicStatus;
import io.talos.thrift.TopicTalosResourceName;
import java.io.IOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * TopicService: create, delete, describe, list and change topics. Quotas and permissions are not
 * offered by this server yet and answer NOT_SUPPORTED (OPERATION_FAILED for SDK 2.0.2 clients)
 * saying so. Thread-safe.
 */
public final class TopicServiceHandler extends BaseServiceHandler implements TopicService.Iface {
  private final Topics topics;
  private final MetadataStore metadata;
  private final PartitionLogs logs;
  private final TopicDeletions deletions;
  private final Clock clock;
  private final int maxPartitions;
  private final int defaultRetentionSecs;
  private final int minRetentionSecs;

  public TopicServiceHandler(Topics topics, PartitionLogs logs, TopicDeletions deletions, Clock clock,
      int maxPartitions, int defaultRetentionSecs, int minRetentionSecs) {
    this.topics = topics;
    this.metadata = topics.metadata();
    this.logs = logs;
    this.deletions = deletions;
    this.clock = clock;
    this.maxPartitions = maxPartitions;
    this.defaultRetentionSecs = defaultRetentionSecs;
    this.minRetentionSecs = minRetentionSecs;
  }

  @Override
  public CreateTopicResponse createTopic(CreateTopicRequest request) throws GalaxyTalosException {
    if (request == null) throw TalosErrors.invalidParams("request is missing");
    String name = request.getTopicName();
    String problem = TopicNames.validateName(name);
    if (problem != null) throw TalosErrors.of(ErrorCode.INVALID_TOPIC_NAME, problem);
    TopicAttribute attr = request.getTopicAttribute();
    if (attr == null || !attr.isSetPartitionNumber()) {
      throw TalosErrors.of(ErrorCode.INVALID_TOPIC_PARAMS, "topicAttribute.partitionNumber is required (1.." + maxPartitions + ")");
    }
    checkPartitionCount(attr.getPartitionNumber());
    int retention = attr.isSetMessageRetentionSecs() ? attr.getMessageRetentionSecs() : defaultRetentionSecs;
    checkRetention(retention);
    String owner = RequestContext.current().credential().ownerId();
    String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 16);
    TopicRecord record = new TopicRecord(name, TopicNames.resourceName(owner, name, suffix), owner,
        attr.getPartitionNumber(), retention, attr.isSetAttributes() ? attr.getAttributes() : Map.of(),
        clock.millis(), 0);
    if (!metadata.createTopic(record)) {
      throw TalosErrors.of(ErrorCode.TOPIC_EXIST, "topic '" + name + "' already exists");
    }
    return new CreateTopicResponse(topicInfo(record));
  }

  @Override
  public void deleteTopic(DeleteTopicRequest request) throws GalaxyTalosException {
    if (request == null) throw TalosErrors.invalidParams("request is missing");
    TopicRecord topic = topics.byResourceName(request.getTopicTalosResourceName());
    // Tombstone, metadata, data, tombstone (see TopicDeletions): once the metadata is gone the
    // deletion is done for the client; data that could not be removed yet is removed later.
    if (!deletions.delete(topic)) {
      throw TalosErrors.topicNotExist(topic.name());
    }
  }

  /**
   * Operator reset of a partition whose data is missing (it answers HDFS_FILE_NOT_EXIST): accepts
   * the loss, and the partition continues at its recorded next offset, never below. A partition
   * whose data is intact is left as it is. Admin credential only.
   */
  @Override
  public ResetPartitionResponse resetPartition(ResetPartitionRequest request) throws GalaxyTalosException {
    if (request == null) throw TalosErrors.invalidParams("request is missing");
    if (!RequestContext.current().credential().admin()) {
      throw TalosErrors.of(ErrorCode.PERMISSION_DENIED_ERROR, "resetting a partition accepts data loss: it needs"
          + " the admin credential");
    }
    TopicRecord topic = topics.byName(request.getTopicName());
    Topics.checkPartition(topic, request.getPartitionId());
    PartitionLog log;
    try {
      log = logs.resetPartition(topic.resourceName(), request.getPartitionId());
    } catch (TopicDeletedException e) {
      throw TalosErrors.topicNotExist(topic.name());
    } catch (IOException e) {
      throw TalosErrors.of(ErrorCode.HDFS_OPERATION_FAILED, "cannot reset partition " + request.getPartitionId()
          + " of topic '" + topic.name() + "': " + e.getMessage());
    }
    return new ResetPartitionResponse(log.startOffset(), log.endOffset());
  }

  @Override
  public void changeTopicAttribute(ChangeTopicAttributeRequest request) throws GalaxyTalosException {
    if (request == null || request.getTopicAttribute() == null) {
      throw TalosErrors.invalidParams("topicAttribute is missing");
    }
    TopicAttribute attr = request.getTopicAttribute();
    for (int attempt = 0; ; attempt++) {
      TopicRecord current = topics.byResourceName(request.getTopicTalosResourceName());
      TopicRecord updated = current;
      if (attr.isSetPartitionNumber()) {
        int count = attr.getPartitionNumber();
        if (count < current.partitionCount()) {
          throw TalosErrors.of(ErrorCode.INVALID_TOPIC_PARAMS, "partition count of topic '" + current.name()
              + "' may only grow: it is " + current.partitionCount() + ", requested " + count);
        }
        checkPartitionCount(count);
        updated = updated.withPartitionCount(count);
      }
      if (attr.isSetMessageRetentionSecs()) {
        checkRetention(attr.getMessageRetentionSecs());
        updated = updated.withRetentionSecs(attr.getMessageRetentionSecs());
      }
      if (attr.isSetAttributes()) {
        Map<String, String> merged = new HashMap<>(current.attributes());
        merged.putAll(attr.getAttributes());
        updated = updated.withAttributes(merged);
      }
      if (metadata.replaceTopic(current, updated)) return;
      if (attempt >= 10) {
        throw TalosErrors.of(ErrorCode.OPERATION_FAILED, "topic '" + current.name()
            + "' is being changed concurrently; retry");
      }
    }
  }

  @Override
  public DescribeTopicResponse describeTopic(DescribeTopicRequest request) throws GalaxyTalosException {
    if (request == null) throw TalosErrors.invalidParams("request is missing");
    TopicRecord topic = topics.byName(request.getTopicName());
    List<PartitionState> states = new ArrayList<>();
    long messages = 0;
    long bytes = 0;
    for (int p = 0; p < topic.partitionCount(); p++) {
      // Offsets without opening the partition's log: a describe must not open every partition.
      PartitionOffsets offsets = Topics.offsets(logs, topic, p);
      long start = offsets.startOffset();
      long end = offsets.endOffset();
      long size = offsets.sizeBytes();
      messages += end - start;
      bytes += size;
      states.add(new PartitionState(p, start, end - 1, end - start, size)
          .setTotalMessageNumber(end).setTotalMessageBytes(size));
    }
    TopicState state = new TopicState(topic.createTimestampMs(), TopicStatus.ACTIVE, messages, bytes, states)
        .setTotalMessageNumber(messages).setTotalMessageBytes(bytes);
    Map<String, Integer> acl = new HashMap<>();
    acl.put(topic.ownerId(), Permission.FULL_CONTROL.getValue());
    return new DescribeTopicResponse(topicInfo(topic), topicAttribute(topic), state, unlimitedQuota(), acl);
  }

  @Override
  public ListTopicsResponse listTopics() {
    List<TopicInfo> infos = new ArrayList<>();
    for (TopicRecord t : metadata.topics()) infos.add(topicInfo(t));
    return new ListTopicsResponse(infos);
  }


  private void checkPartitionCount(int count) throws GalaxyTalosException {
    if (count < 1 || count > maxPartitions) {
      throw TalosErrors.of(ErrorCode.INVALID_TOPIC_PARAMS, "partition count " + count
          + " is out of range; allowed: 1.." + maxPartitions + " (topic.partitions.max)");
    }
  }

  private void checkRetention(int secs) throws GalaxyTalosException {
    if (secs < minRetentionSecs) {
      throw TalosErrors.of(ErrorCode.INVALID_TOPIC_PARAMS, "messageRetentionSecs " + secs
          + " is too small; at least " + minRetentionSecs + " (topic.retention.secs.min)");
    }
  }

  static TopicInfo topicInfo(TopicRecord t) {
    return new TopicInfo(t.name(), new TopicTalosResourceName(t.resourceName()), t.ownerId());
  }

  static TopicAttribute topicAttribute(TopicRecord t) {
    TopicAttribute a = new TopicAttribute().setPartitionNumber(t.partitionCount())
        .setMessageRetentionSecs(t.retentionSecs());
    if (!t.attributes().isEmpty()) a.setAttributes(new HashMap<>(t.attributes()));
    return a;
  }

  /** Quotas are not enforced: describe reports "unlimited" (-1) so the required field is set. */
  private static BaseQuota unlimitedQuota() {
    return new BaseQuota(-1).setPutMessageQpsQuota(-1).setGetMessageQpsQuota(-1)
        .setPutMessageBytesQpsQuota(-1).setGetMessageBytesQpsQuota(-1);
  }

  // ---- not offered yet ----------------------------------------------------------------------

  @Override
  public void setTopicQuota(SetTopicQuotaRequest request) throws GalaxyTalosException {
    throw notSupported("topic quotas");
  }

  @Override
  public QueryTopicQuotaResponse queryTopicQuota(QueryTopicQuotaRequest request) throws GalaxyTalosException {
    throw notSupported("topic quotas");
  }

  @Override
  public void deleteTopicQuota(DeleteTopicQuotaRequest request) throws GalaxyTalosException {
    throw notSupported("topic quotas");
  }

  @Override
  public void setPermission(SetPermissionRequest request) throws GalaxyTalosException {
    throw notSupported("permission management");
  }

  @Override
  public void revokePermission(RevokePermissionRequest request) throws GalaxyTalosException {
    throw notSupported("permission management");
  }

  @Override
  public ListPermissionResponse listPermission(ListPermissionRequest request) throws GalaxyTalosException {
    throw notSupported("permission management");
  }

  @Override
  public GetPermissionResponse getPermission(GetPermissionRequest request) throws GalaxyTalosException {
    throw notSupported("permission management");
  }

  @Override
  public void addSubResourceName(AddSubResourceNameRequest request) throws GalaxyTalosException {
    throw notSupported("sub-resource names");
  }
}
