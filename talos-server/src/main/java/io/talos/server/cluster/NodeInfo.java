package io.talos.server.cluster;

import java.util.Objects;

/**
 * One Talos node as the cluster sees it: what it registers in the membership and what every node
 * needs to route to it.
 *
 * @param id stable node id, unique in the cluster (config {@code cluster.node.id})
 * @param apiUrl the node's client API base URL ({@code http://host:port}), handed to clients that
 *     route directly to owners
 * @param peerHost host of the node's peer port, where other nodes forward requests
 * @param peerPort the peer port
 * @param state ACTIVE or DRAINING
 * @param capacity relative weight of the node in the assignment (virtual nodes scale with it)
 */
public record NodeInfo(
    String id, String apiUrl, String peerHost, int peerPort, NodeState state, int capacity) {
  public NodeInfo {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(apiUrl, "apiUrl");
    Objects.requireNonNull(state, "state");
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be >= 1: " + capacity);
    }
  }

  public NodeInfo withState(NodeState newState) {
    return new NodeInfo(id, apiUrl, peerHost, peerPort, newState, capacity);
  }
}
