package io.talos.server.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.server.ManualClock;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Reassign delay, versions and serving state of a node's routing, stepped with a manual clock. */
class AssignmentRoutingTest {
  private static NodeInfo node(String id) {
    return new NodeInfo(id, "http://" + id, id, 0, NodeState.ACTIVE, 1);
  }

  private static String partitionOwnedBy(AssignmentRouting r, String id) {
    for (int p = 0; p < 1000; p++) if (r.owner("t", p).id().equals(id)) return "t/" + p;
    throw new AssertionError("no partition on " + id);
  }

  @Test
  void shouldReassignADepartedNodesPartitionsOnlyAfterTheDelay() {
    ManualClock clock = new ManualClock(1_000);
    AssignmentRouting r = new AssignmentRouting(node("a"), 64, 2_000, clock);
    r.connected(true);
    assertEquals(0, r.apply(new MembershipView(10, List.of(node("a"), node("b")))));
    assertEquals(21, r.version());
    int p = Integer.parseInt(partitionOwnedBy(r, "b").substring(2));
    assertEquals(PartitionRouting.Route.Kind.PEER, r.route("t", p).kind());

    long due = r.apply(new MembershipView(12, List.of(node("a")))); // b's session ended
    assertEquals(3_000, due);
    assertEquals("b", r.owner("t", p).id(), "b keeps its partitions during the delay");
    assertEquals(24, r.version(), "a view with a pending departure has an even version");

    clock.advanceMs(1_999);
    r.apply(new MembershipView(12, List.of(node("a"))));
    assertEquals("b", r.owner("t", p).id());
    clock.advanceMs(1);
    assertEquals(0, r.apply(new MembershipView(12, List.of(node("a")))));
    assertEquals("a", r.owner("t", p).id());
    assertEquals(PartitionRouting.Route.Kind.LOCAL, r.route("t", p).kind());
    assertEquals(25, r.version(), "the map changed: the version grew");
  }

  @Test
  void shouldKeepPartitionsOfANodeBackWithinTheDelay() {
    ManualClock clock = new ManualClock(0);
    AssignmentRouting r = new AssignmentRouting(node("a"), 64, 2_000, clock);
    r.apply(new MembershipView(10, List.of(node("a"), node("b"))));
    String p = partitionOwnedBy(r, "b");
    r.apply(new MembershipView(12, List.of(node("a"))));
    clock.advanceMs(1_000);
    r.apply(new MembershipView(14, List.of(node("a"), node("b"))));
    clock.advanceMs(5_000);
    r.apply(new MembershipView(14, List.of(node("a"), node("b"))));
    assertEquals("b", r.owner("t", Integer.parseInt(p.substring(2))).id());
  }

  @Test
  void shouldStopServingAtOnceWhenDisconnectedOrDraining() {
    AssignmentRouting r = new AssignmentRouting(node("a"), 64, 2_000, new ManualClock(0));
    r.apply(new MembershipView(10, List.of(node("a"))));
    assertEquals(PartitionRouting.Route.Kind.NOT_SERVING, r.route("t", 0).kind(), "not connected yet");
    r.connected(true);
    assertEquals(PartitionRouting.Route.Kind.LOCAL, r.route("t", 0).kind());
    r.connected(false);
    assertEquals(PartitionRouting.Route.Kind.NOT_SERVING, r.route("t", 0).kind(), "SUSPENDED/LOST");
    r.connected(true);
    r.draining();
    assertEquals(PartitionRouting.Route.Kind.NOT_SERVING, r.route("t", 0).kind());
    assertEquals(NodeState.DRAINING, r.localNode().state());
    assertTrue(r.version() > 0);
  }

  @Test
  void shouldApplyTheDepartureOfADrainedNodeAtOnce() {
    ManualClock clock = new ManualClock(0);
    AssignmentRouting r = new AssignmentRouting(node("a"), 64, 2_000, clock);
    r.apply(new MembershipView(10, List.of(node("a"), node("b"))));
    r.apply(new MembershipView(11, List.of(node("a"), node("b").withState(NodeState.DRAINING))));
    assertEquals("a", r.owner("t", Integer.parseInt(partitionOwnedBy(r, "a").substring(2))).id());
    assertEquals(0, r.apply(new MembershipView(12, List.of(node("a")))), "nothing pending");
    assertEquals(1, r.assignment().view().nodes().size());
    assertEquals(25, r.version());
  }
}
