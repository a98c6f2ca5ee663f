package io.talos.server.cluster;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.talos.server.ServerConfig;
import io.talos.server.metadata.CachingMetadataStore;
import io.talos.server.metadata.MetadataStore;
import io.talos.server.metadata.PartitionOwnerEpochs;
import io.talos.server.metadata.TopicRecord;
import io.talos.server.storage.PartitionLogs;
import java.io.IOException;
import java.time.Clock;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.LongPredicate;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One node's part in the cluster, wired together: {@link ClusterMembership} (ZooKeeper) feeds
 * {@link AssignmentRouting} (which partition is whose), {@link OwnedPartitions} takes partitions
 * over and gives them up as the assignment moves, {@link TopicChangeBroadcast} spreads topic
 * changes. Created before the front-end starts (routing answers NOT_SERVING until {@link #join});
 * joined once the API listens; {@link #drain}ed and closed on shutdown.
 *
 * <p>Thread-safety: membership callbacks run on one "talos-cluster" thread, the load's measurement
 * and publication on one "talos-load" thread; the rest is thread-safe.
 */
public final class ClusterNode implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ClusterNode.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  /** How often the load is sampled (publication is rarer: cluster.load.publish.interval.ms). */
  private static final long LOAD_SAMPLE_MS = 1_000;

  private final ClusterSettings settings;
  private final AssignmentRouting routing;
  private final OwnedPartitions owned;
  private final MetadataStore store;
  private final CachingMetadataStore cache;
  private final ScheduledExecutorService executor;
  /** Measures and publishes this node's load (see {@link LoadPublisher}). */
  private final ScheduledExecutorService loadExecutor;
  private final CompletableFuture<Void> drained = new CompletableFuture<>();
  private final ActiveNodesQuotaShare quotaShare = new ActiveNodesQuotaShare();
  private volatile ClusterMembership membership;
  private volatile TopicChangeBroadcast broadcast;
  private volatile MembershipView lastObserved = MembershipView.EMPTY;
  private volatile boolean closed;
  /** Told the members' ids after every applied view (the peer client pools of departed nodes close). */
  private volatile Consumer<Set<String>> membersListener = ids -> { };
  /** Makes the front-end refuse new requests (retriable) from the start of a drain. */
  private volatile Runnable stopAccepting = () -> { };
  /** Waits up to the given ms for the requests in flight to finish; true if they did. */
  private volatile LongPredicate inFlightDone = timeoutMs -> true;
  /** Partition requests this node served so far (its load is measured from it). */
  private volatile LongSupplier requestCount = () -> 0;
  private volatile LoadPublisher loadPublisher;
  private final Clock clock;

  /**
   * @param self this node until {@link #join} says how it registers
   * @param epochs where owner epochs are claimed (the HBase store)
   * @param store the node's metadata store (for /ops/cluster partition counts)
   * @param cache the node's topic cache (dropped on topic changes), or null
   */
  public ClusterNode(ClusterSettings settings, NodeInfo self, PartitionOwnerEpochs epochs, PartitionLogs logs,
      MetadataStore store, CachingMetadataStore cache, Clock clock) {
    this.settings = settings;
    this.store = store;
    this.cache = cache;
    this.clock = clock;
    this.routing = new AssignmentRouting(self, settings.vnodesPerCapacity(), settings.loadFactors(),
        settings.reassignDelayMs(), clock);
    this.owned = new OwnedPartitions(routing, epochs, logs);
    this.executor = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "talos-cluster-" + self.id());
      t.setDaemon(true);
      return t;
    });
    this.loadExecutor = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "talos-load-" + self.id());
      t.setDaemon(true);
      return t;
    });
    logs.writeGate(owned);
  }

  /** The node id a server gets when {@code cluster.node.id} is empty: host_port of its endpoint. */
  public static String defaultNodeId(String host, int port) {
    return host.replaceAll("[^A-Za-z0-9.-]", "-") + "_" + port;
  }

  public AssignmentRouting routing() {
    return routing;
  }

  public OwnedPartitions owned() {
    return owned;
  }

  /** This node's share of user and topic quotas, following the ACTIVE members of the membership. */
  public ActiveNodesQuotaShare quotaShare() {
    return quotaShare;
  }

  /** {@code store} that tells every node after a topic create, change or delete (see {@link TopicChangeBroadcast}). */
  public MetadataStore broadcasting(MetadataStore store) {
    return (MetadataStore) java.lang.reflect.Proxy.newProxyInstance(MetadataStore.class.getClassLoader(),
        new Class<?>[] {MetadataStore.class}, (proxy, method, args) -> {
          Object result;
          try {
            result = method.invoke(store, args);
          } catch (java.lang.reflect.InvocationTargetException e) {
            throw e.getCause();
          }
          TopicChangeBroadcast b = broadcast;
          if (b != null && Boolean.TRUE.equals(result)
              && (method.getName().equals("createTopic") || method.getName().equals("replaceTopic")
              || method.getName().equals("deleteTopic"))) {
            b.bump();
          }
          return result;
        });
  }

  /**
   * What this node's load is measured from: the number of partition requests (puts and gets of
   * the partitions it owns) it has served so far. Set before {@link #join}.
   */
  public void loadCountedBy(LongSupplier requestCount) {
    this.requestCount = requestCount;
  }

  /** The measurement and publication of this node's load (null before {@link #join}). */
  public LoadPublisher loadPublisher() {
    return loadPublisher;
  }

  /**
   * Registers {@code self} in ZooKeeper (with load 0 and whether it sheds), starts following the
   * membership and measuring its load (one step a second on the cluster thread).
   */
  public void join(NodeInfo self) throws IOException {
    routing.self(self.withLoad(0, settings.loadPublishing().sheddingEnabled()));
    membership = new ClusterMembership(settings.zookeeperQuorum(), settings.zookeeperRoot(),
        settings.sessionTimeoutMs(), routing.localNode(), executor, this::viewChanged, this::connectionChanged,
        this::drainRequested);
    routing.connected(true);
    ClusterMembership joined = membership;
    owned.confirmSessionWith(joined::sessionConfirmed);
    String id = routing.localNode().id();
    LoadPublisher publisher = new LoadPublisher(settings.loadPublishing(), requestCount,
        () -> routing.assignment().factor(id), (double) settings.loadFactors().floorPerSec() * settings.capacity(),
        joined::publishLoad, clock);
    loadPublisher = publisher;
    // Its own thread: a publication waits for ZooKeeper, which the membership thread must never do.
    loadExecutor.scheduleWithFixedDelay(() -> {
      try {
        if (!closed) publisher.runOnce();
      } catch (RuntimeException e) {
        LOG.warn("Could not measure this node's load", e);
      }
    }, LOAD_SAMPLE_MS, LOAD_SAMPLE_MS, TimeUnit.MILLISECONDS);
    try {
      broadcast = new TopicChangeBroadcast(membership.client(), settings.zookeeperRoot(), executor, () -> {
        if (cache != null) cache.invalidateTopics();
        releaseDeletedTopics();
      });
    } catch (Exception e) {
      throw new IOException("cannot watch the cluster's topic version: " + e, e);
    }
  }

  /**
   * {@code listener} is told the ids of the members in the applied assignment (departed nodes
   * included while the reassign delay keeps them) after every change, on the cluster thread.
   */
  public void onMembersChanged(Consumer<Set<String>> listener) {
    this.membersListener = listener;
  }

  /**
   * What {@link #drain} does with the requests: {@code stopAccepting} first (new puts and gets,
   * of any partition, are refused, retriable), then {@code inFlightDone} waits at most the ms it
   * is given for the requests this node accepted (queued, running, or forwarded to their owner)
   * to be answered, and says whether they were.
   */
  public void drainWaitsFor(Runnable stopAccepting, LongPredicate inFlightDone) {
    this.stopAccepting = stopAccepting;
    this.inFlightDone = inFlightDone;
  }

  /** After a topic change: the logs of topics deleted through any node are closed here too. */
  private void releaseDeletedTopics() {
    if (owned.ownedCount() == 0) return;
    try {
      owned.releaseDeletedTopics(store.topics().stream().map(TopicRecord::resourceName)
          .collect(Collectors.toUnmodifiableSet()));
    } catch (RuntimeException e) {
      LOG.warn("Could not list topics after a topic change; logs of deleted topics close when idle", e);
    }
  }

  /** A new membership view (from {@link ClusterMembership}, on the cluster thread). */
  void viewChanged(MembershipView view) {
    if (closed) return;
    lastObserved = view;
    quotaShare.apply(view);
    long due = routing.apply(view);
    owned.reconcile();
    try {
      membersListener.accept(routing.assignment().view().nodes().stream().map(NodeInfo::id)
          .collect(Collectors.toUnmodifiableSet()));
    } catch (RuntimeException e) {
      LOG.warn("A membership listener failed", e);
    }
    if (due > 0) {
      long waitMs = Math.max(1, due - System.currentTimeMillis());
      executor.schedule(() -> viewChanged(lastObserved), waitMs, TimeUnit.MILLISECONDS);
    }
    LOG.debug("Applied membership version {}: {}", routing.version(), view.nodes());
  }

  private void connectionChanged(boolean connected) {
    routing.connected(connected);
    owned.reconcile(); // not connected: every partition released at once
  }

  private void drainRequested() {
    LOG.info("A drain of node {} was requested", routing.localNode().id());
    Thread t = new Thread(() -> {
      try {
        drain();
      } catch (RuntimeException e) {
        LOG.warn("Drain failed", e);
      }
    }, "talos-drain");
    t.setDaemon(true);
    t.start();
  }

  /**
   * Clean shutdown's first half (DelayRemoved): stops accepting requests at once (new puts and
   * gets: PARTITION_NOT_SERVING, retriable, whether this node owns their partition or would
   * forward them), announces DRAINING so the others take its partitions over without the
   * reassign delay, waits up to {@code cluster.drain.timeout.ms} for the requests already
   * accepted (queued, running, or forwarded to another node) to be answered, and releases the
   * partitions (each log closed after its append under way). Completes {@link #drained()}.
   * Idempotent.
   */
  public void drain() {
    synchronized (drained) {
      if (drained.isDone()) return;
      stopAccepting.run(); // before routing says DRAINING: whoever sees DRAINING sees the refusal
      routing.draining();
      ClusterMembership m = membership;
      if (m != null) {
        try {
          m.setState(NodeState.DRAINING);
        } catch (IOException e) {
          LOG.warn("Could not announce DRAINING; others take the partitions over after the reassign delay", e);
        }
      }
      long waitStart = System.nanoTime();
      boolean done = inFlightDone.test(settings.drainTimeoutMs());
      long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - waitStart);
      if (!done) {
        LOG.warn("Requests still in flight after {} ms ({}); giving the partitions up anyway",
            waitedMs, ServerConfig.CLUSTER_DRAIN_TIMEOUT_MS);
      }
      int released = owned.reconcile();
      LOG.info("Node {} drained: waited {} ms for requests in flight, released {} partitions",
          routing.localNode().id(), waitedMs, released);
      drained.complete(null);
    }
  }

  /** Completes when a drain (requested or called) has released every partition. */
  public CompletableFuture<Void> drained() {
    return drained;
  }

  /** Requests the drain of any member (it sees the request in ZooKeeper). */
  public void requestDrain(String nodeId) throws IOException {
    if (!nodeId.matches(ClusterSettings.NODE_ID_PATTERN)) {
      throw new IllegalArgumentException("node id '" + nodeId + "' is invalid: letters, digits, '.', '_', '-'");
    }
    if (routing.assignment().view().node(nodeId) == null) {
      throw new IllegalArgumentException("no member " + nodeId + "; members: "
          + routing.assignment().view().nodes().stream().map(NodeInfo::id).toList());
    }
    membership.requestDrain(nodeId);
  }

  /**
   * The status /ops/cluster answers: this node, the assignment version, whether shedding by load
   * applies, this node's measured load, and each member with its state, capacity, published load,
   * traffic factor, virtual nodes and the number of partitions (of every topic) assigned to it.
   */
  public ObjectNode status() {
    ObjectNode body = JSON.createObjectNode();
    ConsistentHashAssignment a = routing.assignment();
    body.put("node", routing.localNode().id());
    body.put("serving", routing.serving());
    body.put("assignmentVersion", a.version());
    body.put("ownedPartitions", owned.ownedCount());
    body.put("quotaShare", quotaShare.fraction());
    boolean shedding = a.view().nodes().stream().filter(n -> n.state() == NodeState.ACTIVE)
        .allMatch(NodeInfo::loadShedding) && a.view().nodes().stream().anyMatch(n -> n.state() == NodeState.ACTIVE);
    body.put("loadShedding", shedding);
    LoadPublisher publisher = loadPublisher;
    if (publisher != null) body.put("loadMeasured", Math.round(publisher.load() * 100) / 100.0);
    Map<String, Integer> counts = new TreeMap<>();
    a.view().nodes().forEach(n -> counts.put(n.id(), 0));
    int total = 0;
    try {
      for (TopicRecord t : store.topics()) {
        for (int p = 0; p < t.partitionCount(); p++) {
          NodeInfo o = a.owner(t.name(), p);
          if (o != null) counts.merge(o.id(), 1, Integer::sum);
          total++;
        }
      }
    } catch (RuntimeException e) {
      body.put("partitionsError", "cannot list topics: " + e.getMessage());
    }
    body.put("partitions", total);
    ArrayNode nodes = body.putArray("nodes");
    for (NodeInfo n : a.view().nodes()) {
      nodes.addObject().put("id", n.id()).put("apiUrl", n.apiUrl()).put("state", n.state().name())
          .put("capacity", n.capacity()).put("load", n.load()).put("loadShedding", n.loadShedding())
          .put("factor", a.factor(n.id())).put("vnodes", a.vnodes(n.id()))
          .put("partitions", counts.getOrDefault(n.id(), 0));
    }
    return body;
  }

  /** Leaves the cluster (the session ends: the entry goes at once). */
  @Override
  public void close() {
    closed = true;
    routing.connected(false);
    if (broadcast != null) broadcast.close();
    if (membership != null) membership.close();
    loadExecutor.shutdownNow();
    executor.shutdownNow();
  }
}
