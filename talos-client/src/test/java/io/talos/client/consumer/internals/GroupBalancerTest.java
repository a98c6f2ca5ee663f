package io.talos.client.consumer.internals;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The SDK 2.0.2's balancing rule, and that workers stepping with it converge. */
class GroupBalancerTest {
  @Test
  void targetsAreTheSdksList() {
    assertEquals(List.of(6), GroupBalancer.targets(6, 1));
    assertEquals(List.of(2, 2, 1, 1), GroupBalancer.targets(6, 4));
    assertEquals(List.of(1, 1), GroupBalancer.targets(2, 5));
    assertEquals(List.of(3, 3), GroupBalancer.targets(6, 2));
  }

  @Test
  void workersAreRankedByHeldCountThenByIdDescending() {
    Map<String, List<Integer>> view = new TreeMap<>();
    view.put("a", new ArrayList<>(List.of(0, 1, 2)));
    view.put("b", new ArrayList<>());
    view.put("c", new ArrayList<>());
    // 3 workers, 3 partitions: targets [1, 1, 1]; a releases its first two
    assertEquals(List.of(0, 1), GroupBalancer.decide("a", 3, view, List.of(0, 1, 2), new Random(1)).toRelease());
    // b and c see nothing idle yet
    assertTrue(GroupBalancer.decide("b", 3, view, List.of(), new Random(1)).isEmpty());
    // 4 partitions: targets [2, 1, 1]; ranked a(3), c(0), b(0): c gets 1 idle partition
    view.put("a", new ArrayList<>(List.of(0, 1, 2)));
    assertEquals(List.of(3), GroupBalancer.decide("c", 4, view, List.of(), new Random(1)).toLock());
    // a worker not in the view changes nothing
    assertTrue(GroupBalancer.decide("z", 4, view, List.of(), new Random(1)).isEmpty());
  }

  @Test
  void workersSteppingOnASharedViewConvergeToFloorOrCeiling() {
    Random random = new Random(42);
    for (int partitions = 1; partitions <= 12; partitions++) {
      for (int workers = 1; workers <= 6; workers++) {
        Map<String, List<Integer>> held = new TreeMap<>();
        for (int w = 0; w < workers; w++) held.put("w" + w, new ArrayList<>());
        for (int round = 0; round < 20; round++) {
          for (String w : held.keySet()) {
            Map<String, List<Integer>> view = new TreeMap<>();
            held.forEach((k, v) -> view.put(k, List.copyOf(v)));
            GroupBalancer.Decision d = GroupBalancer.decide(w, partitions, view, held.get(w), random);
            held.get(w).removeAll(d.toRelease());
            held.get(w).addAll(d.toLock());
          }
        }
        Set<Integer> all = new HashSet<>();
        int total = 0;
        for (List<Integer> l : held.values()) {
          all.addAll(l);
          total += l.size();
          int floor = partitions / workers;
          int ceil = (partitions + workers - 1) / workers;
          assertTrue(l.size() == floor || l.size() == ceil,
              partitions + " over " + workers + ": " + held);
        }
        assertEquals(partitions, total, "no partition twice: " + held);
        assertEquals(partitions, all.size());
      }
    }
  }
}
