package io.talos.server.quota;

/**
 * The fraction of a cluster-wide quota (a user's or a topic's) this node enforces. A single node
 * enforces all of it ({@code quota.share} = 1.0); in a cluster each node enforces its share, for
 * example 1/N of the nodes serving the account's partitions, so that the cluster as a whole
 * admits about the quota. Per-partition limits are not divided: a partition is served by one node.
 * Implementations must be thread-safe and cheap (called on every put and get).
 */
public interface QuotaShare {
  /** A number in (0, 1]. */
  double fraction();

  static QuotaShare fixed(double fraction) {
    if (!(fraction > 0 && fraction <= 1)) {
      throw new IllegalArgumentException("a quota share must be in (0, 1], was " + fraction);
    }
    return () -> fraction;
  }
}
