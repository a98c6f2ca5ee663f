package io.talos.server.ops;

import io.talos.server.cluster.NodeInfo;
import io.talos.server.cluster.NodeState;
import io.talos.server.cluster.PartitionRouting;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * What the ops API and the console know about the cluster: its nodes, the owner of each
 * partition, and the placement actions. The single-node server uses {@link #singleNode}; the
 * cluster layer implements it from its membership and assignment.
 *
 * <p>Implementations are thread-safe and answer {@link #nodes} and {@link #owner} from memory.
 */
public interface ClusterView {
  /** Whether this server runs in a cluster (drain and move are possible only then). */
  boolean clusterMode();

  /** Every node known to the membership, this one included. */
  List<NodeInfo> nodes();

  /** This node. */
  NodeInfo localNode();

  /** The node that serves a partition now, or null if none does. */
  NodeInfo owner(String topicName, int partitionId);

  /**
   * Starts draining a node: its partitions move to the others.
   *
   * @throws ActionRefusedException why not (unknown node, single-node mode, ...)
   */
  void drain(String nodeId) throws ActionRefusedException;

  /**
   * Moves a partition to another node ({@code targetNodeId}, or the assignment's choice if null).
   *
   * @throws ActionRefusedException why not
   */
  void move(String topicName, int partitionId, String targetNodeId) throws ActionRefusedException;

  /** A placement action that cannot be done, with the HTTP status to answer. */
  final class ActionRefusedException extends Exception {
    private final int httpStatus;

    public ActionRefusedException(int httpStatus, String message) {
      super(message);
      this.httpStatus = httpStatus;
    }

    public int httpStatus() {
      return httpStatus;
    }
  }

  /** The message a single-node server answers placement actions with (HTTP 409). */
  String CLUSTER_MODE_ONLY = "available in cluster mode only";

  /** A single-node server: one node that serves every partition; actions are refused with 409. */
  static ClusterView singleNode(PartitionRouting routing) {
    Objects.requireNonNull(routing, "routing");
    return singleNode(routing::localNode);
  }

  /**
   * As {@link #singleNode(PartitionRouting)}, with this node described when asked ({@code self}
   * may need the bound port, known only once the server listens).
   */
  static ClusterView singleNode(Supplier<NodeInfo> self) {
    Objects.requireNonNull(self, "self");
    return new ClusterView() {
      @Override
      public boolean clusterMode() {
        return false;
      }

      @Override
      public List<NodeInfo> nodes() {
        return List.of(self.get());
      }

      @Override
      public NodeInfo localNode() {
        return self.get();
      }

      @Override
      public NodeInfo owner(String topicName, int partitionId) {
        return self.get();
      }

      @Override
      public void drain(String nodeId) throws ActionRefusedException {
        throw new ActionRefusedException(409, CLUSTER_MODE_ONLY);
      }

      @Override
      public void move(String topicName, int partitionId, String targetNodeId) throws ActionRefusedException {
        throw new ActionRefusedException(409, CLUSTER_MODE_ONLY);
      }
    };
  }

  /** Answers with whatever view {@code current} gives at each call (the server swaps views). */
  final class Delegating implements ClusterView {
    private final Supplier<ClusterView> current;

    public Delegating(Supplier<ClusterView> current) {
      this.current = current;
    }

    @Override
    public boolean clusterMode() {
      return current.get().clusterMode();
    }

    @Override
    public List<NodeInfo> nodes() {
      return current.get().nodes();
    }

    @Override
    public NodeInfo localNode() {
      return current.get().localNode();
    }

    @Override
    public NodeInfo owner(String topicName, int partitionId) {
      return current.get().owner(topicName, partitionId);
    }

    @Override
    public void drain(String nodeId) throws ActionRefusedException {
      current.get().drain(nodeId);
    }

    @Override
    public void move(String topicName, int partitionId, String targetNodeId) throws ActionRefusedException {
      current.get().move(topicName, partitionId, targetNodeId);
    }
  }

  /** This node as a single-node server describes itself. */
  static NodeInfo localNodeInfo(String id, String apiUrl) {
    return new NodeInfo(id, apiUrl, null, 0, NodeState.ACTIVE, 1);
  }
}
