package io.talos.server.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.server.ManualClock;
import java.io.File;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.apache.zookeeper.server.ServerCnxnFactory;
import org.apache.zookeeper.server.ZooKeeperServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link ClusterMembership} against a real ZooKeeper server (in this JVM, started once for the
 * class; each test uses its own root): a load published by one node reaches the others' views,
 * with a newer version, and the map they compute from it.
 */
class ClusterMembershipTest {
  private static ZooKeeperServer server;
  private static ServerCnxnFactory factory;
  private static String quorum;
  private static int roots;

  @BeforeAll
  static void startZooKeeper() throws Exception {
    File dir = Files.createTempDirectory("talos-zk").toFile();
    server = new ZooKeeperServer(dir, dir, 200);
    factory = ServerCnxnFactory.createFactory(new InetSocketAddress("127.0.0.1", 0), 20);
    factory.startup(server);
    quorum = "127.0.0.1:" + factory.getLocalPort();
  }

  @AfterAll
  static void stopZooKeeper() {
    if (factory != null) factory.shutdown();
    if (server != null) server.shutdown();
  }

  private static NodeInfo node(String id) {
    return new NodeInfo(id, "http://" + id, id, 0, NodeState.ACTIVE, 1).withLoad(0, true);
  }

  /** The first view in {@code views} (within 10 s) that satisfies {@code wanted}. */
  private static MembershipView await(BlockingQueue<MembershipView> views, Predicate<MembershipView> wanted)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (true) {
      MembershipView v = views.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      assertNotNull(v, "no such view within 10 s");
      if (wanted.test(v)) return v;
    }
  }

  @Test
  void shouldDeliverAPublishedLoadToEveryNodesViewWithANewerVersion() throws Exception {
    String root = "/load" + ++roots;
    ScheduledExecutorService executorA = Executors.newSingleThreadScheduledExecutor();
    ScheduledExecutorService executorB = Executors.newSingleThreadScheduledExecutor();
    BlockingQueue<MembershipView> seenByB = new LinkedBlockingQueue<>();
    try (ClusterMembership a = new ClusterMembership(quorum, root, 10_000, node("a"), executorA, v -> { }, c -> { },
            () -> { });
        ClusterMembership b = new ClusterMembership(quorum, root, 10_000, node("b"), executorB, seenByB::add,
            c -> { }, () -> { })) {
      MembershipView both = await(seenByB, v -> v.nodes().size() == 2);
      assertEquals(0.0, both.node("a").load());
      assertTrue(both.node("a").loadShedding(), "the shedding setting is in the entry from the start");

      // a measures 3000 requests/s for a while; its publisher writes it to its entry.
      ManualClock clock = new ManualClock(0);
      AtomicLong requests = new AtomicLong();
      LoadPublisher publisher = new LoadPublisher(new LoadPublisher.Settings(true, 1_000, 1_000, 20), requests::get,
          () -> 1.0, 100, a::publishLoad, clock);
      for (int i = 0; i < 10; i++) {
        clock.advanceMs(1_000);
        requests.addAndGet(3_000);
        publisher.runOnce();
      }
      double published = publisher.published();
      assertTrue(published > 2_000, "published " + published); // then within 20% of it: not rewritten
      MembershipView hot = await(seenByB, v -> v.node("a") != null && v.node("a").load() == published);
      assertTrue(hot.version() > both.version(), "a rewritten entry gives a newer view: " + both.version() + " -> "
          + hot.version());
      assertEquals(NodeState.ACTIVE, hot.node("a").state());

      // b computes the map from it: a (~2600/s against b's 0, floor 100: mean ~1350) sheds to factor 0.5.
      ConsistentHashAssignment map = new ConsistentHashAssignment(hot, 256, new LoadFactors(25, 4, 100));
      assertEquals(0.5, map.factor("a"));
      assertEquals(1.0, map.factor("b"));

      // A later load keeps the state, a state change keeps the load, and a DRAINING node (it owns
      // nothing) publishes no more: its entry never goes back to ACTIVE.
      a.publishLoad(500, true);
      MembershipView later = await(seenByB, v -> v.node("a") != null && v.node("a").load() == 500);
      assertEquals(NodeState.ACTIVE, later.node("a").state());
      a.setState(NodeState.DRAINING);
      MembershipView draining = await(seenByB, v -> v.node("a") != null && v.node("a").state() == NodeState.DRAINING);
      assertEquals(500, draining.node("a").load());
      a.publishLoad(10, true);
      assertEquals(NodeState.DRAINING, a.self().state());
      assertEquals(500, a.self().load(), "not published while draining");
      assertEquals(List.of("a", "b"), draining.nodes().stream().map(NodeInfo::id).toList());
    } finally {
      executorA.shutdownNow();
      executorB.shutdownNow();
    }
  }
}
