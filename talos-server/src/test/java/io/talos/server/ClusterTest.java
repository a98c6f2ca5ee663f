package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.server.cluster.MembershipView;
import io.talos.server.cluster.NodeInfo;
import io.talos.server.cluster.PartitionRouting;
import io.talos.server.frontend.PartitionKeys;
import io.talos.server.metadata.HBaseMetadataStore;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicTalosResourceName;
import io.talos.server.metadata.PartitionLock;
import io.talos.thrift.ConsumeUnit;
import io.talos.thrift.ConsumerService;
import io.talos.thrift.CheckPoint;
import io.talos.thrift.LockPartitionRequest;
import io.talos.thrift.LockWorkerRequest;
import io.talos.thrift.QueryWorkerRequest;
import io.talos.thrift.UpdateOffsetRequest;
import io.talos.thrift.QueryOffsetRequest;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseTestingUtility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three cluster nodes (TalosServers in this JVM) on one HBase mini cluster, its MiniDFSCluster
 * and its ZooKeeper: takeover after an owner dies under load, drain, fencing of an owner whose
 * epoch was superseded, topic changes seen by every node at once. Each test has its own HBase
 * namespace, storage root and ZooKeeper root.
 */
class ClusterTest {
  private static final Set<ErrorCode> RETRIABLE = Set.of(ErrorCode.PARTITION_NOT_SERVING,
      ErrorCode.HDFS_OPERATION_FAILED, ErrorCode.REQUEST_PROCESS_TIMEOUT, ErrorCode.HBASE_OPERATION_FAILED,
      ErrorCode.EXCESSIVE_PENDING_MESSAGE);
  private static final AtomicInteger CLUSTERS = new AtomicInteger();
  private static HBaseTestingUtility hbase;
  private static String zkQuorum;
  private static String hdfsUri;

  @BeforeAll
  static void startClusters() throws Exception {
    hbase = new HBaseTestingUtility();
    Configuration conf = hbase.getConfiguration();
    conf.setInt("hbase.master.info.port", -1);
    conf.setInt("hbase.regionserver.info.port", -1);
    hbase.startMiniCluster();
    zkQuorum = "127.0.0.1:" + hbase.getZkCluster().getClientPort();
    hdfsUri = hbase.getDFSCluster().getFileSystem().getUri().toString();
  }

  @AfterAll
  static void stopClusters() throws Exception {
    if (hbase != null) hbase.shutdownMiniCluster();
  }

  /** Three nodes of a new cluster, every one seeing all three. */
  private static List<TalosServer> startNodes(Path tmp, String... extra) throws Exception {
    return startNodes(tmp, List.of(Clock.systemUTC(), Clock.systemUTC(), Clock.systemUTC()), extra);
  }

  /** As {@link #startNodes(Path, String...)}, node i reading time from {@code clocks.get(i)}. */
  private static List<TalosServer> startNodes(Path tmp, List<Clock> clocks, String... extra) throws Exception {
    String name = "c" + CLUSTERS.incrementAndGet();
    List<TalosServer> nodes = new ArrayList<>();
    int count = clocks.size();
    for (int i = 0; i < count; i++) {
      List<String> kv = new ArrayList<>(List.of(ServerConfig.CLUSTER_ENABLED, "true",
          ServerConfig.CLUSTER_NODE_ID, "n" + i,
          ServerConfig.CLUSTER_ZOOKEEPER_ROOT, "/" + name,
          ServerConfig.METADATA_STORE, "hbase",
          ServerConfig.METADATA_HBASE_ZOOKEEPER_QUORUM, zkQuorum,
          ServerConfig.METADATA_HBASE_NAMESPACE, name,
          ServerConfig.STORAGE_ROOT_URI, hdfsUri + "/" + name,
          ServerConfig.STORAGE_LEASE_RECOVERY_TIMEOUT_MS, "30000",
          ServerConfig.CLUSTER_PEER_PORT, "0",
          ServerConfig.CLUSTER_PEER_HOST, "127.0.0.1",
          ServerConfig.CLUSTER_PEER_SECRET, "cluster-test-peer-secret",
          "hbase.client.retries.number", "3"));
      kv.addAll(List.of(extra));
      nodes.add(TalosServer.start(new ServerConfig(TestServers.props(tmp.resolve("n" + i), kv.toArray(String[]::new))),
          clocks.get(i)));
    }
    long deadline = System.currentTimeMillis() + 20_000;
    while (nodes.stream().anyMatch(n -> n.cluster().routing().assignment().view().nodes().size() != count)) {
      assertTrue(System.currentTimeMillis() < deadline, "nodes did not see each other");
      Thread.sleep(20);
    }
    return nodes;
  }

  /**
   * Puts through {@code node} while it applies {@code view} (a membership only it sees), until
   * {@code node} itself stored the put; every acknowledged put goes into {@code acked}. A real
   * membership event on that node (ZooKeeper watches fire at any time) re-applies the real members
   * and may undo the view before the put: the put is then refused or forwarded to the real owner,
   * and is tried again with the view applied again.
   */
  private static void putAsIfAlone(TalosServer node, MembershipView view, TopicAndPartition tap, String text,
      SortedMap<Long, String> acked) throws Exception {
    for (int attempt = 0; ; attempt++) {
      node.cluster().routing().apply(view);
      long forwarded = node.metrics().meter("forward.sent").getCount();
      try {
        acked.put(RestartTest.api(node).put(tap, List.of(text)), text);
        if (node.metrics().meter("forward.sent").getCount() == forwarded) return;
      } catch (GalaxyTalosException e) {
        if (e.getErrorCode() != ErrorCode.PARTITION_NOT_SERVING) throw e;
      }
      assertTrue(attempt < 5, "the view kept being undone");
    }
  }

  private static void closeAll(List<TalosServer> nodes) {
    for (TalosServer n : nodes) n.close();
  }

  /** The live node that serves the partition now, or null. */
  private static TalosServer servingNode(List<TalosServer> live, String topic, int partition) {
    for (TalosServer n : live) {
      if (n.routing().route(topic, partition).kind() == PartitionRouting.Route.Kind.LOCAL) return n;
    }
    return null;
  }

  /**
   * Puts one message through whichever live node serves the partition, retrying retriable
   * answers for at most 20 s; a non-retriable answer is recorded in {@code bad} and ends the try.
   */
  private static Long putRetrying(List<TalosServer> live, TopicAndPartition tap, String text, List<String> bad)
      throws InterruptedException {
    long deadline = System.currentTimeMillis() + 20_000;
    while (System.currentTimeMillis() < deadline) {
      TalosServer node = servingNode(live, tap.getTopicName(), tap.getPartitionId());
      if (node == null) {
        Thread.sleep(20);
        continue;
      }
      try {
        return RestartTest.api(node).put(tap, List.of(text));
      } catch (GalaxyTalosException e) {
        if (!RETRIABLE.contains(e.getErrorCode())) {
          bad.add(e.getErrorCode() + ": " + e.getErrMsg());
          return null;
        }
      } catch (java.io.IOException | IllegalStateException e) {
        // connection refused or closed by a node going away, HTTP 503 while it stops: retriable
        if (e instanceof IllegalStateException && !e.getMessage().startsWith("HTTP 503")) {
          bad.add(e.getMessage());
          return null;
        }
      } catch (Exception e) {
        bad.add(e.toString());
        return null;
      }
      Thread.sleep(20);
    }
    bad.add("no node served " + tap + " for 20 s");
    return null;
  }

  private record Load(Thread thread, AtomicBoolean stop, SortedMap<Long, String> acked, List<String> bad,
      List<Long> putMs) {}

  private static Load load(List<TalosServer> live, TopicAndPartition tap) {
    AtomicBoolean stop = new AtomicBoolean();
    SortedMap<Long, String> acked = new ConcurrentSkipListMap<>();
    List<String> bad = new CopyOnWriteArrayList<>();
    List<Long> putMs = new CopyOnWriteArrayList<>();
    Thread t = new Thread(() -> {
      for (int i = 0; !stop.get() && bad.isEmpty(); i++) {
        try {
          Long offset = putRetrying(live, tap, "m" + i, bad);
          if (offset != null) {
            assertEquals(null, acked.put(offset, "m" + i), "offset " + offset + " acknowledged twice");
            putMs.add(System.currentTimeMillis());
          }
        } catch (InterruptedException e) {
          return;
        }
      }
    }, "cluster-test-load");
    t.start();
    return new Load(t, stop, acked, bad, putMs);
  }

  private static void awaitAcks(Load load, int count) throws InterruptedException {
    long deadline = System.currentTimeMillis() + 20_000;
    while (load.acked().size() < count) {
      assertTrue(load.bad().isEmpty(), load.bad().toString());
      assertTrue(System.currentTimeMillis() < deadline, "only " + load.acked().size() + " acks");
      Thread.sleep(10);
    }
  }

  private static void assertEveryAckReadable(List<TalosServer> live, TopicAndPartition tap,
      SortedMap<Long, String> acked) throws Exception {
    TalosServer owner = servingNode(live, tap.getTopicName(), tap.getPartitionId());
    assertNotNull(owner);
    SortedMap<Long, String> read = RestartTest.api(owner).readAll(tap, 0);
    for (var e : acked.entrySet()) assertEquals(e.getValue(), read.get(e.getKey()), "offset " + e.getKey());
    assertEquals(new HashSet<>(read.values()).size(), read.size(), "no message stored twice");
    List<Long> offsets = new ArrayList<>(read.keySet());
    for (int i = 0; i < offsets.size(); i++) assertEquals((long) i, offsets.get(i), "offsets are dense");
  }

  @Test
  void shouldServeAKilledOwnersPartitionAgainWithinTenSecondsWithEveryAckReadable(@TempDir Path tmp) throws Exception {
    List<TalosServer> nodes = startNodes(tmp);
    List<TalosServer> live = new CopyOnWriteArrayList<>(nodes);
    try {
      TopicTalosResourceName trn = RestartTest.api(nodes.get(0)).createTopic("kill", 6);
      TopicAndPartition tap = new TopicAndPartition("kill", trn, 2);
      Load load = load(live, tap);
      awaitAcks(load, 30);
      TalosServer owner = servingNode(live, "kill", 2);
      live.remove(owner);
      long killedAt = System.currentTimeMillis();
      owner.crash(); // no drain, logs left open with their leases
      int before = load.acked().size();
      awaitAcks(load, before + 20);
      long servedAgainAt = load.putMs().stream().filter(t -> t > killedAt).findFirst().orElseThrow();
      load.stop().set(true);
      load.thread().join();
      assertTrue(load.bad().isEmpty(), load.bad().toString());
      long gapMs = servedAgainAt - killedAt;
      System.out.println("ClusterTest: a killed owner's partition was served again after " + gapMs + " ms");
      assertTrue(gapMs <= 10_000, "served again after " + gapMs + " ms");
      assertNotEquals(owner, servingNode(live, "kill", 2));
      assertEveryAckReadable(live, tap, load.acked());
    } finally {
      closeAll(live);
    }
  }

  @Test
  void shouldMoveADrainedNodesPartitionsWithOnlyRetriableErrors(@TempDir Path tmp) throws Exception {
    List<TalosServer> nodes = startNodes(tmp);
    List<TalosServer> live = new CopyOnWriteArrayList<>(nodes);
    try {
      TopicTalosResourceName trn = RestartTest.api(nodes.get(0)).createTopic("drain", 6);
      TopicAndPartition tap = new TopicAndPartition("drain", trn, 1);
      Load load = load(live, tap);
      awaitAcks(load, 30);
      TalosServer owner = servingNode(live, "drain", 1);
      String ownerId = owner.routing().localNode().id();
      // The ops API lists the members from the membership, on any node.
      HttpResponse<String> members = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
          URI.create(live.get(0).opsEndpoint() + "/ops/nodes")).build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(200, members.statusCode(), members.body());
      for (TalosServer n : live) {
        String id = n.routing().localNode().id();
        assertTrue(members.body().contains("\"" + id + "\""), id + " missing from /ops/nodes: " + members.body());
      }
      // The drain request goes through another node's ops port, as bin/talos cluster drain does.
      TalosServer other = live.stream().filter(n -> n != owner).findFirst().orElseThrow();
      HttpResponse<String> drain = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
          URI.create(other.opsEndpoint() + "/ops/cluster/drain?node=" + ownerId))
          .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(202, drain.statusCode(), drain.body());
      owner.cluster().drained().get(20, java.util.concurrent.TimeUnit.SECONDS);
      long drainedAt = System.currentTimeMillis();
      live.remove(owner);
      owner.close();
      int before = load.acked().size();
      awaitAcks(load, before + 20);
      load.stop().set(true);
      load.thread().join();
      assertTrue(load.bad().isEmpty(), "only retriable errors: " + load.bad());
      long servedAgainAt = load.putMs().stream().filter(t -> t > drainedAt).findFirst().orElseThrow();
      System.out.println("ClusterTest: a drained node's partition was served again " + (servedAgainAt - drainedAt)
          + " ms after the drain finished");
      for (TalosServer n : live) {
        assertEquals(0, n.cluster().routing().assignment().view().nodes().stream()
            .filter(m -> m.id().equals(ownerId)).count(), "the drained node left");
      }
      assertEveryAckReadable(live, tap, load.acked());
      HttpResponse<String> status = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
          URI.create(other.opsEndpoint() + "/ops/cluster")).build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(200, status.statusCode());
      assertTrue(status.body().contains("\"assignmentVersion\"") && status.body().contains("\"partitions\" : 6"),
          status.body());
    } finally {
      closeAll(live);
    }
  }

  @Test
  void shouldFenceAnOwnerWhoseEpochWasSupersededAndBroadcastTopicChanges(@TempDir Path tmp) throws Exception {
    List<TalosServer> nodes = startNodes(tmp, ServerConfig.CLUSTER_REASSIGN_DELAY_MS, "0",
        ServerConfig.METADATA_CACHE_TTL_MS, "5000");
    try {
      // Topic changes: node 2 has cached "ddl" as absent; with a 5 s cache only the broadcast can tell it.
      assertTrue(nodes.get(2).metadata().topic("ddl").isEmpty());
      TopicTalosResourceName trn = RestartTest.api(nodes.get(0)).createTopic("ddl", 8);
      long created = System.currentTimeMillis();
      while (nodes.get(2).metadata().topic("ddl").isEmpty()) {
        assertTrue(System.currentTimeMillis() - created < 1_000, "node 2 did not see the new topic within 1 s");
        Thread.sleep(5);
      }
      System.out.println("ClusterTest: a new topic was seen by another node after "
          + (System.currentTimeMillis() - created) + " ms");

      // A partition that a owns now and b would own without a.
      MembershipView full = nodes.get(1).cluster().routing().assignment().view();
      NodeInfo a = null;
      int partition = -1;
      for (int p = 0; p < 8 && partition < 0; p++) {
        NodeInfo owner = nodes.get(0).cluster().routing().owner("ddl", p);
        List<NodeInfo> without = full.nodes().stream().filter(n -> !n.id().equals(owner.id())).toList();
        NodeInfo next = new io.talos.server.cluster.ConsistentHashAssignment(new MembershipView(0, without),
            256).owner("ddl", p);
        if (next.id().equals("n1") && !owner.id().equals("n1")) {
          a = owner;
          partition = p;
        }
      }
      assertTrue(partition >= 0, "no partition moves to n1 in this layout");
      final NodeInfo aInfo = a;
      TalosServer oldOwner = nodes.stream().filter(n -> n.routing().localNode().id().equals(aInfo.id())).findFirst().orElseThrow();
      TopicAndPartition tap = new TopicAndPartition("ddl", trn, partition);
      SortedMap<Long, String> acked = new TreeMap<>();
      for (int i = 0; i < 5; i++) acked.put(RestartTest.api(oldOwner).put(tap, List.of("old" + i)), "old" + i);
      RawApi viaN1 = RestartTest.api(nodes.get(1));
      // A non-owner never opens the partition for writing: it forwards the put to the owner.
      long forwardedBefore = nodes.get(1).metrics().meter("forward.sent").getCount();
      acked.put(viaN1.put(tap, List.of("forwarded")), "forwarded");
      assertTrue(nodes.get(1).metrics().meter("forward.sent").getCount() > forwardedBefore, "n1 forwarded the put");

      // n1 alone believes a is gone (a is paused, its session about to expire): it takes the partition over.
      MembershipView withoutA = new MembershipView(Long.MAX_VALUE / 4, full.nodes().stream()
          .filter(n -> !n.id().equals(aInfo.id())).toList());
      putAsIfAlone(nodes.get(1), withoutA, tap, "new0", acked);
      long epochOfN1 = ((HBaseMetadataStore) hbaseStore(nodes.get(1))).partitionOwner(trn.getTopicTalosResourceName(),
          partition).orElseThrow().epoch();
      assertEquals("n1", ((HBaseMetadataStore) hbaseStore(nodes.get(1))).partitionOwner(
          trn.getTopicTalosResourceName(), partition).orElseThrow().nodeId());
      assertTrue(epochOfN1 >= 2, "n1 claimed a newer epoch than a's: " + epochOfN1);

      // The old owner wakes up and appends: fenced, nothing acknowledged.
      RawApi viaOld = RestartTest.api(oldOwner);
      GalaxyTalosException fenced = assertThrows(GalaxyTalosException.class, () -> viaOld.put(tap, List.of("lost")));
      assertEquals(ErrorCode.PARTITION_NOT_SERVING, fenced.getErrorCode(), fenced.getErrMsg());
      putAsIfAlone(nodes.get(1), withoutA, tap, "new1", acked);
      SortedMap<Long, String> read = viaN1.readAll(tap, 0);
      assertEquals(acked, read, "every acknowledged message, in order, and nothing else");
      nodes.get(1).cluster().routing().apply(full);

      // Grown through node 0: every other node serves the new partitions within 1 s.
      RawApi via0 = RestartTest.api(nodes.get(0));
      via0.call("topic", "changeTopicAttribute", new io.talos.thrift.TopicService.changeTopicAttribute_args(
          new io.talos.thrift.ChangeTopicAttributeRequest(trn, new io.talos.thrift.TopicAttribute().setPartitionNumber(12))),
          new io.talos.thrift.TopicService.changeTopicAttribute_result());
      long grown = System.currentTimeMillis();
      for (TalosServer n : nodes.subList(1, 3)) {
        while (true) {
          try {
            RestartTest.api(n).put(new TopicAndPartition("ddl", trn, 11), List.of("grown"));
            break;
          } catch (GalaxyTalosException e) {
            assertTrue(System.currentTimeMillis() - grown < 1_000, "node " + n.routing().localNode().id()
                + " did not serve partition 11 within 1 s: " + e.getErrorCode() + " " + e.getErrMsg());
            Thread.sleep(5);
          }
        }
      }
      System.out.println("ClusterTest: a grown topic was served by the other nodes after "
          + (System.currentTimeMillis() - grown) + " ms");

      // Deleted through node 0: every other node refuses it within 1 s and closes its logs.
      TalosServer holder = nodes.stream().filter(n -> n.cluster().owned().ownedCount() > 0 && n != nodes.get(0))
          .findFirst().orElseThrow();
      String res = trn.getTopicTalosResourceName();
      via0.call("topic", "deleteTopic", new io.talos.thrift.TopicService.deleteTopic_args(
          new io.talos.thrift.DeleteTopicRequest(trn)), new io.talos.thrift.TopicService.deleteTopic_result());
      long deleted = System.currentTimeMillis();
      for (TalosServer n : nodes.subList(1, 3)) {
        while (true) {
          try {
            RestartTest.api(n).put(new TopicAndPartition("ddl", trn, 0), List.of("after delete"));
          } catch (GalaxyTalosException e) {
            if (e.getErrorCode() == ErrorCode.TOPIC_NOT_EXIST) break;
          }
          assertTrue(System.currentTimeMillis() - deleted < 1_000, "node " + n.routing().localNode().id()
              + " still served the deleted topic after 1 s");
          Thread.sleep(5);
        }
      }
      while (holder.cluster().owned().ownedCount() > 0) {
        assertTrue(System.currentTimeMillis() - deleted < 1_000, "the deleted topic's logs stayed open on "
            + holder.routing().localNode().id());
        Thread.sleep(5);
      }
      for (int p = 0; p < 12; p++) assertTrue(!holder.partitionLogs().isOpen(res, p), "log " + p + " closed");
    } finally {
      closeAll(nodes);
    }
  }

  /**
   * Shedding by load with real nodes: puts to one node's partitions make its published load the
   * highest; every node then computes the same map from the same view, with that node's factor
   * below 1 and fewer partitions on it.
   */
  @Test
  void shouldShedPartitionsOfTheNodeWhoseLoadIsAboveTheMean(@TempDir Path tmp) throws Exception {
    List<TalosServer> nodes = startNodes(tmp, ServerConfig.CLUSTER_ASSIGNMENT_LOAD_SHEDDING_ENABLED, "true",
        ServerConfig.CLUSTER_ASSIGNMENT_LOAD_FLOOR_PER_SEC, "1", ServerConfig.CLUSTER_LOAD_WINDOW_MS, "1000",
        ServerConfig.CLUSTER_LOAD_PUBLISH_INTERVAL_MS, "1000");
    AtomicBoolean stop = new AtomicBoolean();
    Thread load = null;
    try {
      TalosServer hot = nodes.get(0);
      String hotId = hot.routing().localNode().id();
      int partitions = 90;
      TopicTalosResourceName trn = RestartTest.api(hot).createTopic("hot", partitions);
      List<Integer> mine = new ArrayList<>();
      for (int p = 0; p < partitions; p++) if (hot.cluster().routing().owner("hot", p).id().equals(hotId)) mine.add(p);
      assertTrue(!mine.isEmpty(), "n0 owns some partitions");
      RawApi api = RestartTest.api(hot);
      AtomicInteger acked = new AtomicInteger();
      load = new Thread(() -> {
        for (int i = 0; !stop.get(); i++) {
          try {
            api.put(new TopicAndPartition("hot", trn, mine.get(i % mine.size())), List.of("m" + i));
            acked.incrementAndGet();
          } catch (Exception e) {
            // a partition changing owner answers PARTITION_NOT_SERVING meanwhile: the next put goes on
          }
        }
      }, "cluster-test-hot-load");
      load.start();
      long deadline = System.currentTimeMillis() + 30_000;
      while (true) {
        List<io.talos.server.cluster.ConsistentHashAssignment> maps = nodes.stream()
            .map(n -> n.cluster().routing().assignment()).toList();
        long version = maps.get(0).version();
        if (maps.stream().allMatch(a -> a.version() == version && a.factor(hotId) < 1.0)) {
          int owned = 0;
          for (int p = 0; p < partitions; p++) {
            String owner = maps.get(0).owner("hot", p).id();
            for (var a : maps) assertEquals(owner, a.owner("hot", p).id(), "every node maps partition " + p + " alike");
            if (owner.equals(hotId)) owned++;
          }
          System.out.println("ClusterTest: after " + acked.get() + " puts to n0's partitions its factor is "
              + maps.get(0).factor(hotId) + " (load " + maps.get(0).view().node(hotId).load() + " req/s, others "
              + maps.get(0).view().nodes().stream().filter(n -> !n.id().equals(hotId)).map(NodeInfo::load).toList()
              + "): it owns " + owned + " of " + partitions + " partitions, was " + mine.size());
          assertTrue(owned < mine.size(), "the hot node shed partitions: " + owned + " of " + mine.size());
          break;
        }
        assertTrue(System.currentTimeMillis() < deadline, "n0 never shed within 30 s; factor on n1 "
            + maps.get(1).factor(hotId) + ", loads " + maps.get(1).view().nodes() + ", " + acked.get() + " puts");
        Thread.sleep(10);
      }
      HttpResponse<String> status = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
          URI.create(nodes.get(1).opsEndpoint() + "/ops/cluster")).build(), HttpResponse.BodyHandlers.ofString());
      assertTrue(status.body().contains("\"factor\"") && status.body().contains("\"loadShedding\" : true"),
          status.body());
    } finally {
      stop.set(true);
      if (load != null) load.join();
      closeAll(nodes);
    }
  }

  private static List<Integer> lockPartition(TalosServer node, TopicTalosResourceName trn, String worker, int partition)
      throws Exception {
    ConsumeUnit unit = new ConsumeUnit("group", trn, List.of(partition), worker);
    RestartTest.api(node).call("consumer", "lockWorker", new ConsumerService.lockWorker_args(new LockWorkerRequest(unit)),
        new ConsumerService.lockWorker_result());
    return RestartTest.api(node).call("consumer", "lockPartition",
        new ConsumerService.lockPartition_args(new LockPartitionRequest(unit)),
        new ConsumerService.lockPartition_result()).getSuccess().getSuccessPartitions();
  }

  private static ConsumerService.updateOffset_result updateOffset(TalosServer node, TopicTalosResourceName trn,
      String worker, int partition, long offset) throws Exception {
    TopicAndPartition tap = new TopicAndPartition(trn.getTopicTalosResourceName().split("#")[1], trn, partition);
    return RestartTest.api(node).call("consumer", "updateOffset", new ConsumerService.updateOffset_args(
        new UpdateOffsetRequest(new CheckPoint("group", tap, offset, worker))), new ConsumerService.updateOffset_result());
  }

  /**
   * Nodes whose clocks are 10 minutes ahead, 30 s behind and right: every one judges the group's
   * locks alike (by the store's time), a node ahead takes no live lock over, and a commit of a
   * worker whose lock was taken over is refused, through any node, however late it arrives.
   */
  @Test
  void shouldJudgeConsumerLocksByTheStoresTimeAndFenceASupersededWorkersCommit(@TempDir Path tmp) throws Exception {
    long ttlMs = 1_500;
    List<TalosServer> nodes = startNodes(tmp, List.of(Clock.offset(Clock.systemUTC(), Duration.ofMinutes(10)),
        Clock.offset(Clock.systemUTC(), Duration.ofSeconds(-30)), Clock.systemUTC()),
        ServerConfig.CONSUMER_LOCK_TTL_MS, Long.toString(ttlMs), ServerConfig.CLUSTER_DRAIN_TIMEOUT_MS, "60000");
    try {
      TalosServer ahead = nodes.get(0);
      TalosServer behind = nodes.get(1);
      TopicTalosResourceName trn = RestartTest.api(behind).createTopic("groups", 2);
      assertEquals(List.of(0), lockPartition(behind, trn, "a", 0));
      // A node 10 minutes ahead would judge a's lock long expired by its own clock; by the store's it is live.
      assertEquals(List.of(), lockPartition(ahead, trn, "b", 0));
      Map<String, List<Integer>> workers = RestartTest.api(ahead).call("consumer", "queryWorker",
          new ConsumerService.queryWorker_args(new QueryWorkerRequest("group", trn)),
          new ConsumerService.queryWorker_result()).getSuccess().getWorkerMap();
      assertEquals(List.of(0), workers.get("a"), "a is live with its lock on the node ahead: " + workers);
      // a commits through the node ahead and the one behind.
      assertTrue(updateOffset(ahead, trn, "a", 0, 10).getSuccess().isSuccess());
      assertTrue(updateOffset(behind, trn, "a", 0, 11).getSuccess().isSuccess());
      PartitionLock held = ahead.metadata().partitionLocks("group", trn.getTopicTalosResourceName()).get(0);

      // a stops renewing; once the lock expired by the store's time b takes it, under a newer token.
      long deadline = System.currentTimeMillis() + 10 * ttlMs;
      do {
        assertTrue(System.currentTimeMillis() < deadline, "b never got the expired lock");
        // A signed request repeated within its second is refused as a replay: each try in a new second.
        Thread.sleep(1_005 - System.currentTimeMillis() % 1_000);
      } while (lockPartition(ahead, trn, "b", 0).isEmpty());
      PartitionLock taken = ahead.metadata().partitionLocks("group", trn.getTopicTalosResourceName()).get(0);
      assertEquals("b", taken.workerId());
      assertTrue(taken.fencingToken() > held.fencingToken(), held + " then " + taken);
      // a's commit arrives late, through each node: refused with a clear error, the offset untouched.
      for (TalosServer node : nodes) {
        ConsumerService.updateOffset_result late = updateOffset(node, trn, "a", 0, 12);
        assertNotNull(late.getE(), "late commit through " + node.routing().localNode().id() + " refused");
        assertEquals(ErrorCode.LOCK_VALUE_NOT_EXPECTED, late.getE().getErrorCode());
        assertTrue(late.getE().getErrMsg().contains("fencing token " + taken.fencingToken()), late.getE().getErrMsg());
      }
      assertEquals(11, RestartTest.api(behind).call("consumer", "queryOffset", new ConsumerService.queryOffset_args(
          new QueryOffsetRequest("group", new TopicAndPartition("groups", trn, 0))),
          new ConsumerService.queryOffset_result()).getSuccess().getMsgOffset());
      assertTrue(updateOffset(behind, trn, "b", 0, 20).getSuccess().isSuccess());

      // A clean shutdown's drain waits for the tasks already accepted (here one the test holds).
      java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
      AtomicBoolean ran = new AtomicBoolean();
      assertEquals(io.talos.server.scheduling.Admission.ACCEPTED, behind.taskPool().submit(new HeldTask(release, ran)));
      Thread drainer = new Thread(() -> behind.cluster().drain(), "cluster-test-drain");
      drainer.start();
      Thread.sleep(300);
      assertTrue(!behind.cluster().drained().isDone(), "the drain waits for the task in flight");
      release.countDown();
      behind.cluster().drained().get(10, java.util.concurrent.TimeUnit.SECONDS);
      assertTrue(ran.get(), "the task in flight finished before the drain released the partitions");
      drainer.join();
    } finally {
      closeAll(nodes);
    }
  }

  /** A put sent to a non-owner and forwarded, waiting at the owner, and its partition. */
  private record HeldForward(TopicAndPartition tap, Future<Long> put) {}

  /**
   * Creates {@code topic} (8 partitions), holds the owner's worker of a partition that
   * {@code stopping} forwards to {@code owner} until {@code release} opens, and sends a put of
   * {@code payload} to {@code stopping}; returns once the owner has received the forwarded put.
   */
  private static HeldForward putForwardedToHeldOwner(TalosServer stopping, TalosServer owner, String topic,
      String payload, CountDownLatch release, ExecutorService clients) throws Exception {
    TopicTalosResourceName trn = RestartTest.api(stopping).createTopic(topic, 8);
    TopicAndPartition tap = forwardedTo(stopping, owner, trn, 8);
    AtomicBoolean held = new AtomicBoolean();
    assertEquals(io.talos.server.scheduling.Admission.ACCEPTED, owner.taskPool().submit(
        new HeldTask(PartitionKeys.of(tap.getTopicName(), tap.getPartitionId()), release, held)));
    long served = owner.metrics().meter("forward.served").getCount();
    Future<Long> put = clients.submit(() -> RestartTest.api(stopping).put(tap, List.of(payload)));
    awaitTrue(() -> owner.metrics().meter("forward.served").getCount() > served, "the owner got the forwarded put");
    return new HeldForward(tap, put);
  }

  /**
   * A node asked to stop while a put it forwarded waits for the partition's owner (the owner's
   * worker for that partition is held by the test): the client gets the put's real answer
   * (stored, with its offset) before the stopping node closes its connection, and a put arriving
   * once the stop began is refused PARTITION_NOT_SERVING (retriable) and never stored.
   */
  @Test
  void shouldAnswerAForwardedPutBeforeStoppingAndRefuseLaterOnes(@TempDir Path tmp) throws Exception {
    List<TalosServer> nodes = startNodes(tmp, List.of(Clock.systemUTC(), Clock.systemUTC()),
        ServerConfig.CLUSTER_DRAIN_TIMEOUT_MS, "60000");
    TalosServer stopping = nodes.get(0);
    TalosServer owner = nodes.get(1);
    ExecutorService clients = Executors.newCachedThreadPool();
    CountDownLatch release = new CountDownLatch(1);
    try {
      HeldForward forward = putForwardedToHeldOwner(stopping, owner, "stop", "first", release, clients);
      TopicAndPartition tap = forward.tap();
      Future<Long> first = forward.put();

      Future<?> stopped = clients.submit(stopping::close);
      awaitTrue(() -> !stopping.cluster().routing().serving(), "the stop began");
      GalaxyTalosException refused = assertThrows(GalaxyTalosException.class,
          () -> RestartTest.api(stopping).put(tap, List.of("after-stop")));
      assertEquals(ErrorCode.PARTITION_NOT_SERVING, refused.getErrorCode(), refused.getErrMsg());
      assertTrue(refused.getErrMsg().contains("stopping"), refused.getErrMsg());
      assertFalse(first.isDone(), "the forwarded put still waits for the owner");
      assertFalse(stopped.isDone(), "the stop waits for the forwarded put");

      release.countDown();
      long offset = first.get(20, TimeUnit.SECONDS); // its real answer, on the connection to the stopping node
      stopped.get(20, TimeUnit.SECONDS);
      assertEquals(Map.of(offset, "first"), RestartTest.api(owner).readAll(tap, 0),
          "the answered put is stored at its offset; the refused one is not");
    } finally {
      release.countDown();
      clients.shutdownNow();
      closeAll(nodes);
    }
  }

  /**
   * An owner that never answers cannot hold a stop for ever: the stopping node gives up after
   * cluster.drain.timeout.ms and tells the client the put may or may not have been served
   * (REQUEST_PROCESS_TIMEOUT), never that nothing was done: the owner stores it afterwards.
   */
  @Test
  void shouldStopWithinTheDrainTimeoutWhenTheOwnerDoesNotAnswer(@TempDir Path tmp) throws Exception {
    long drainTimeoutMs = 1_000;
    List<TalosServer> nodes = startNodes(tmp, List.of(Clock.systemUTC(), Clock.systemUTC()),
        ServerConfig.CLUSTER_DRAIN_TIMEOUT_MS, Long.toString(drainTimeoutMs));
    TalosServer stopping = nodes.get(0);
    TalosServer owner = nodes.get(1);
    ExecutorService clients = Executors.newCachedThreadPool();
    CountDownLatch release = new CountDownLatch(1);
    try {
      HeldForward forward = putForwardedToHeldOwner(stopping, owner, "stuck", "late", release, clients);
      TopicAndPartition tap = forward.tap();
      Future<Long> first = forward.put();

      long start = System.nanoTime();
      stopping.close();
      long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      assertTrue(tookMs >= drainTimeoutMs && tookMs < drainTimeoutMs + 10_000, "the stop took " + tookMs + " ms");
      ExecutionException failed = assertThrows(ExecutionException.class, () -> first.get(10, TimeUnit.SECONDS));
      GalaxyTalosException answer = assertInstanceOf(GalaxyTalosException.class, failed.getCause());
      assertEquals(ErrorCode.REQUEST_PROCESS_TIMEOUT, answer.getErrorCode(), answer.getErrMsg());
      assertTrue(answer.getErrMsg().contains("may or may not have been served"), answer.getErrMsg());

      release.countDown();
      long deadline = System.currentTimeMillis() + 20_000;
      while (!RestartTest.api(owner).readAll(tap, 0).containsValue("late")) {
        assertTrue(System.currentTimeMillis() < deadline, "the owner never stored the abandoned put");
        Thread.sleep(20);
      }
    } finally {
      release.countDown();
      clients.shutdownNow();
      closeAll(nodes);
    }
  }

  /** A partition of the topic that {@code via} routes to {@code owner} (forwards there). */
  private static TopicAndPartition forwardedTo(TalosServer via, TalosServer owner, TopicTalosResourceName trn,
      int partitions) {
    String topic = trn.getTopicTalosResourceName().split("#")[1];
    String ownerId = owner.routing().localNode().id();
    for (int p = 0; p < partitions; p++) {
      PartitionRouting.Route route = via.routing().route(topic, p);
      if (route.kind() == PartitionRouting.Route.Kind.PEER && route.node().id().equals(ownerId)
          && owner.routing().route(topic, p).kind() == PartitionRouting.Route.Kind.LOCAL) {
        return new TopicAndPartition(topic, trn, p);
      }
    }
    throw new AssertionError("no partition of " + topic + " is routed from " + via.routing().localNode().id()
        + " to " + ownerId);
  }

  private static void awaitTrue(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.currentTimeMillis() + 20_000;
    while (!condition.getAsBoolean()) {
      assertTrue(System.currentTimeMillis() < deadline, "timed out waiting until " + what);
      Thread.sleep(5);
    }
  }

  /** A pool task that runs until {@code release} opens; queued under {@code key}. */
  private record HeldTask(Object key, java.util.concurrent.CountDownLatch release, AtomicBoolean ran)
      implements io.talos.server.scheduling.Task {
    HeldTask(java.util.concurrent.CountDownLatch release, AtomicBoolean ran) {
      this("held", release, ran);
    }

    @Override
    public int priority() {
      return 0;
    }

    @Override
    public long deadlineMs() {
      return NO_DEADLINE;
    }

    @Override
    public void run() throws Exception {
      release.await();
      ran.set(true);
    }

    @Override
    public void expire() {}

    @Override
    public void fail(Throwable cause) {}
  }

  private static Object hbaseStore(TalosServer server) {
    io.talos.server.metadata.MetadataStore s = server.metadata();
    while (s instanceof io.talos.server.metadata.CachingMetadataStore c) s = c.delegate();
    return s;
  }
}
