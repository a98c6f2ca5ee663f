package io.talos.server.cluster;

import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * {@link PartitionRouting} of a cluster node: the owner of each partition under the {@link
 * ConsistentHashAssignment} of the membership view this node applied.
 *
 * <p><b>Departures wait.</b> A member that disappears from ZooKeeper (its session ended: a crash, a
 * kill, a long pause, or a close without drain) keeps its place in the applied view for {@code
 * reassignDelayMs}, so a node back within it keeps its partitions and nothing moves for a blip;
 * its partitions route to it meanwhile (they are unserved: that delay is the cost of a crash). A
 * DRAINING member has no tokens, so its partitions move at once, and its departure is applied at
 * once. A view that still holds departed
 * members has version {@code 2 x zxid}, the same members without them {@code 2 x zxid + 1}: the
 * version grows with each change of the map.
 *
 * <p><b>Serving.</b> This node answers LOCAL only while it is connected to ZooKeeper and not
 * draining; otherwise its own partitions are NOT_SERVING (PARTITION_NOT_SERVING, retriable), at once
 * and before another node can take them over.
 *
 * <p>Thread-safe: {@link #route} reads one volatile snapshot; {@link #apply} is called by the
 * membership thread (and tests), with the time from the injected clock.
 */
public final class AssignmentRouting implements PartitionRouting {
  private volatile String selfId;
  private final int vnodesPerCapacity;
  private final LoadFactors loadFactors;
  private final long reassignDelayMs;
  private final Clock clock;
  private volatile NodeInfo self;
  private volatile ConsistentHashAssignment assignment;
  private volatile boolean connected;
  private volatile boolean draining;
  /** Departed members still in the applied view, with the time they were first seen gone. Membership thread only. */
  private final Map<String, Departed> departed = new HashMap<>();

  private record Departed(NodeInfo node, long sinceMs) {}

  /** Routing over the capacity-only map (no shedding by load). */
  public AssignmentRouting(NodeInfo self, int vnodesPerCapacity, long reassignDelayMs, Clock clock) {
    this(self, vnodesPerCapacity, LoadFactors.NONE, reassignDelayMs, clock);
  }

  public AssignmentRouting(NodeInfo self, int vnodesPerCapacity, LoadFactors loadFactors, long reassignDelayMs,
      Clock clock) {
    this.self = Objects.requireNonNull(self, "self");
    this.selfId = self.id();
    this.vnodesPerCapacity = vnodesPerCapacity;
    this.loadFactors = Objects.requireNonNull(loadFactors, "loadFactors");
    this.reassignDelayMs = reassignDelayMs;
    this.clock = clock;
    this.assignment = new ConsistentHashAssignment(MembershipView.EMPTY, vnodesPerCapacity);
  }

  /**
   * Applies the members as read from ZooKeeper at {@code observed.version()}: new members and
   * state changes at once, departures after the delay.
   *
   * @return the time (clock ms) at which a pending departure is due, so the caller applies the
   *     same view again then; 0 if none is pending
   */
  public synchronized long apply(MembershipView observed) {
    long now = clock.millis();
    Map<String, NodeInfo> applied = new HashMap<>();
    observed.nodes().forEach(n -> applied.put(n.id(), n));
    departed.keySet().removeIf(applied::containsKey); // came back in time
    for (NodeInfo before : assignment.view().nodes()) {
      // A DRAINING member owns nothing: its departure changes no partition and needs no delay.
      if (!applied.containsKey(before.id()) && !before.id().equals(selfId) && before.state() == NodeState.ACTIVE) {
        departed.putIfAbsent(before.id(), new Departed(before, now));
      }
    }
    long due = 0;
    for (Departed d : new ArrayList<>(departed.values())) {
      if (now - d.sinceMs() >= reassignDelayMs) {
        departed.remove(d.node().id());
      } else {
        applied.put(d.node().id(), d.node());
        long at = d.sinceMs() + reassignDelayMs;
        due = due == 0 ? at : Math.min(due, at);
      }
    }
    long version = 2 * observed.version() + (departed.isEmpty() ? 1 : 0);
    version = Math.max(version, assignment.version()); // never back (a stale read after a newer one)
    List<NodeInfo> nodes = new ArrayList<>(applied.values());
    MembershipView view = new MembershipView(version, nodes);
    if (!view.equals(assignment.view())) assignment = new ConsistentHashAssignment(view, vnodesPerCapacity, loadFactors);
    NodeInfo me = applied.get(selfId);
    if (me != null) self = me;
    return due;
  }

  /** This node as it registers (known once the API listens); set before it joins. */
  public synchronized void self(NodeInfo node) {
    this.self = Objects.requireNonNull(node, "node");
    this.selfId = node.id();
  }

  /** The ZooKeeper connection: false stops serving at once. */
  public void connected(boolean isConnected) {
    this.connected = isConnected;
  }

  /** This node started draining: it stops serving its partitions at once, before others see it. */
  public void draining() {
    this.draining = true;
    this.self = self.withState(NodeState.DRAINING);
  }

  /** Whether this node serves the partitions it owns now (connected, not draining). */
  public boolean serving() {
    return connected && !draining;
  }

  public ConsistentHashAssignment assignment() {
    return assignment;
  }

  /** The partition's owner under the applied assignment (null if no member is ACTIVE). */
  public NodeInfo owner(String topicName, int partitionId) {
    return assignment.owner(topicName, partitionId);
  }

  @Override
  public Route route(String topicName, int partitionId) {
    NodeInfo owner = assignment.owner(topicName, partitionId);
    if (owner == null) return Route.NOT_SERVING;
    if (owner.id().equals(selfId)) return serving() ? new Route(Route.Kind.LOCAL, self) : Route.NOT_SERVING;
    return new Route(Route.Kind.PEER, owner);
  }

  @Override
  public long version() {
    return assignment.version();
  }

  @Override
  public NodeInfo localNode() {
    return self;
  }
}
