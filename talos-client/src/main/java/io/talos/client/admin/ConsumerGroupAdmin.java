package io.talos.client.admin;

import io.talos.client.TalosException;
import io.talos.client.internals.TalosRpc;
import io.talos.thrift.CheckPoint;
import io.talos.thrift.ConsumeUnit;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.LockPartitionRequest;
import io.talos.thrift.LockPartitionResponse;
import io.talos.thrift.QueryOffsetRequest;
import io.talos.thrift.QueryWorkerRequest;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicTalosResourceName;
import io.talos.thrift.UnlockPartitionRequest;
import io.talos.thrift.UpdateOffsetRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Inspects and changes a consumer group's state on one topic with the group protocol's own
 * calls (queryWorker, queryOffset, lockPartition, updateOffset, unlockPartition), and lists
 * groups with the server extension listConsumerGroups.
 *
 * <p>Thread-safe.
 */
public final class ConsumerGroupAdmin {
  private final TalosRpc rpc;
  private final TalosAdmin admin;

  public ConsumerGroupAdmin(TalosRpc rpc, TalosAdmin admin) {
    this.rpc = rpc;
    this.admin = admin;
  }

  /**
   * Every partition of the topic with its owner, committed offset, end offset and lag.
   *
   * @throws TalosException {@code TOPIC_NOT_EXIST}
   */
  public List<GroupPartitionState> describe(String topicName, String group) {
    TopicDescription topic = admin.describeTopic(topicName);
    TopicTalosResourceName rn = new TopicTalosResourceName(topic.resourceName());
    Map<String, List<Integer>> workers = rpc.consumer(c -> c.queryWorker(
        new QueryWorkerRequest(group, rn))).getWorkerMap();
    Map<Integer, String> owners = new TreeMap<>();
    workers.forEach((w, ps) -> ps.forEach(p -> owners.put(p, w)));
    Map<Integer, PartitionOffsets> offsets = new TreeMap<>();
    for (PartitionOffsets o : admin.getTopicOffsets(topicName)) offsets.put(o.partitionId(), o);
    List<GroupPartitionState> out = new ArrayList<>();
    for (int p = 0; p < topic.partitionCount(); p++) {
      TopicAndPartition tp = new TopicAndPartition(topic.name(), rn, p);
      long committed = rpc.consumer(c -> c.queryOffset(new QueryOffsetRequest(group, tp)))
          .getMsgOffset();
      PartitionOffsets o = offsets.get(p);
      long end = o == null || o.hasError() ? -1 : o.endOffset();
      long lag = o == null || o.hasError() ? 0
          : Math.max(0, o.endOffset() - Math.max(committed, o.startOffset() - 1));
      out.add(new GroupPartitionState(p, owners.get(p), committed, end, lag));
    }
    return out;
  }

  /** A consumer group of a topic, as {@link #list} reports it. */
  public record GroupListing(String topicName, String group) {}

  /**
   * The consumer groups the server holds state for (a registered worker, a lock or a committed
   * offset), of one topic or (topicName null) of every topic, sorted by topic then group. A Talos
   * server extension: a server of the original protocol answers that it does not know the method.
   *
   * @throws TalosException {@code TOPIC_NOT_EXIST} for an unknown topic
   */
  public List<GroupListing> list(String topicName) {
    io.talos.thrift.ListConsumerGroupsRequest request = new io.talos.thrift.ListConsumerGroupsRequest();
    if (topicName != null) request.setTopicName(topicName);
    List<GroupListing> out = new ArrayList<>();
    for (io.talos.thrift.ConsumerGroupInfo g : rpc.consumer(c -> c.listConsumerGroups(request)).getGroups()) {
      out.add(new GroupListing(g.getTopicName(), g.getConsumerGroup()));
    }
    return out;
  }

  /** The live workers of the group and the partitions each holds. */
  public Map<String, List<Integer>> workers(String topicName, String group) {
    TopicDescription topic = admin.describeTopic(topicName);
    return new TreeMap<>(rpc.consumer(c -> c.queryWorker(new QueryWorkerRequest(group,
        new TopicTalosResourceName(topic.resourceName())))).getWorkerMap());
  }

  /**
   * Sets the group's committed offsets: {@code committed.get(p)} is the last finished message of
   * partition p, so the group resumes at the next one (-1: from the start). Takes each
   * partition's lock for the moment of the change, as a worker would, so it fails without
   * changing anything while a live member of the group holds one of them.
   *
   * @throws TalosException {@code LOCK_EXIST} naming the partitions held by live members
   */
  public void resetOffsets(String topicName, String group, Map<Integer, Long> committed) {
    TopicDescription topic = admin.describeTopic(topicName);
    TopicTalosResourceName rn = new TopicTalosResourceName(topic.resourceName());
    for (Map.Entry<Integer, Long> e : committed.entrySet()) {
      if (e.getKey() < 0 || e.getKey() >= topic.partitionCount()) {
        throw new TalosException(ErrorCode.PARTITION_NOT_EXIST, "topic '" + topicName + "' has no partition " + e.getKey());
      }
      if (e.getValue() < -1) throw new IllegalArgumentException("offset " + e.getValue() + " of partition " + e.getKey() + " is below -1");
    }
    String worker = "talos-offset-reset-" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16);
    ConsumeUnit unit = new ConsumeUnit(group, rn, new ArrayList<>(committed.keySet()), worker);
    LockPartitionResponse locked = rpc.consumer(c -> c.lockPartition(new LockPartitionRequest(unit)));
    try {
      if (locked.getFailedPartitions() != null && !locked.getFailedPartitions().isEmpty()) {
        throw new TalosException(ErrorCode.LOCK_EXIST, "group '" + group + "' has live members"
            + " holding partitions " + locked.getFailedPartitions() + " of '" + topicName
            + "'; stop its consumers (and wait for their locks to expire) before resetting offsets");
      }
      for (Map.Entry<Integer, Long> e : committed.entrySet()) {
        TopicAndPartition tp = new TopicAndPartition(topic.name(), rn, e.getKey());
        boolean ok = rpc.consumer(c -> c.updateOffset(new UpdateOffsetRequest(
            new CheckPoint(group, tp, e.getValue(), worker)))).isSuccess();
        if (!ok) {
          throw new TalosException(ErrorCode.LOCK_EXIST, "partition " + e.getKey()
              + " was taken by another worker during the reset");
        }
      }
    } finally {
      ConsumeUnit release = new ConsumeUnit(group, rn,
          new ArrayList<>(locked.getSuccessPartitions()), worker);
      rpc.consumer(c -> {
        c.unlockPartition(new UnlockPartitionRequest(release));
        return null;
      });
    }
  }
}
