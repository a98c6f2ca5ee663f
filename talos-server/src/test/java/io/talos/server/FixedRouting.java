package io.talos.server;

import io.talos.server.cluster.NodeInfo;
import io.talos.server.cluster.NodeState;
import io.talos.server.cluster.PartitionRouting;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A routing fixed by a test: partition id (of any topic) → owner node; a partition without an
 * owner is NOT_SERVING. The owners are set once every node has started (their ports known).
 */
final class FixedRouting implements PartitionRouting {
  private final String localId;
  private final Map<Integer, NodeInfo> owners = new ConcurrentHashMap<>();
  private volatile NodeInfo local;
  private volatile long version = 1;

  FixedRouting(String localId) {
    this.localId = localId;
    this.local = new NodeInfo(localId, "http://127.0.0.1:0", "127.0.0.1", 0, NodeState.ACTIVE, 1);
  }

  static NodeInfo node(String id, TalosServer server) {
    return new NodeInfo(id, server.endpoint().toString(), "127.0.0.1", server.peerPort(), NodeState.ACTIVE, 1);
  }

  void own(int partition, NodeInfo owner) {
    owners.put(partition, owner);
    if (owner.id().equals(localId)) local = owner;
    version++;
  }

  void unassign(int partition) {
    owners.remove(partition);
    version++;
  }

  @Override
  public Route route(String topicName, int partitionId) {
    NodeInfo owner = owners.get(partitionId);
    if (owner == null) return Route.NOT_SERVING;
    return new Route(owner.id().equals(localId) ? Route.Kind.LOCAL : Route.Kind.PEER, owner);
  }

  @Override
  public long version() {
    return version;
  }

  @Override
  public NodeInfo localNode() {
    return local;
  }
}
