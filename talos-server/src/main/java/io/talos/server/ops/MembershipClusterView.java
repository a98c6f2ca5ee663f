package io.talos.server.ops;

import io.talos.server.cluster.ClusterNode;
import io.talos.server.cluster.NodeInfo;
import java.io.IOException;
import java.util.List;
import java.util.Objects;

/**
 * The ops API's view of a cluster node: the members and owners come from the node's membership
 * and assignment (memory only), a drain is requested through the membership as
 * {@code bin/talos cluster drain} does. Moving a single partition is refused: placement is by
 * consistent hashing, so a partition follows its node (drain the node, or change its capacity).
 *
 * <p>Thread-safe (reads the routing's current assignment).
 */
public final class MembershipClusterView implements ClusterView {
  private final ClusterNode node;

  public MembershipClusterView(ClusterNode node) {
    this.node = Objects.requireNonNull(node, "node");
  }

  @Override
  public boolean clusterMode() {
    return true;
  }

  @Override
  public List<NodeInfo> nodes() {
    return node.routing().assignment().view().nodes();
  }

  @Override
  public NodeInfo localNode() {
    return node.routing().localNode();
  }

  @Override
  public NodeInfo owner(String topicName, int partitionId) {
    return node.routing().owner(topicName, partitionId);
  }

  @Override
  public void drain(String nodeId) throws ActionRefusedException {
    try {
      node.requestDrain(nodeId);
    } catch (IllegalArgumentException e) {
      throw new ActionRefusedException(404, e.getMessage());
    } catch (IOException e) {
      throw new ActionRefusedException(503, "the drain request could not be written to ZooKeeper: " + e.getMessage()
          + "; retry");
    }
  }

  @Override
  public void move(String topicName, int partitionId, String targetNodeId) throws ActionRefusedException {
    throw new ActionRefusedException(409, "moving one partition is not supported: partitions are placed by"
        + " consistent hashing and follow their node; drain the node (POST /ops/nodes/{id}/drain) or change"
        + " its cluster.node.capacity");
  }
}
