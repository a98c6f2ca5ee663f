package io.talos.server.cluster;

import java.util.Comparator;
import java.util.List;

/**
 * The members of the cluster as one node applies them, with the version the assignment computed
 * from it carries. Every node that applies the same members at the same version computes the same
 * assignment.
 *
 * @param version grows with every change of the members (a ZooKeeper zxid: the newest creation,
 *     deletion or state change among the member znodes), so a larger version is a newer view
 * @param nodes the members, sorted by id
 */
public record MembershipView(long version, List<NodeInfo> nodes) {
  public static final MembershipView EMPTY = new MembershipView(0, List.of());

  public MembershipView {
    nodes = nodes.stream().sorted(Comparator.comparing(NodeInfo::id)).toList();
  }

  /** The member with this id, or null. */
  public NodeInfo node(String id) {
    for (NodeInfo n : nodes) if (n.id().equals(id)) return n;
    return null;
  }
}
