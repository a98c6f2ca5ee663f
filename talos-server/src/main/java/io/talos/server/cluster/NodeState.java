package io.talos.server.cluster;

/**
 * A node's state as it announces it in the cluster membership. An ACTIVE node is assigned
 * partitions; a DRAINING node keeps its membership entry while it finishes in-flight requests but
 * is assigned none, so its partitions move at once (a clean shutdown).
 */
public enum NodeState {
  ACTIVE,
  DRAINING
}
