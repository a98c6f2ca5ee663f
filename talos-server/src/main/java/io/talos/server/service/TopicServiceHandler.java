package io.talos.server.service;

import io.talos.common.TopicNames;
import io.talos.common.errors.TalosErrors;
import io.talos.server.auth.Authorizer;
import io.talos.server.frontend.RequestContext;
import io.talos.server.metadata.Credential;
import io.talos.server.metadata.RateQuota;
import io.talos.thrift.GrantType;
import io.talos.thrift.Grantee;
import java.util.TreeMap;
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
 * TopicService: create, delete, describe, list and change topics, their quotas and their
 * permissions (ACLs, stored in the topic's record). Who may call what is checked before a call
 * gets here, by the {@link Authorizer}. Sub-resource names are not offered and answer
 * NOT_SUPPORTED (OPERATION_FAILED for SDK 2.0.2 clients). Thread-safe.
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
  /** Most grants one topic's ACL holds (acl.grants.max). */
  private final int maxGrants;
  private final QuotaLimits quotaLimits;

  public TopicServiceHandler(Topics topics, PartitionLogs logs, TopicDeletions deletions, Clock clock,
      int maxPartitions, int defaultRetentionSecs, int minRetentionSecs) {
    this(topics, logs, deletions, clock, maxPartitions, defaultRetentionSecs, minRetentionSecs, 256, QuotaLimits.NONE);
  }

  /**
   * @param maxGrants most grants one topic's ACL holds (acl.grants.max)
   * @param quotaLimits the largest topic quota values accepted (quota.*.max)
   */
  public TopicServiceHandler(Topics topics, PartitionLogs logs, TopicDeletions deletions, Clock clock,
      int maxPartitions, int defaultRetentionSecs, int minRetentionSecs, int maxGrants, QuotaLimits quotaLimits) {
    this.maxGrants = maxGrants;
    this.quotaLimits = quotaLimits;
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
    RateQuota ownerQuota = metadata.userQuota(owner).orElse(null);
    if (ownerQuota != null && ownerQuota.topicCount() > 0) {
      long owned = metadata.topics().stream().filter(t -> owner.equals(t.ownerId())).count();
      if (owned >= ownerQuota.topicCount()) {
        throw TalosErrors.of(ErrorCode.PERMISSION_DENIED_ERROR, "account '" + owner + "' owns " + owned
            + " topics; its user quota allows " + ownerQuota.topicCount() + " (topicNumberQuota)");
      }
    }
    Map<String, Integer> initialAcl = new TreeMap<>();
    if (request.isSetAclMap()) {
      for (Map.Entry<Grantee, Permission> e : request.getAclMap().entrySet()) {
        String account = grantee(e.getKey());
        if (e.getValue() == null) throw TalosErrors.invalidParams("aclMap has a permission that is not an SDK level");
        if (!account.equals(owner) && e.getValue() != Permission.NONE) initialAcl.put(account, e.getValue().getValue());
      }
      if (initialAcl.size() > maxGrants) {
        throw TalosErrors.invalidParams("aclMap grants " + initialAcl.size() + " accounts; at most " + maxGrants
            + " grants per topic (acl.grants.max)");
      }
    }
    RateQuota initialQuota = request.isSetTopicQuota() ? Quotas.fromWire(request.getTopicQuota(), null, quotaLimits)
        : RateQuota.UNLIMITED;
    String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 16);
    TopicRecord record = new TopicRecord(name, TopicNames.resourceName(owner, name, suffix), owner,
        attr.getPartitionNumber(), retention, attr.isSetAttributes() ? attr.getAttributes() : Map.of(),
        clock.millis(), 0, initialAcl, initialQuota);
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
    return new DescribeTopicResponse(topicInfo(topic), topicAttribute(topic), state,
        topic.quota().unlimited() ? unlimitedQuota() : Quotas.toWire(topic.quota()), aclOf(topic));
  }

  @Override
  public ListTopicsResponse listTopics() {
    List<TopicInfo> infos = new ArrayList<>();
    Credential caller = RequestContext.current().credential();
    for (TopicRecord t : metadata.topics()) {
      // Only the topics the caller holds some permission on.
      if (Authorizer.permissionOn(caller, t) != 0) infos.add(topicInfo(t));
    }
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

  // ---- topic quotas -------------------------------------------------------------------------
  // The Authorizer has checked CHANGE_TOPIC (set, delete) or DESCRIBE_TOPIC (query).

  @Override
  public void setTopicQuota(SetTopicQuotaRequest request) throws GalaxyTalosException {
    if (request == null) throw TalosErrors.invalidParams("request is missing");
    RateQuota quota = Quotas.fromWire(request.getTopicQuota(), null, quotaLimits);
    update(request.getTopicResourceName(), t -> t.withQuota(quota));
  }

  @Override
  public QueryTopicQuotaResponse queryTopicQuota(QueryTopicQuotaRequest request) throws GalaxyTalosException {
    if (request == null) throw TalosErrors.invalidParams("request is missing");
    TopicRecord topic = topics.byResourceName(request.getTopicResourceName());
    if (topic.quota().unlimited()) {
      throw TalosErrors.of(ErrorCode.QUOTA_NOT_EXIST, "topic '" + topic.name() + "' has no quota; only the"
          + " node's per-partition limits apply");
    }
    return new QueryTopicQuotaResponse(Quotas.toWire(topic.quota()));
  }

  @Override
  public void deleteTopicQuota(DeleteTopicQuotaRequest request) throws GalaxyTalosException {
    if (request == null) throw TalosErrors.invalidParams("request is missing");
    TopicRecord topic = topics.byResourceName(request.getTopicResourceName());
    if (topic.quota().unlimited()) {
      throw TalosErrors.of(ErrorCode.QUOTA_NOT_EXIST, "topic '" + topic.name() + "' has no quota");
    }
    update(request.getTopicResourceName(), t -> t.withQuota(RateQuota.UNLIMITED));
  }

  // ---- permissions --------------------------------------------------------------------------
  // The Authorizer has checked CHANGE_PERMISSION (set, revoke) or DESCRIBE_TOPIC (list, get).

  @Override
  public void setPermission(SetPermissionRequest request) throws GalaxyTalosException {
    if (request == null) throw TalosErrors.invalidParams("request is missing");
    String account = grantee(request.getGrant());
    Permission level = request.getPermission();
    if (level == null || level == Permission.NONE) {
      // As the SDK's TalosAdmin checks (permission > 0): taking a grant away is revokePermission.
      throw TalosErrors.invalidParams("permission must be one of the SDK's levels above NONE "
          + java.util.Arrays.toString(Permission.values()) + "; use revokePermission to remove a grant");
    }
    update(request.getTopicResourceName(), t -> {
      if (account.equals(t.ownerId())) {
        throw TalosErrors.invalidParams("account '" + account + "' owns topic '" + t.name()
            + "' and always holds every permission on it");
      }
      Map<String, Integer> acl = new TreeMap<>(t.acl());
      acl.put(account, level.getValue());
      if (acl.size() > maxGrants) {
        throw TalosErrors.invalidParams("topic '" + t.name() + "' has " + t.acl().size() + " grants; at most "
            + maxGrants + " grants per topic (acl.grants.max); revoke one first");
      }
      return t.withAcl(acl);
    });
  }

  @Override
  public void revokePermission(RevokePermissionRequest request) throws GalaxyTalosException {
    if (request == null) throw TalosErrors.invalidParams("request is missing");
    String account = grantee(request.getGrant());
    update(request.getTopicResourceName(), t -> {
      Map<String, Integer> acl = new TreeMap<>(t.acl());
      acl.remove(account); // revoking what was not granted changes nothing and is not an error
      return t.withAcl(acl);
    });
  }

  @Override
  public ListPermissionResponse listPermission(ListPermissionRequest request) throws GalaxyTalosException {
    if (request == null) throw TalosErrors.invalidParams("request is missing");
    return new ListPermissionResponse(aclOf(topics.byResourceName(request.getTopicResourceName())));
  }

  @Override
  public GetPermissionResponse getPermission(GetPermissionRequest request) throws GalaxyTalosException {
    if (request == null) throw TalosErrors.invalidParams("request is missing");
    String account = grantee(request.getGrant());
    TopicRecord topic = topics.byResourceName(request.getTopicResourceName());
    int level = account.equals(topic.ownerId()) ? Permission.ADMIN.getValue()
        : topic.acl().getOrDefault(account, Permission.NONE.getValue());
    return new GetPermissionResponse(level);
  }

  /** The owner (ADMIN) and every grant, as describeTopic and listPermission answer it. */
  private static Map<String, Integer> aclOf(TopicRecord topic) {
    Map<String, Integer> acl = new TreeMap<>(topic.acl());
    if (topic.ownerId() != null) acl.put(topic.ownerId(), Permission.ADMIN.getValue());
    return acl;
  }

  /** The account a grantee names: type DEVELOPER (or unset) and an account id. */
  private static String grantee(Grantee grant) throws GalaxyTalosException {
    if (grant == null) throw TalosErrors.invalidParams("grant is missing");
    if (grant.isSetType() && grant.getType() != GrantType.DEVELOPER) {
      throw TalosErrors.invalidParams("grantee type " + grant.getType() + " is not supported; grant to an account"
          + " with type DEVELOPER and its account id as identifier");
    }
    String account = grant.getIdentifier();
    if (account == null || !CredentialServiceHandler.ACCOUNT_ID.matcher(account).matches()) {
      throw TalosErrors.invalidParams("grantee identifier '" + account + "' is not an account id (1..64"
          + " characters of A-Z a-z 0-9 . _ -)");
    }
    return account;
  }

  private interface Change {
    TopicRecord apply(TopicRecord current) throws GalaxyTalosException;
  }

  /** Compare-and-set of the topic's record, retried on a concurrent change. */
  private void update(TopicTalosResourceName trn, Change change) throws GalaxyTalosException {
    for (int attempt = 0; ; attempt++) {
      TopicRecord current = topics.byResourceName(trn);
      if (metadata.replaceTopic(current, change.apply(current))) return;
      if (attempt >= 10) {
        throw TalosErrors.of(ErrorCode.OPERATION_FAILED, "topic '" + current.name()
            + "' is being changed concurrently; retry");
      }
    }
  }

  // ---- not offered yet ----------------------------------------------------------------------

  @Override
  public void addSubResourceName(AddSubResourceNameRequest request) throws GalaxyTalosException {
    throw notSupported("sub-resource names");
  }
}
