package io.talos.server.cluster;

import java.util.Objects;

/**
 * Where a partition is served: the one seam between the cluster layer (membership, assignment,
 * ownership) and the request path (front-end, forwarding, direct routing).
 *
 * <p>The front-end asks {@link #route} for each put and get before it schedules the call: LOCAL
 * serves it here, PEER forwards it to the owner (at most once: a forwarded request that reaches a
 * node which does not own the partition is answered PARTITION_NOT_SERVING, never forwarded again),
 * NOT_SERVING answers PARTITION_NOT_SERVING (retriable) at once.
 *
 * <p>Implementations are thread-safe and answer from memory (no I/O on the request path).
 */
public interface PartitionRouting {

  /** The route of one partition under the current assignment. */
  Route route(String topicName, int partitionId);

  /**
   * Version of the assignment {@link #route} answers from; it only grows. Clients that cache the
   * partition map compare it to decide whether their map is stale.
   */
  long version();

  /** This node. */
  NodeInfo localNode();

  /** Routing of a single-node server: every partition is served here, version 0. */
  static PartitionRouting singleNode(NodeInfo self) {
    Objects.requireNonNull(self, "self");
    Route local = new Route(Route.Kind.LOCAL, self);
    return new PartitionRouting() {
      @Override
      public Route route(String topicName, int partitionId) {
        return local;
      }

      @Override
      public long version() {
        return 0;
      }

      @Override
      public NodeInfo localNode() {
        return self;
      }
    };
  }

  /**
   * A routing decision.
   *
   * @param kind LOCAL, PEER or NOT_SERVING
   * @param node the serving node (this node for LOCAL, the owner for PEER, null for NOT_SERVING)
   */
  record Route(Kind kind, NodeInfo node) {
    public enum Kind {
      LOCAL,
      PEER,
      NOT_SERVING
    }

    public static final Route NOT_SERVING = new Route(Kind.NOT_SERVING, null);
  }
}
