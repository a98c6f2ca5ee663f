package io.talos.server.service;

import io.talos.common.errors.TalosErrors;
import io.talos.server.metadata.MetadataStore;
import io.talos.server.metadata.PartitionLock;
import io.talos.server.metadata.TopicRecord;
import io.talos.thrift.CheckPoint;
import io.talos.thrift.ConsumeUnit;
import io.talos.thrift.ConsumerGroupInfo;
import io.talos.thrift.ListConsumerGroupsRequest;
import io.talos.thrift.ListConsumerGroupsResponse;
import io.talos.thrift.TopicTalosResourceName;
import io.talos.thrift.ConsumerService;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.LockPartitionRequest;
import io.talos.thrift.LockPartitionResponse;
import io.talos.thrift.LockWorkerRequest;
import io.talos.thrift.LockWorkerResponse;
import io.talos.thrift.QueryOffsetRequest;
import io.talos.thrift.QueryOffsetResponse;
import io.talos.thrift.QueryWorkerRequest;
import io.talos.thrift.QueryWorkerResponse;
import io.talos.thrift.RenewRequest;
import io.talos.thrift.RenewResponse;
import io.talos.thrift.UnlockPartitionRequest;
import io.talos.thrift.UpdateOffsetRequest;
import io.talos.thrift.UpdateOffsetResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * ConsumerService: consumer groups as the Talos SDK's TalosConsumer drives them. The server owns
 * the truth: a worker's registration and its partition locks live in the metadata store and
 * expire {@code lockTtlMs} after their last renewal, judged by the metadata store's own time
 * ({@link MetadataStore#timeMs}), never by this node's clock: nodes of a cluster whose clocks
 * disagree still agree on every lock. Offsets are committed only by the worker holding a live
 * lock on the partition, under the lock's fencing token.
 *
 * <p><b>Fencing without a token on the wire.</b> SDK 2.0.2 sends no token with updateOffset, so
 * the token is derived here: the one of the lock record the worker holds when the commit is read,
 * and the store commits only if the lock still has that holder and token (one atomic
 * conditional write). A commit of a worker whose lock was taken over is refused with
 * LOCK_VALUE_NOT_EXPECTED naming the new holder and token, whenever it arrives. What a derived
 * token cannot tell: a commit sent before a takeover that arrives only after the same worker took
 * the lock back (a newer token) is accepted, as the worker then holds the lock.
 *
 * <p>Worker registrations and partition locks are keyed by the topic's resource name, so they
 * never leak into a re-created topic of the same name. Thread-safe: every state change is one
 * atomic metadata-store operation.
 */
public final class ConsumerServiceHandler extends BaseServiceHandler implements ConsumerService.Iface {
  private final Topics topics;
  private final MetadataStore metadata;
  private final long lockTtlMs;

  public ConsumerServiceHandler(Topics topics, long lockTtlMs) {
    this.topics = topics;
    this.metadata = topics.metadata();
    this.lockTtlMs = lockTtlMs;
  }

  @Override
  public LockWorkerResponse lockWorker(LockWorkerRequest request) throws GalaxyTalosException {
    ConsumeUnit unit = unit(request == null ? null : request.getConsumeUnit());
    TopicRecord topic = topics.byResourceName(unit.getTopicTalosResourceName());
    metadata.registerWorker(unit.getConsumerGroup(), topic.resourceName(), unit.getWorkerId(), metadata.timeMs());
    return new LockWorkerResponse(true);
  }

  /**
   * Live workers of the group, each with the partitions it holds live locks on (possibly none:
   * the SDK balances by the number of live workers).
   */
  @Override
  public QueryWorkerResponse queryWorker(QueryWorkerRequest request) throws GalaxyTalosException {
    if (request == null) throw TalosErrors.invalidParams("request is missing");
    checkGroup(request.getConsumerGroup());
    TopicRecord topic = topics.byResourceName(request.getTopicTalosResourceName());
    long now = metadata.timeMs();
    Map<String, List<Integer>> workers = new TreeMap<>();
    metadata.workers(request.getConsumerGroup(), topic.resourceName()).forEach((worker, renewed) -> {
      if (renewed + lockTtlMs > now) workers.put(worker, new ArrayList<>());
    });
    for (PartitionLock lock : metadata.partitionLocks(request.getConsumerGroup(), topic.resourceName()).values()) {
      List<Integer> held = workers.get(lock.workerId());
      if (held != null && !lock.expired(now, lockTtlMs) && lock.partitionId() < topic.partitionCount()) {
        held.add(lock.partitionId());
      }
    }
    workers.values().forEach(l -> l.sort(null));
    return new QueryWorkerResponse(workers);
  }

  @Override
  public LockPartitionResponse lockPartition(LockPartitionRequest request) throws GalaxyTalosException {
    ConsumeUnit unit = unit(request == null ? null : request.getConsumeUnit());
    TopicRecord topic = topics.byResourceName(unit.getTopicTalosResourceName());
    long now = metadata.timeMs();
    List<Integer> success = new ArrayList<>();
    List<Integer> failed = new ArrayList<>();
    for (int p : partitions(unit)) {
      boolean ok = p >= 0 && p < topic.partitionCount() && metadata.lockPartition(unit.getConsumerGroup(),
          topic.resourceName(), p, unit.getWorkerId(), now, lockTtlMs);
      (ok ? success : failed).add(p);
    }
    return new LockPartitionResponse(success, failed);
  }

  @Override
  public void unlockPartition(UnlockPartitionRequest request) throws GalaxyTalosException {
    ConsumeUnit unit = unit(request == null ? null : request.getConsumeUnit());
    TopicRecord topic = topics.byResourceName(unit.getTopicTalosResourceName());
    for (int p : partitions(unit)) {
      metadata.unlockPartition(unit.getConsumerGroup(), topic.resourceName(), p, unit.getWorkerId());
    }
  }

  /**
   * Refreshes the worker's registration and each listed partition lock. A lock that another
   * worker took after it expired is reported in failedPartitionList; the SDK then stops reading
   * that partition.
   */
  @Override
  public RenewResponse renew(RenewRequest request) throws GalaxyTalosException {
    ConsumeUnit unit = unit(request == null ? null : request.getConsumeUnit());
    TopicRecord topic = topics.byResourceName(unit.getTopicTalosResourceName());
    long now = metadata.timeMs();
    metadata.registerWorker(unit.getConsumerGroup(), topic.resourceName(), unit.getWorkerId(), now);
    List<Integer> failed = new ArrayList<>();
    for (int p : partitions(unit)) {
      if (p < 0 || p >= topic.partitionCount() || !metadata.lockPartition(unit.getConsumerGroup(),
          topic.resourceName(), p, unit.getWorkerId(), now, lockTtlMs)) {
        failed.add(p);
      }
    }
    return new RenewResponse(true, failed);
  }

  @Override
  public UpdateOffsetResponse updateOffset(UpdateOffsetRequest request) throws GalaxyTalosException {
    CheckPoint cp = request == null ? null : request.getCheckpoint();
    if (cp == null) throw TalosErrors.invalidParams("checkpoint is missing");
    checkGroup(cp.getConsumerGroup());
    checkWorker(cp.getWorkerId());
    TopicRecord topic = topics.partition(cp.getTopicAndPartition());
    if (cp.getMsgOffset() < -1) {
      throw TalosErrors.invalidParams("msgOffset " + cp.getMsgOffset() + " is invalid; offsets are >= -1");
    }
    String group = cp.getConsumerGroup();
    int partition = cp.getTopicAndPartition().getPartitionId();
    long now = metadata.timeMs();
    PartitionLock held = metadata.partitionLocks(group, topic.resourceName()).get(partition);
    if (held != null && held.workerId().equals(cp.getWorkerId()) && !held.expired(now, lockTtlMs)
        && metadata.commitOffset(group, topic.resourceName(), partition, cp.getWorkerId(),
            held.fencingToken(), cp.getMsgOffset(), now, lockTtlMs)) {
      return new UpdateOffsetResponse(true);
    }
    // Refused. Read the lock again to say why (the decision above was atomic; this is the message).
    PartitionLock current = metadata.partitionLocks(group, topic.resourceName()).get(partition);
    if (current != null && (!current.workerId().equals(cp.getWorkerId())
        || (held != null && current.fencingToken() != held.fencingToken()))) {
      throw TalosErrors.of(ErrorCode.LOCK_VALUE_NOT_EXPECTED, "updateOffset of partition " + partition
          + " of '" + topic.name() + "' for consumer group '" + group + "' refused: the partition lock is held by worker '"
          + current.workerId() + "' under fencing token " + current.fencingToken() + "; worker '" + cp.getWorkerId() + "'"
          + (held != null && held.workerId().equals(cp.getWorkerId())
              ? " held it under token " + held.fencingToken() + " and was superseded (its lock expired and was taken over)"
              : " does not hold it (if it held it before, its lock expired and was taken over: a superseded"
                  + " holder's commits are refused)")
          + ". Lock the partition again before committing.");
    }
    // No live lock of this worker and no other holder: the SDK's answer for a lost lock.
    return new UpdateOffsetResponse(false);
  }

  /** The committed offset (the last message the group finished), or -1 when none is committed. */
  @Override
  public QueryOffsetResponse queryOffset(QueryOffsetRequest request) throws GalaxyTalosException {
    if (request == null) throw TalosErrors.invalidParams("request is missing");
    checkGroup(request.getConsumerGroup());
    TopicRecord topic = topics.partition(request.getTopicAndPartition());
    return new QueryOffsetResponse(metadata.committedOffset(request.getConsumerGroup(), topic.resourceName(),
        request.getTopicAndPartition().getPartitionId()).orElse(-1));
  }

  /**
   * Talos extension: the consumer groups of one topic (topicName set) or of every topic, sorted by
   * topic name then group. A group is listed while the store holds any of its state for the
   * topic: a worker registration, a partition lock or a committed offset (expired ones
   * included: offsets outlive their workers).
   */
  @Override
  public ListConsumerGroupsResponse listConsumerGroups(ListConsumerGroupsRequest request) throws GalaxyTalosException {
    List<TopicRecord> scope = request != null && request.isSetTopicName()
        ? List.of(topics.byName(request.getTopicName())) : metadata.topics();
    List<ConsumerGroupInfo> groups = new ArrayList<>();
    for (TopicRecord topic : scope) {
      for (String group : metadata.consumerGroups(topic.resourceName())) {
        groups.add(new ConsumerGroupInfo(group, topic.name(), new TopicTalosResourceName(topic.resourceName())));
      }
    }
    return new ListConsumerGroupsResponse(groups);
  }

  private static ConsumeUnit unit(ConsumeUnit unit) throws GalaxyTalosException {
    if (unit == null) throw TalosErrors.invalidParams("consumeUnit is missing");
    checkGroup(unit.getConsumerGroup());
    checkWorker(unit.getWorkerId());
    return unit;
  }

  private static List<Integer> partitions(ConsumeUnit unit) {
    return unit.getPartitionIdList() == null ? List.of() : unit.getPartitionIdList();
  }

  private static void checkGroup(String group) throws GalaxyTalosException {
    if (group == null || group.isEmpty() || group.length() > 256) {
      throw TalosErrors.invalidParams("consumerGroup must be 1..256 characters");
    }
  }

  private static void checkWorker(String worker) throws GalaxyTalosException {
    if (worker == null || worker.isEmpty() || worker.length() > 256) {
      throw TalosErrors.invalidParams("workerId must be 1..256 characters");
    }
  }
}
