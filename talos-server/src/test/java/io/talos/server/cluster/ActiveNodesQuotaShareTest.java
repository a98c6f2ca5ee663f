package io.talos.server.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.server.ManualClock;
import io.talos.server.metadata.Credential;
import io.talos.server.metadata.MetadataStore;
import io.talos.server.metadata.MvStoreMetadataStore;
import io.talos.server.metadata.PartitionOwner;
import io.talos.server.metadata.PartitionOwnerEpochs;
import io.talos.server.metadata.RateQuota;
import io.talos.server.metadata.TopicRecord;
import io.talos.server.quota.Throttle;
import io.talos.server.storage.LogConfig;
import io.talos.server.storage.PartitionLogs;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node's share of user and topic quotas in cluster mode: one over the ACTIVE members of the
 * membership, applied by {@link ClusterNode} on every view and used by the {@link Throttle}.
 */
class ActiveNodesQuotaShareTest {
  private static NodeInfo node(String id, NodeState state) {
    return new NodeInfo(id, "http://" + id, id, 0, state, 1);
  }

  private static MembershipView view(long version, NodeInfo... nodes) {
    return new MembershipView(version, List.of(nodes));
  }

  @Test
  void shareIsOneOverTheActiveMembers() {
    ActiveNodesQuotaShare share = new ActiveNodesQuotaShare();
    assertEquals(1.0, share.fraction(), "before the first view: the whole quota");
    share.apply(MembershipView.EMPTY);
    assertEquals(1.0, share.fraction(), "no member yet");
    share.apply(view(1, node("a", NodeState.ACTIVE)));
    assertEquals(1.0, share.fraction());
    share.apply(view(2, node("a", NodeState.ACTIVE), node("b", NodeState.ACTIVE), node("c", NodeState.ACTIVE)));
    assertEquals(1.0 / 3, share.fraction(), 1e-12);
    assertEquals(3, share.activeNodes());
    share.apply(view(3, node("a", NodeState.ACTIVE), node("b", NodeState.DRAINING), node("c", NodeState.ACTIVE),
        node("d", NodeState.ACTIVE)));
    assertEquals(1.0 / 3, share.fraction(), 1e-12, "a DRAINING member serves nothing and is not counted");
    share.apply(view(4, node("a", NodeState.ACTIVE), node("c", NodeState.ACTIVE)));
    assertEquals(0.5, share.fraction(), 1e-12, "a member left");
    share.apply(view(5, node("a", NodeState.DRAINING)));
    assertEquals(1.0, share.fraction(), "no ACTIVE member: the whole quota");
  }

  @Test
  void clusterNodeFeedsTheShareFromEachMembershipView(@TempDir Path dir) throws Exception {
    ManualClock clock = new ManualClock(1_000);
    PartitionOwnerEpochs epochs = new PartitionOwnerEpochs() {
      @Override
      public PartitionOwner claimPartitionOwner(String topicResourceName, int partitionId, String nodeId) {
        throw new AssertionError("no partition is claimed: the store has no topic");
      }

      @Override
      public Optional<PartitionOwner> partitionOwner(String topicResourceName, int partitionId) {
        return Optional.empty();
      }
    };
    ClusterSettings settings = new ClusterSettings("a", 1, "http://a", "unused:2181", "/talos", 10_000, 0, 16, 1_000);
    try (MetadataStore store = MvStoreMetadataStore.open(dir.resolve("meta"));
        PartitionLogs logs = new PartitionLogs(FileSystem.getLocal(new Configuration()),
            new org.apache.hadoop.fs.Path(dir.resolve("data").toUri()), LogConfig.defaults(), clock);
        ClusterNode cluster = new ClusterNode(settings, node("a", NodeState.ACTIVE), epochs, logs, store, null, clock)) {
      cluster.viewChanged(view(7, node("a", NodeState.ACTIVE), node("b", NodeState.ACTIVE),
          node("c", NodeState.ACTIVE), node("d", NodeState.ACTIVE)));
      assertEquals(0.25, cluster.quotaShare().fraction(), 1e-12);
      assertEquals(0.25, cluster.status().get("quotaShare").asDouble(), 1e-12, "/ops/cluster shows it");
      cluster.viewChanged(view(9, node("a", NodeState.ACTIVE), node("b", NodeState.DRAINING)));
      assertEquals(1.0, cluster.quotaShare().fraction(), 1e-12, "b drains: a serves everything");
    }
  }

  @Test
  void throttleAdmitsTheShareOfAUserQuotaAndFollowsMembershipChanges(@TempDir Path dir) {
    AtomicLong nanos = new AtomicLong(1_000_000_000L);
    ActiveNodesQuotaShare share = new ActiveNodesQuotaShare();
    try (MetadataStore store = MvStoreMetadataStore.open(dir)) {
      long quota = 90_000; // bytes/s, cluster-wide
      store.putUserQuota("u", new RateQuota(-1, -1, -1, quota, -1, -1));
      Throttle throttle = new Throttle(new Throttle.Limits(0, 0, 1000, 500, 1000), share, nanos::get, store);
      Credential caller = new Credential("TK1", "s", "u", false);
      TopicRecord topic = new TopicRecord("t", "o#t#1", "o", 1, 3600, Map.of(), 0, 0);

      share.apply(view(1, node("a", NodeState.ACTIVE), node("b", NodeState.ACTIVE), node("c", NodeState.ACTIVE)));
      assertEquals(quota / 3.0, admittedRate(throttle, caller, topic, nanos), quota / 3.0 * 0.05,
          "three ACTIVE members: a third of the quota on this node");
      share.apply(view(2, node("a", NodeState.ACTIVE)));
      assertEquals(quota, admittedRate(throttle, caller, topic, nanos), quota * 0.05,
          "alone: the whole quota");
    }
  }

  /** Offers 2x the whole quota for 30 s in 1 kB puts; the rate admitted over the last 20 s. */
  private static double admittedRate(Throttle throttle, Credential caller, TopicRecord topic, AtomicLong nanos) {
    long admittedInWindow = 0;
    int perSecond = 180;
    for (int i = 0; i < 30 * perSecond; i++) {
      nanos.addAndGet(1_000_000_000L / perSecond);
      Throttle.Decision d = throttle.admitPut(caller, topic, 0, 1_000);
      if (!d.refused() && i >= 10 * perSecond) admittedInWindow += 1_000;
    }
    assertTrue(admittedInWindow > 0);
    return admittedInWindow / 20.0;
  }
}
