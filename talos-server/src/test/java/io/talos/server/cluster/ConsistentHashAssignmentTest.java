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
    return map(new ConsistentHashAssignment(new MembershipView(1, nodes), 256));
  }

  /** The defaults: factors 0.25, 0.5, 0.75, 1; loads below 100 requests/s count as 100. */
  private static final LoadFactors SHEDDING = new LoadFactors(25, 4, 100);

  private static Map<String, String> map(ConsistentHashAssignment a) {
    Map<String, String> out = new HashMap<>();
    for (int t = 0; t < TOPICS; t++) {
      for (int p = 0; p < PARTITIONS; p++) out.put("topic-" + t + "/" + p, a.owner("topic-" + t, p).id());
    }
    return out;
  }

  /** Members node-0..n-1, shedding, with these loads (requests/s). */
  private static List<NodeInfo> loaded(double... loads) {
    List<NodeInfo> out = new ArrayList<>();
    for (int i = 0; i < loads.length; i++) out.add(node("node-" + i, 1).withLoad(loads[i], true));
    return out;
  }

  private static Map<String, String> shedMap(List<NodeInfo> nodes) {
    return map(new ConsistentHashAssignment(new MembershipView(1, nodes), 256, SHEDDING));
  }

  private static Map<String, Integer> counts(Map<String, String> map) {
    Map<String, Integer> counts = new HashMap<>();
    map.values().forEach(id -> counts.merge(id, 1, Integer::sum));
    return counts;
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

  @Test
  void shouldGiveTheCapacityOnlyMapWhenLoadsAreEqualOrBelowTheFloor() {
    Map<String, String> capacityOnly = map(nodes(5));
    assertEquals(capacityOnly, shedMap(loaded(800, 800, 800, 800, 800)), "equal loads: today's map exactly");
    assertEquals(capacityOnly, shedMap(loaded(0, 0, 0, 0, 0)), "no load yet");
    assertEquals(capacityOnly, shedMap(loaded(90, 3, 0, 50, 10)), "an idle cluster (all under the floor) never sheds");
    assertEquals(capacityOnly, shedMap(loaded(110, 100, 95, 100, 105)), "a few percent apart: rounded to factor 1");
  }

  @Test
  void shouldShedOnlyTheHotNodesPartitions() {
    // node-0 reports 3x the mean (600 vs 100 x 4: mean 200): factor round(4/3)/4 = 0.25.
    Map<String, String> before = shedMap(loaded(100, 100, 100, 100, 100));
    Map<String, String> after = shedMap(loaded(600, 100, 100, 100, 100));
    Map<String, Integer> was = counts(before);
    Map<String, Integer> now = counts(after);
    System.out.println("ConsistentHashAssignmentTest: node-0 at 3x the mean owns " + now.get("node-0") + " of 10000 partitions"
        + " (was " + was.get("node-0") + "); counts before " + new java.util.TreeMap<>(was) + ", after "
        + new java.util.TreeMap<>(now) + "; moved " + moved(before, after));
    assertTrue(now.get("node-0") < 0.4 * was.get("node-0"), "the hot node sheds about 3/4: " + was + " -> " + now);
    int betweenCold = 0;
    for (var e : before.entrySet()) {
      if (!e.getValue().equals(after.get(e.getKey())) && !e.getValue().equals("node-0")) betweenCold++;
    }
    // Only the hot node's tokens change, so by construction no partition moves between the others.
    assertEquals(0, betweenCold, "partitions moved between the cold nodes");
    for (int i = 1; i < 5; i++) assertTrue(now.get("node-" + i) > was.get("node-" + i), "node-" + i + " took some");

    // The hot node cools down: it gets exactly its partitions back.
    assertEquals(before, shedMap(loaded(100, 100, 100, 100, 100)));
  }

  @Test
  void shouldBoundMovementBetweenTheOthersWhenASecondNodeWarms() {
    // node-0 is hot (1200 vs mean 320: factor 0.25); then node-1 warms to 500 (mean 400: factor 0.75),
    // node-0 staying at 0.25 (400/1200 rounds to 0.25).
    Map<String, String> before = shedMap(loaded(1200, 100, 100, 100, 100));
    Map<String, String> after = shedMap(loaded(1200, 500, 100, 100, 100));
    ConsistentHashAssignment a = new ConsistentHashAssignment(new MembershipView(1, loaded(1200, 500, 100, 100, 100)),
        256, SHEDDING);
    assertEquals(0.25, a.factor("node-0"));
    assertEquals(0.75, a.factor("node-1"));
    int moved = moved(before, after);
    int notFromNode1 = 0;
    for (var e : before.entrySet()) {
      if (!e.getValue().equals(after.get(e.getKey())) && !e.getValue().equals("node-1")) notFromNode1++;
    }
    System.out.println("ConsistentHashAssignmentTest: node-1 warming to factor 0.75 moved " + moved
        + " partitions, " + notFromNode1 + " of them not node-1's");
    assertEquals(0, notFromNode1, "only the warming node's partitions move");
    assertTrue(moved > 0 && moved < 0.1 * before.size(), "node-1 shed about a quarter of its ~2,000: " + moved);
  }

  @Test
  void shouldComputeTheSameFactorsAndMapFromTheSameViewOnEveryNode() {
    List<NodeInfo> members = loaded(600, 250, 100, 0, 130);
    List<NodeInfo> reversed = new ArrayList<>(members);
    java.util.Collections.reverse(reversed);
    ConsistentHashAssignment one = new ConsistentHashAssignment(new MembershipView(7, members), 256, SHEDDING);
    ConsistentHashAssignment other = new ConsistentHashAssignment(new MembershipView(7, reversed), 256, SHEDDING);
    assertEquals(map(one), map(other));
    for (NodeInfo n : members) {
      assertEquals(one.factor(n.id()), other.factor(n.id()), n.id());
      assertEquals(one.vnodes(n.id()), other.vnodes(n.id()), n.id());
    }
    // mean of max(load, 100) = (600 + 250 + 100 + 100 + 130) / 5 = 236
    assertEquals(0.5, one.factor("node-0"), "236/600 = 0.39 rounds to 0.5");
    assertEquals(1.0, one.factor("node-1"), "236/250 = 0.94 rounds to 1");
    assertEquals(128, one.vnodes("node-0"));
    assertEquals(256, one.vnodes("node-3"));
  }

  @Test
  void shouldApplyNoFactorWhileAnyActiveMemberDoesNotShed() {
    List<NodeInfo> members = new ArrayList<>(loaded(600, 100, 100, 100, 100));
    members.set(3, members.get(3).withLoad(100, false)); // shedding off there (or an older node)
    assertEquals(map(nodes(5)), shedMap(members));
    // A DRAINING member owns nothing and does not count: the mean of the 4 others is 225, 225/600 rounds to 0.5.
    members.set(3, members.get(3).withState(NodeState.DRAINING));
    ConsistentHashAssignment a = new ConsistentHashAssignment(new MembershipView(1, members), 256, SHEDDING);
    assertEquals(0.5, a.factor("node-0"));
    assertEquals(0.0, a.factor("node-3"));
  }

  @Test
  void shouldCompareLoadPerUnitOfCapacity() {
    // b has twice the capacity and twice the load: both are at the mean per unit of capacity.
    List<NodeInfo> members = List.of(node("a", 1).withLoad(300, true), node("b", 2).withLoad(600, true),
        node("c", 1).withLoad(300, true));
    ConsistentHashAssignment a = new ConsistentHashAssignment(new MembershipView(1, members), 256, SHEDDING);
    assertEquals(1.0, a.factor("a"));
    assertEquals(1.0, a.factor("b"));
    assertEquals(512, a.vnodes("b"));
    // The minimum: a node 1000x the others (33400/100000 rounds to 0.3) gets no less than 0.5.
    ConsistentHashAssignment hot = new ConsistentHashAssignment(new MembershipView(1,
        loaded(100_000, 100, 100)), 256, new LoadFactors(50, 10, 100));
    assertEquals(0.5, hot.factor("node-0"));
    assertEquals(128, hot.vnodes("node-0"));
  }
}
