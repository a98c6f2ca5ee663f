package io.talos.server.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The assignment over many partitions: deterministic, balanced by capacity, minimal movement. */
class ConsistentHashAssignmentTest {
  private static final int TOPICS = 100;
  private static final int PARTITIONS = 100; // 10,000 partitions in all

  private static NodeInfo node(String id, int capacity) {
    return new NodeInfo(id, "http://" + id + ":8080", id, 9090, NodeState.ACTIVE, capacity);
  }

  private static List<NodeInfo> nodes(int n) {
    List<NodeInfo> out = new ArrayList<>();
    for (int i = 0; i < n; i++) out.add(node("node-" + i, 1));
    return out;
  }

  private static Map<String, String> map(List<NodeInfo> nodes) {
    ConsistentHashAssignment a = new ConsistentHashAssignment(new MembershipView(1, nodes), 256);
    Map<String, String> out = new HashMap<>();
    for (int t = 0; t < TOPICS; t++) {
      for (int p = 0; p < PARTITIONS; p++) out.put("topic-" + t + "/" + p, a.owner("topic-" + t, p).id());
    }
    return out;
  }

  private static int moved(Map<String, String> before, Map<String, String> after) {
    int moved = 0;
    for (var e : before.entrySet()) if (!e.getValue().equals(after.get(e.getKey()))) moved++;
    return moved;
  }

  @Test
  void shouldMapTheSameMembersTheSameWayWhateverTheirOrder() {
    List<NodeInfo> members = nodes(5);
    List<NodeInfo> reversed = new ArrayList<>(members);
    java.util.Collections.reverse(reversed);
    assertEquals(map(members), map(reversed));
  }

  @Test
  void shouldMoveAtMostItsShareWhenANodeIsAdded() {
    for (int n : new int[] {2, 3, 5, 9}) {
      Map<String, String> before = map(nodes(n));
      Map<String, String> after = map(nodes(n + 1));
      int moved = moved(before, after);
      double bound = (1.0 / (n + 1) + 0.05) * before.size();
      assertTrue(moved <= bound, "adding node " + (n + 1) + " moved " + moved + " of " + before.size()
          + " partitions; at most 1/N + 5% = " + bound);
      for (var e : before.entrySet()) {
        String now = after.get(e.getKey());
        assertTrue(now.equals(e.getValue()) || now.equals("node-" + n), "a partition moved between old nodes: " + e);
      }
    }
  }

  @Test
  void shouldMoveOnlyTheRemovedNodesPartitions() {
    Map<String, String> before = map(nodes(4));
    List<NodeInfo> three = new ArrayList<>(nodes(4));
    three.remove(1);
    Map<String, String> after = map(three);
    for (var e : before.entrySet()) {
      if (!e.getValue().equals("node-1")) assertEquals(e.getValue(), after.get(e.getKey()), e.getKey());
    }
  }

  @Test
  void shouldGiveNoPartitionToADrainingNodeAndScaleWithCapacity() {
    List<NodeInfo> members = List.of(node("a", 1), node("b", 2), node("c", 1).withState(NodeState.DRAINING));
    Map<String, Integer> counts = new HashMap<>();
    map(members).values().forEach(id -> counts.merge(id, 1, Integer::sum));
    assertNull(counts.get("c"), "a draining node owns nothing");
    double ratio = counts.get("b") / (double) counts.get("a");
    assertTrue(ratio > 1.6 && ratio < 2.5, "capacity 2 owns about twice as many: " + counts);
    assertNull(new ConsistentHashAssignment(MembershipView.EMPTY, 256).owner("t", 0));
  }

  @Test
  void shouldKeepTheHashFixedAcrossReleases() {
    // Part of the protocol: nodes of different builds must agree. Changing it moves partitions.
    assertEquals(-7_037_289_532_141_910_427L, ConsistentHashAssignment.hash("orders/0"));
    assertNotEquals(ConsistentHashAssignment.hash("orders/0"), ConsistentHashAssignment.hash("orders/1"));
  }
}
