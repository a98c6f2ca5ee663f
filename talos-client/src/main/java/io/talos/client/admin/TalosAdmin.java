package io.talos.client.admin;

import io.talos.client.TalosClient;
import io.talos.client.TalosException;
import io.talos.client.internals.TalosRpc;
import io.talos.common.TopicNames;
import io.talos.thrift.ChangeTopicAttributeRequest;
import io.talos.thrift.CreateTopicRequest;
import io.talos.thrift.DeleteTopicRequest;
import io.talos.thrift.DescribeTopicRequest;
import io.talos.thrift.DescribeTopicResponse;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GetPartitionOffsetRequest;
import io.talos.thrift.GetTopicOffsetRequest;
import io.talos.thrift.OffsetInfo;
import io.talos.thrift.PartitionState;
import io.talos.thrift.ResetPartitionRequest;
import io.talos.thrift.ResetPartitionResponse;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicAttribute;
import io.talos.thrift.TopicInfo;
import io.talos.thrift.TopicState;
import io.talos.thrift.TopicTalosResourceName;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;

/**
 * Creates, inspects, changes and deletes topics. Topics are named by their plain name; the
 * methods that need the topic's resource name look it up with {@link #describeTopic} first, so
 * they always act on the topic that currently has that name.
 *
 * <p>Every method sends one or two requests and throws {@link TalosException} when the server
 * refuses (e.g. {@code TOPIC_EXIST}, {@code TOPIC_NOT_EXIST}, {@code PERMISSION_DENIED_ERROR})
 * or cannot be reached, and {@link IllegalArgumentException} for arguments no server accepts.
 *
 * <p>Thread-safe. Obtain one from {@link TalosClient#admin()}.
 */
public final class TalosAdmin {
  private final TalosRpc rpc;

  /** For {@link TalosClient}; applications use {@link TalosClient#admin()}. */
  public TalosAdmin(TalosRpc rpc) {
    this.rpc = rpc;
  }

  /** Creates a topic with the server's default retention. */
  public TopicListing createTopic(String name, int partitionCount) {
    return createTopic(name, partitionCount, OptionalInt.empty());
  }

  /**
   * Creates a topic.
   *
   * @param name 1 to 80 characters of {@code [a-zA-Z0-9_-]}, not starting with '_' or '-', not
   *     ending with '_'
   * @param partitionCount at least 1
   * @param retentionSecs how long to keep messages; empty for the server's default
   * @return the new topic's identity, including its resource name
   * @throws TalosException {@code TOPIC_EXIST} if a topic of that name exists
   */
  public TopicListing createTopic(String name, int partitionCount, OptionalInt retentionSecs) {
    checkName(name);
    if (partitionCount < 1) {
      throw new IllegalArgumentException("partitionCount must be >= 1, got " + partitionCount);
    }
    TopicAttribute attribute = new TopicAttribute().setPartitionNumber(partitionCount);
    if (retentionSecs.isPresent()) {
      if (retentionSecs.getAsInt() < 1) {
        throw new IllegalArgumentException("retentionSecs must be >= 1, got "
            + retentionSecs.getAsInt());
      }
      attribute.setMessageRetentionSecs(retentionSecs.getAsInt());
    }
    CreateTopicRequest request = new CreateTopicRequest(name, attribute);
    TopicInfo info = rpc.topic(c -> c.createTopic(request)).getTopicInfo();
    return listing(info);
  }

  /**
   * Deletes the topic that currently has this name, with all its messages.
   *
   * @throws TalosException {@code TOPIC_NOT_EXIST} if there is none
   */
  public void deleteTopic(String name) {
    String resourceName = describeTopic(name).resourceName();
    DeleteTopicRequest request =
        new DeleteTopicRequest(new TopicTalosResourceName(resourceName));
    rpc.topic(c -> {
      c.deleteTopic(request);
      return null;
    });
  }

  /**
   * Resets a partition whose data is missing (it answers {@code HDFS_FILE_NOT_EXIST}): accepts that
   * its offsets below the recorded next offset are lost; it continues at that offset. A partition
   * whose data is intact is left as it is. Needs the admin credential.
   *
   * @return the partition's offsets after the reset
   * @throws TalosException {@code PERMISSION_DENIED_ERROR} without the admin credential, {@code
   *     TOPIC_NOT_EXIST} or {@code PARTITION_NOT_EXIST} if there is no such partition
   */
  public PartitionOffsets resetPartition(String name, int partitionId) {
    checkName(name);
    ResetPartitionResponse r = rpc.topic(c -> c.resetPartition(new ResetPartitionRequest(name, partitionId)));
    return new PartitionOffsets(partitionId, r.getStartOffset(), r.getNextOffset() - 1, null, null);
  }

  // ---- credentials (admin credential only; PERMISSION_DENIED_ERROR otherwise) ----------------

  /**
   * Creates a credential for an account that has no active one.
   *
   * @param accountId 1..64 characters of {@code A-Z a-z 0-9 . _ -}; "admin" is reserved
   * @return the credential with its secret, which the server never shows again
   */
  public IssuedCredential createCredential(String accountId) {
    io.talos.thrift.CreateCredentialResponse r = rpc.credential(c -> c.createCredential(
        new io.talos.thrift.CreateCredentialRequest(accountId)));
    return new IssuedCredential(listing(r.getCredential()), r.getSecretKey());
  }

  /** Every credential, revoked ones included, sorted by key id. */
  public List<CredentialListing> listCredentials() {
    List<CredentialListing> result = new ArrayList<>();
    for (io.talos.thrift.CredentialInfo info : rpc.credential(c -> c.listCredentials()).getCredentials()) {
      result.add(listing(info));
    }
    result.sort(Comparator.comparing(CredentialListing::secretKeyId));
    return result;
  }

  /**
   * Gives the credential a new secret; the current one stays valid for {@code graceMs} (empty:
   * the server's auth.credential.rotation.grace.ms).
   */
  public IssuedCredential rotateCredential(String secretKeyId, java.util.OptionalLong graceMs) {
    io.talos.thrift.RotateCredentialRequest request = new io.talos.thrift.RotateCredentialRequest(secretKeyId);
    if (graceMs.isPresent()) request.setGraceMs(graceMs.getAsLong());
    io.talos.thrift.RotateCredentialResponse r = rpc.credential(c -> c.rotateCredential(request));
    return new IssuedCredential(listing(r.getCredential()), r.getSecretKey());
  }

  /** Revokes the credential for good (idempotent); the admin credential cannot be revoked. */
  public CredentialListing revokeCredential(String secretKeyId) {
    return listing(rpc.credential(c -> c.revokeCredential(new io.talos.thrift.RevokeCredentialRequest(secretKeyId)))
        .getCredential());
  }

  private static CredentialListing listing(io.talos.thrift.CredentialInfo i) {
    return new CredentialListing(i.getSecretKeyId(), i.getAccountId(), i.isAdmin(), i.getCreatedMs(),
        i.getRotatedMs(), i.getPreviousSecretExpiresMs(), i.getRevokedMs());
  }

  // ---- permissions (ACLs) --------------------------------------------------------------------

  /**
   * Grants {@code accountId} the SDK permission level {@code level} (e.g. {@code
   * GET_MESSAGE_AND_DESCRIBE_TOPIC}) on the topic, replacing its previous grant.
   *
   * @throws TalosException {@code PERMISSION_DENIED_ERROR} without CHANGE_PERMISSION on the topic
   */
  public void setPermission(String topic, String accountId, io.talos.thrift.Permission level) {
    io.talos.thrift.TopicTalosResourceName trn = new TopicTalosResourceName(describeTopic(topic).resourceName());
    rpc.topic(c -> {
      c.setPermission(new io.talos.thrift.SetPermissionRequest(trn, grantee(accountId), level));
      return null;
    });
  }

  /** Takes the account's grant on the topic away (nothing happens if it had none). */
  public void revokePermission(String topic, String accountId) {
    io.talos.thrift.TopicTalosResourceName trn = new TopicTalosResourceName(describeTopic(topic).resourceName());
    rpc.topic(c -> {
      c.revokePermission(new io.talos.thrift.RevokePermissionRequest(trn, grantee(accountId)));
      return null;
    });
  }

  /** Account → permission value on the topic, the owner included (ADMIN, 31). */
  public java.util.Map<String, Integer> listPermissions(String topic) {
    io.talos.thrift.TopicTalosResourceName trn = new TopicTalosResourceName(describeTopic(topic).resourceName());
    return new java.util.TreeMap<>(rpc.topic(c -> c.listPermission(new io.talos.thrift.ListPermissionRequest(trn)))
        .getPermissions());
  }

  private static io.talos.thrift.Grantee grantee(String accountId) {
    return new io.talos.thrift.Grantee().setType(io.talos.thrift.GrantType.DEVELOPER).setIdentifier(accountId);
  }

  /** @throws TalosException {@code TOPIC_NOT_EXIST} if there is no such topic */
  public TopicDescription describeTopic(String name) {
    checkName(name);
    DescribeTopicResponse r = rpc.topic(c -> c.describeTopic(new DescribeTopicRequest(name)));
    TopicAttribute attribute = r.getTopicAttribute();
    TopicState state = r.getTopicState();
    List<PartitionDescription> partitions = new ArrayList<>();
    if (state.getPartitionStates() != null) {
      for (PartitionState p : state.getPartitionStates()) {
        partitions.add(new PartitionDescription(p.getPartitionId(), p.getStartOffset(),
            p.getLastestOffset(), p.getMessageNumber(), p.getMessageBytes()));
      }
      partitions.sort(Comparator.comparingInt(PartitionDescription::partitionId));
    }
    TopicInfo info = r.getTopicInfo();
    return new TopicDescription(info.getTopicName(),
        info.getTopicTalosResourceName().getTopicTalosResourceName(), info.getOwnerId(),
        attribute.isSetPartitionNumber() ? attribute.getPartitionNumber() : partitions.size(),
        attribute.isSetMessageRetentionSecs()
            ? OptionalInt.of(attribute.getMessageRetentionSecs()) : OptionalInt.empty(),
        attribute.getAttributes() == null ? Map.of() : attribute.getAttributes(),
        status(state.getTopicStatus()), state.getCreateTimestamp(), state.getMessageNumber(),
        state.getMessageBytes(), partitions);
  }

  /** Every topic the caller may see, in the server's order. */
  public List<TopicListing> listTopics() {
    List<TopicInfo> infos = rpc.topic(c -> c.listTopics()).getTopicInfos();
    List<TopicListing> out = new ArrayList<>(infos == null ? 0 : infos.size());
    if (infos != null) {
      for (TopicInfo info : infos) out.add(listing(info));
    }
    return out;
  }

  /**
   * Changes a topic's partition count and/or retention; the other attributes stay as they are.
   *
   * @throws TalosException e.g. {@code INVALID_TOPIC_PARAMS} when the server refuses the change
   *     (fewer partitions than now)
   */
  public void changeTopicAttribute(String name, TopicAttributeChange change) {
    DescribeTopicResponse current =
        rpc.topic(c -> c.describeTopic(new DescribeTopicRequest(checkName(name))));
    TopicAttribute attribute = current.getTopicAttribute().deepCopy();
    change.partitionCount().ifPresent(attribute::setPartitionNumber);
    change.retentionSecs().ifPresent(attribute::setMessageRetentionSecs);
    ChangeTopicAttributeRequest request = new ChangeTopicAttributeRequest(
        current.getTopicInfo().getTopicTalosResourceName(), attribute);
    rpc.topic(c -> {
      c.changeTopicAttribute(request);
      return null;
    });
  }

  /** The offset range of every partition, by partition id. */
  public List<PartitionOffsets> getTopicOffsets(String name) {
    String resourceName = describeTopic(name).resourceName();
    GetTopicOffsetRequest request =
        new GetTopicOffsetRequest(new TopicTalosResourceName(resourceName));
    List<OffsetInfo> infos = rpc.message(c -> c.getTopicOffset(request)).getOffsetInfoList();
    List<PartitionOffsets> out = new ArrayList<>();
    if (infos != null) {
      for (OffsetInfo info : infos) out.add(offsets(info));
    }
    out.sort(Comparator.comparingInt(PartitionOffsets::partitionId));
    return out;
  }

  /**
   * The offset range of one partition.
   *
   * @throws TalosException when the server cannot report it, e.g. {@code PARTITION_NOT_EXIST}
   */
  public PartitionOffsets getPartitionOffset(String name, int partitionId) {
    if (partitionId < 0) {
      throw new IllegalArgumentException("partition id must be >= 0, got " + partitionId);
    }
    String resourceName = describeTopic(name).resourceName();
    GetPartitionOffsetRequest request = new GetPartitionOffsetRequest(
        new TopicAndPartition(name, new TopicTalosResourceName(resourceName), partitionId));
    PartitionOffsets offsets =
        offsets(rpc.message(c -> c.getPartitionOffset(request)).getOffsetInfo());
    if (offsets.hasError()) throw new TalosException(offsets.errorCode(), offsets.errorMessage());
    return offsets;
  }

  /**
   * The offset of the partition's first message appended at or after {@code timestampMs} (epoch
   * ms, the server's append time); the partition's next offset when every retained message is
   * older. A Talos server extension: a server of the original protocol answers that it does not
   * know the method.
   *
   * @throws TalosException e.g. {@code PARTITION_NOT_EXIST}
   */
  public long offsetForTimestamp(String name, int partitionId, long timestampMs) {
    if (partitionId < 0) throw new IllegalArgumentException("partition id must be >= 0, got " + partitionId);
    if (timestampMs < 0) throw new IllegalArgumentException("timestamp must be >= 0 (epoch ms), got " + timestampMs);
    String resourceName = describeTopic(name).resourceName();
    io.talos.thrift.GetOffsetForTimestampRequest request = new io.talos.thrift.GetOffsetForTimestampRequest(
        new TopicAndPartition(name, new TopicTalosResourceName(resourceName), partitionId), timestampMs);
    return rpc.message(c -> c.getOffsetForTimestamp(request)).getMessageOffset();
  }

  private static PartitionOffsets offsets(OffsetInfo info) {
    boolean failed = info.isSetErrorCode() && info.getErrorCode() != ErrorCode.NO_ERROR;
    long start = info.isSetStartOffset() ? info.getStartOffset() : 0;
    long end = info.isSetEndOffset() ? info.getEndOffset() : start - 1;
    return new PartitionOffsets(info.getPartitionId(), start, end,
        failed ? info.getErrorCode() : null,
        failed ? (info.getErrorMsg() == null ? "(no message)" : info.getErrorMsg()) : null);
  }

  private static TopicListing listing(TopicInfo info) {
    return new TopicListing(info.getTopicName(),
        info.getTopicTalosResourceName().getTopicTalosResourceName(), info.getOwnerId());
  }

  private static TopicStatus status(io.talos.thrift.TopicStatus wire) {
    if (wire == null) return TopicStatus.UNKNOWN;
    switch (wire) {
      case CREATING: return TopicStatus.CREATING;
      case ACTIVE: return TopicStatus.ACTIVE;
      case DELETING: return TopicStatus.DELETING;
      case DELETED: return TopicStatus.DELETED;
      default: return TopicStatus.UNKNOWN;
    }
  }

  private static String checkName(String name) {
    String problem = TopicNames.validateName(name);
    if (problem != null) throw new IllegalArgumentException(problem);
    return name;
  }
}
