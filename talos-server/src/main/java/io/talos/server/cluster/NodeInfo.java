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
 * @param load the node's measured load as it last published it: partition requests per second,
 *     scaled to its full weight (see {@link LoadPublisher}); 0 before the first measurement
 * @param loadShedding whether the node takes part in shedding by load
 *     ({@code cluster.assignment.load.shedding.enabled}); {@link LoadFactors} applies only when
 *     every ACTIVE member does
 */
public record NodeInfo(String id, String apiUrl, String peerHost, int peerPort, NodeState state, int capacity,
    double load, boolean loadShedding) {
  public NodeInfo {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(apiUrl, "apiUrl");
    Objects.requireNonNull(state, "state");
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be >= 1: " + capacity);
    }
    if (!(load >= 0) || Double.isInfinite(load)) {
      throw new IllegalArgumentException("load must be a finite number >= 0: " + load);
    }
  }

  /** A node that publishes no load and does not shed (load 0). */
  public NodeInfo(String id, String apiUrl, String peerHost, int peerPort, NodeState state, int capacity) {
    this(id, apiUrl, peerHost, peerPort, state, capacity, 0, false);
  }

  public NodeInfo withState(NodeState newState) {
    return new NodeInfo(id, apiUrl, peerHost, peerPort, newState, capacity, load, loadShedding);
  }

  public NodeInfo withLoad(double newLoad, boolean shedding) {
    return new NodeInfo(id, apiUrl, peerHost, peerPort, state, capacity, newLoad, shedding);
  }
}
