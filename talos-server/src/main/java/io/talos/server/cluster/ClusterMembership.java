package io.talos.server.cluster;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.Closeable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This node's membership in ZooKeeper (Curator), and everyone else's as it sees them:
 *
 * <pre>
 * &lt;root&gt;/nodes/&lt;nodeId&gt;    EPHEMERAL, JSON {id, apiUrl, peerHost, peerPort, state, capacity,
 *                              load, loadShedding}
 * &lt;root&gt;/drain/&lt;nodeId&gt;    PERSISTENT, present while a drain of that node is requested
 * &lt;root&gt;/topics-version     PERSISTENT, see {@link TopicChangeBroadcast}
 * </pre>
 *
 * <p>The ephemeral node lives as long as this node's ZooKeeper session: that is the node's only
 * liveness signal (the ZooKeeper client's pings, one per node, whatever the number of partitions).
 * An entry left by an earlier incarnation of the same id (its session not expired yet) is replaced.
 *
 * <p>Every change of {@code nodes/} or of a member's data is delivered as a {@link MembershipView}
 * whose version is the newest zxid among the parent's children change ({@code pzxid}) and the
 * members' last data change ({@code mzxid}): the same members read after the same change give the
 * same version on every node, and a later change a larger one.
 *
 * <p>Connection: SUSPENDED and LOST are reported as "not connected" at once (the caller stops
 * serving before the session can expire and another node take over); after RECONNECTED the entry is
 * written again if the session was lost and the view re-read, and only then is "connected"
 * reported: serving never resumes on the view from before the loss.
 *
 * <p>Thread-safety: callbacks run on {@code executor} (one thread), never concurrently; the
 * public methods may be called from any thread.
 */
public final class ClusterMembership implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(ClusterMembership.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final CuratorFramework zk;
  private final String nodesPath;
  private final String drainPath;
  private final ScheduledExecutorService executor;
  private final Consumer<MembershipView> onView;
  private final Consumer<Boolean> onConnected;
  private final Runnable onDrainRequested;
  private final Watcher watcher = this::watched;
  private volatile NodeInfo self;
  private volatile boolean closed;

  /**
   * Connects and registers {@code self}; waits for the connection at most {@code connectTimeoutMs}.
   *
   * @param onView every new view (also the first)
   * @param onConnected false on SUSPENDED/LOST, true once connected and registered again
   * @param onDrainRequested a drain of this node was requested ({@link #requestDrain})
   */
  public ClusterMembership(String quorum, String root, long sessionTimeoutMs, NodeInfo self,
      ScheduledExecutorService executor, Consumer<MembershipView> onView, Consumer<Boolean> onConnected,
      Runnable onDrainRequested) throws IOException {
    this.nodesPath = root + "/nodes";
    this.drainPath = root + "/drain";
    this.self = self;
    this.executor = executor;
    this.onView = onView;
    this.onConnected = onConnected;
    this.onDrainRequested = onDrainRequested;
    this.zk = CuratorFrameworkFactory.builder().connectString(quorum)
        .sessionTimeoutMs((int) sessionTimeoutMs)
        .connectionTimeoutMs((int) Math.min(sessionTimeoutMs, 15_000))
        .retryPolicy(new ExponentialBackoffRetry(100, 3, 1_000))
        .build();
    zk.getConnectionStateListenable().addListener((client, state) -> connectionChanged(state), executor);
    zk.start();
    try {
      if (!zk.blockUntilConnected((int) Math.max(sessionTimeoutMs, 10_000), TimeUnit.MILLISECONDS)) {
        throw new IOException("cannot connect to the ZooKeeper quorum " + quorum + " (cluster.zookeeper.quorum)");
      }
      zk.createContainers(nodesPath);
      zk.createContainers(drainPath);
      register();
    } catch (IOException e) {
      zk.close();
      throw e;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      zk.close();
      throw new IOException("interrupted while joining the cluster", e);
    } catch (Exception e) {
      zk.close();
      throw new IOException("cannot join the cluster in ZooKeeper " + quorum + root + ": " + e, e);
    }
    executor.execute(this::refresh);
  }

  /** The Curator client (shared with {@link TopicChangeBroadcast}). */
  public CuratorFramework client() {
    return zk;
  }

  public NodeInfo self() {
    return self;
  }

  /**
   * Whether this node's ZooKeeper session is alive now, by a round trip on the current handle: its
   * entry exists and belongs to this session. False on any failure (disconnected, expired). The
   * handle itself, not Curator's retrying calls: those would wait for a new session, and a new
   * session's entry says nothing about the view this node acted on.
   */
  public boolean sessionConfirmed() {
    try {
      org.apache.zookeeper.ZooKeeper handle = zk.getZookeeperClient().getZooKeeper();
      Stat st = handle.exists(nodesPath + "/" + self.id(), false);
      return st != null && st.getEphemeralOwner() == handle.getSessionId();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (Exception e) {
      LOG.info("ZooKeeper session of node {} not confirmed: {}", self.id(), e.toString());
      return false;
    }
  }

  /** Announces a new state (DRAINING) of this node. */
  public synchronized void setState(NodeState state) throws IOException {
    self = self.withState(state);
    try {
      zk.setData().forPath(nodesPath + "/" + self.id(), encode(self));
    } catch (Exception e) {
      throw new IOException("cannot announce state " + state + " of node " + self.id() + ": " + e, e);
    }
  }

  /**
   * Rewrites this node's entry with a new measured load ({@link LoadPublisher} decides how often).
   * Call it from a thread of its own, never the membership's executor: the write waits for
   * ZooKeeper, and a SUSPENDED event queued behind it would stop this node's serving late.
   * Synchronized with {@link #setState}, and each write completes before the other starts, so
   * neither undoes the other's field; a DRAINING node publishes nothing more (it owns nothing).
   *
   * @throws IOException if not connected to ZooKeeper now, or the write failed (nothing written)
   */
  public synchronized void publishLoad(double load, boolean loadShedding) throws IOException {
    if (self.state() != NodeState.ACTIVE) return;
    if (!zk.getZookeeperClient().isConnected()) throw new IOException("not connected to ZooKeeper");
    NodeInfo updated = self.withLoad(load, loadShedding);
    try {
      zk.setData().forPath(nodesPath + "/" + updated.id(), encode(updated));
    } catch (Exception e) {
      throw new IOException("cannot publish the load of node " + updated.id() + ": " + e, e);
    }
    self = updated;
  }

  /** Asks node {@code nodeId} (any member) to drain: it sees the request and starts its clean shutdown. */
  public void requestDrain(String nodeId) throws IOException {
    try {
      zk.create().orSetData().forPath(drainPath + "/" + nodeId, new byte[0]);
    } catch (Exception e) {
      throw new IOException("cannot request the drain of node " + nodeId + ": " + e, e);
    }
  }

  private synchronized void register() throws Exception {
    String path = nodesPath + "/" + self.id();
    long mySession = zk.getZookeeperClient().getZooKeeper().getSessionId();
    for (int attempt = 0; attempt < 5; attempt++) {
      try {
        zk.create().withMode(CreateMode.EPHEMERAL).forPath(path, encode(self));
        LOG.info("Joined the cluster as {} ({})", self.id(), self.apiUrl());
        return;
      } catch (KeeperException.NodeExistsException e) {
        Stat st = zk.checkExists().forPath(path);
        if (st == null) continue;
        if (st.getEphemeralOwner() == mySession) {
          zk.setData().forPath(path, encode(self));
          return;
        }
        // An earlier incarnation of this id whose session has not expired yet: this one replaces it.
        LOG.info("Replacing the membership entry of an earlier incarnation of node {}", self.id());
        try {
          zk.delete().withVersion(st.getVersion()).forPath(path);
        } catch (KeeperException.NoNodeException | KeeperException.BadVersionException ignored) {
          // gone or changed meanwhile: try again
        }
      }
    }
    throw new IOException("cannot register node " + self.id() + " at " + path + ": it keeps being recreated");
  }

  private void connectionChanged(ConnectionState state) {
    if (closed) return;
    LOG.info("ZooKeeper connection of node {}: {}", self.id(), state);
    switch (state) {
      case SUSPENDED, LOST -> onConnected.accept(false);
      case CONNECTED, RECONNECTED -> {
        try {
          register(); // a no-op if the session survived; a new entry if it was lost
          // The view is read before serving resumes: the one held from before the loss may give
          // this node partitions that others took over meanwhile, and the session check before a
          // claim passes already (the entry was just written), so a claim under that stale view
          // would take the partition back from its new owner.
          readView();
          onConnected.accept(true);
        } catch (Exception e) {
          LOG.warn("Could not register node {} again; retrying", self.id(), e);
          executor.schedule(() -> connectionChanged(state), 500, TimeUnit.MILLISECONDS);
        }
      }
      default -> { }
    }
  }

  private void watched(WatchedEvent event) {
    if (event.getType() != Watcher.Event.EventType.None && !closed) executor.execute(this::refresh);
  }

  /** Reads the members (setting watches on the list, each member and this node's drain request). */
  void refresh() {
    if (closed) return;
    try {
      readView();
    } catch (Exception e) {
      if (closed) return;
      LOG.warn("Could not read the cluster membership; retrying", e);
      executor.schedule(this::refresh, 500, TimeUnit.MILLISECONDS);
    }
  }

  /** One read of the members, delivered to {@code onView}. @throws Exception if ZooKeeper fails */
  private void readView() throws Exception {
    Stat parent = new Stat();
    List<String> children = zk.getChildren().storingStatIn(parent).usingWatcher(watcher).forPath(nodesPath);
    long version = parent.getPzxid();
    List<NodeInfo> nodes = new ArrayList<>();
    for (String child : children) {
      Stat st = new Stat();
      byte[] data;
      try {
        data = zk.getData().storingStatIn(st).usingWatcher(watcher).forPath(nodesPath + "/" + child);
      } catch (KeeperException.NoNodeException e) {
        continue; // left meanwhile: the children watch fires again
      }
      version = Math.max(version, st.getMzxid());
      try {
        nodes.add(decode(data));
      } catch (IOException e) {
        LOG.warn("Ignoring unreadable membership entry {}: {}", child, e.getMessage());
      }
    }
    if (zk.checkExists().usingWatcher(watcher).forPath(drainPath + "/" + self.id()) != null
        && self.state() == NodeState.ACTIVE) {
      onDrainRequested.run();
    }
    onView.accept(new MembershipView(version, nodes));
  }

  /** Removes the drain request of this node (a drained node restarting serves again). */
  public void clearDrainRequest() {
    try {
      zk.delete().quietly().forPath(drainPath + "/" + self.id());
    } catch (Exception e) {
      LOG.warn("Could not remove the drain request of node {}", self.id(), e);
    }
  }

  static byte[] encode(NodeInfo n) {
    ObjectNode o = JSON.createObjectNode();
    o.put("id", n.id()).put("apiUrl", n.apiUrl()).put("peerHost", n.peerHost()).put("peerPort", n.peerPort())
        .put("state", n.state().name()).put("capacity", n.capacity()).put("load", n.load())
        .put("loadShedding", n.loadShedding());
    return o.toString().getBytes(StandardCharsets.UTF_8);
  }

  static NodeInfo decode(byte[] data) throws IOException {
    try {
      var o = JSON.readTree(data);
      return new NodeInfo(o.get("id").asText(), o.get("apiUrl").asText(),
          o.hasNonNull("peerHost") ? o.get("peerHost").asText() : null, o.path("peerPort").asInt(0),
          NodeState.valueOf(o.get("state").asText()), o.path("capacity").asInt(1), o.path("load").asDouble(0),
          o.path("loadShedding").asBoolean(false));
    } catch (RuntimeException e) {
      throw new IOException("unreadable node entry " + new String(data, StandardCharsets.UTF_8), e);
    }
  }

  /**
   * Leaves the cluster: closes the session, which deletes the entry at once (others reassign its
   * remaining partitions after {@code cluster.reassign.delay.ms}, none if it drained first).
   */
  @Override
  public void close() {
    closed = true;
    zk.close();
  }
}
