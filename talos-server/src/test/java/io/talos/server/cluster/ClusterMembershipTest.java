package io.talos.server.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.server.ManualClock;
import java.io.File;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.apache.zookeeper.server.ServerCnxnFactory;
import org.apache.zookeeper.server.ZooKeeperServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link ClusterMembership} against a real ZooKeeper server (in this JVM, started once for the
 * class; each test uses its own root): a load published by one node reaches the others' views,
 * with a newer version, and the map they compute from it; the session confirmation that every
 * claim of a partition asks first holds only while the node's entry exists and was made by its
 * current session.
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

  /** Polls {@code condition} every 20 ms until it holds; fails after 10 s. */
  private static void awaitTrue(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!condition.getAsBoolean()) {
      assertTrue(System.nanoTime() < deadline, what + ": not within 10 s");
      Thread.sleep(20);
    }
  }

  /** Another client (its own session), connected. */
  private static CuratorFramework otherClient() throws InterruptedException {
    CuratorFramework c = CuratorFrameworkFactory.newClient(quorum, 10_000, 10_000, new RetryOneTime(100));
    c.start();
    assertTrue(c.blockUntilConnected(10, TimeUnit.SECONDS), "another client connects");
    return c;
  }

  /** The ZooKeeper handle the node's Curator client uses now (null while it has none). */
  private static ZooKeeper handle(ClusterMembership m) {
    try {
      return m.client().getZookeeperClient().getZooKeeper();
    } catch (Exception e) {
      return null;
    }
  }

  private static Stat stat(CuratorFramework client, String path) {
    try {
      return client.checkExists().forPath(path);
    } catch (Exception e) {
      throw new AssertionError("cannot read " + path, e);
    }
  }

  @Test
  void shouldNotConfirmASessionWhoseEntryIsGoneOrMadeByAnotherSession() throws Exception {
    String root = "/owner" + ++roots;
    String entry = root + "/nodes/a";
    ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor();
    try (CuratorFramework other = otherClient();
        ClusterMembership a = new ClusterMembership(quorum, root, 10_000, node("a"), executor, v -> { }, c -> { },
            () -> { })) {
      long session = handle(a).getSessionId();
      assertEquals(session, stat(other, entry).getEphemeralOwner());
      assertTrue(a.sessionConfirmed(), "a joined node: its entry, made by its session");

      other.delete().forPath(entry);
      assertFalse(a.sessionConfirmed(), "no entry");

      // The same entry again, made by another session (as an earlier incarnation of the id leaves it).
      other.create().withMode(CreateMode.EPHEMERAL).forPath(entry, ClusterMembership.encode(node("a")));
      assertNotEquals(session, stat(other, entry).getEphemeralOwner());
      assertFalse(a.sessionConfirmed(), "the entry is another session's");

      // Meanwhile the node's own session lives on unchanged: only the entry's owner decides.
      assertTrue(handle(a).getState().isConnected());
      assertEquals(session, handle(a).getSessionId());
    } finally {
      executor.shutdownNow();
    }
  }

  @Test
  void shouldNotConfirmAnExpiredSessionNorANewOneBeforeItsOwnEntryIsWritten() throws Exception {
    String root = "/expiry" + ++roots;
    String entry = root + "/nodes/a";
    ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor();
    BlockingQueue<Boolean> connected = new LinkedBlockingQueue<>();
    CountDownLatch release = new CountDownLatch(1);
    try (CuratorFramework other = otherClient();
        ClusterMembership a = new ClusterMembership(quorum, root, 10_000, node("a"), executor, v -> { },
            connected::add, () -> { })) {
      long expired = handle(a).getSessionId();
      assertTrue(a.sessionConfirmed(), "a joined node");
      assertEquals(Boolean.TRUE, connected.poll(10, TimeUnit.SECONDS), "the first connection is reported");

      // Hold the membership thread: it writes the entry again after a new session, so the gap
      // between the new session and its entry stays open until released.
      hold(executor, release);

      server.expire(expired); // as after a pause longer than the session: the server ends it
      awaitTrue(() -> stat(other, entry) == null, "the expired session's entry is deleted");
      assertFalse(a.sessionConfirmed(), "the session expired");

      awaitTrue(() -> {
        ZooKeeper h = handle(a);
        return h != null && h.getState().isConnected() && h.getSessionId() != expired;
      }, "Curator opens a new session");
      assertFalse(a.sessionConfirmed(), "a new session without an entry");
      other.create().withMode(CreateMode.EPHEMERAL).forPath(entry, ClusterMembership.encode(node("a")));
      assertFalse(a.sessionConfirmed(), "a new session, the entry another session's");

      release.countDown();
      assertEquals(Boolean.FALSE, connected.poll(10, TimeUnit.SECONDS), "the loss is reported first");
      awaitTrue(a::sessionConfirmed, "confirmed once the node registered again");
      long current = handle(a).getSessionId();
      assertNotEquals(expired, current);
      assertEquals(current, stat(other, entry).getEphemeralOwner(),
          "the entry was replaced by one of the current session");
    } finally {
      release.countDown();
      executor.shutdownNow();
    }
  }

  @Test
  void shouldReportAReconnectedNodeConnectedOnlyAfterAFreshView() throws Exception {
    // While this node's session was gone another node's entry appeared; the view held from before
    // the loss does not have it. Serving must resume on the view read after the reconnection.
    String root = "/fresh" + ++roots;
    ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor();
    BlockingQueue<Object> events = new LinkedBlockingQueue<>();
    CountDownLatch release = new CountDownLatch(1);
    try (CuratorFramework other = otherClient();
        ClusterMembership a = new ClusterMembership(quorum, root, 10_000, node("a"), executor, events::add,
            events::add, () -> { })) {
      long expired = handle(a).getSessionId();
      awaitTrue(() -> events.contains(Boolean.TRUE), "the first connection is reported");
      hold(executor, release);
      server.expire(expired);
      awaitTrue(() -> {
        ZooKeeper h = handle(a);
        return h != null && h.getState().isConnected() && h.getSessionId() != expired;
      }, "Curator opens a new session");
      other.create().withMode(CreateMode.EPHEMERAL).forPath(root + "/nodes/b", ClusterMembership.encode(node("b")));
      events.clear();
      release.countDown();

      // After the loss, the first "connected" must come after a view that has b.
      boolean sawFreshView = false;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (true) {
        Object e = events.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        assertNotNull(e, "no connected event within 10 s");
        if (e instanceof MembershipView v && v.nodes().stream().anyMatch(n -> n.id().equals("b"))) sawFreshView = true;
        if (Boolean.TRUE.equals(e)) break;
      }
      assertTrue(sawFreshView, "serving resumed before the view read after the reconnection was delivered");
    } finally {
      release.countDown();
      executor.shutdownNow();
    }
  }

  /** Blocks the membership's (single) callback thread until {@code release} opens. */
  private static void hold(ScheduledExecutorService executor, CountDownLatch release) throws InterruptedException {
    CountDownLatch held = new CountDownLatch(1);
    executor.execute(() -> {
      held.countDown();
      try {
        release.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    assertTrue(held.await(10, TimeUnit.SECONDS));
  }
}
