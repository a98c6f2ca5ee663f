package io.talos.server.cluster;

import io.talos.server.quota.QuotaShare;

/**
 * A node's share of the cluster-wide user and topic quotas in cluster mode: one over the number of
 * ACTIVE members of the latest membership view. Partitions are spread over the ACTIVE members, so
 * an account's traffic is too, and the members together admit about the quota. A DRAINING member
 * is assigned no partitions and is not counted; a view with no ACTIVE member (before this node
 * joined, or while every member drains) gives the whole quota.
 *
 * <p>A change of the share gives the throttle buckets at the new rate (they start full: one burst
 * per membership change at most).
 *
 * <p>Thread-safety: {@link #apply} runs on the membership thread, {@link #fraction} on request
 * threads; the fraction is one volatile double.
 */
public final class ActiveNodesQuotaShare implements QuotaShare {
  private volatile double fraction = 1.0;
  private volatile int activeNodes;

  /** Takes the share from {@code view}. */
  public void apply(MembershipView view) {
    int active = (int) view.nodes().stream().filter(n -> n.state() == NodeState.ACTIVE).count();
    activeNodes = active;
    fraction = share(active);
  }

  /** The share of a node when {@code activeNodes} members are ACTIVE. */
  static double share(int activeNodes) {
    return activeNodes <= 1 ? 1.0 : 1.0 / activeNodes;
  }

  /** ACTIVE members of the last view applied (0 before the first). */
  public int activeNodes() {
    return activeNodes;
  }

  @Override
  public double fraction() {
    return fraction;
  }
}
