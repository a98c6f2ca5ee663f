package io.talos.bench.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class AckRunsTest {
  @Test
  void shouldMergeKeysThatContinueTheLastRunIntoIt() {
    AckRuns runs = new AckRuns();
    for (long k = 0; k < 1000; k++) assertEquals(AckRuns.ABSENT, runs.put(k, 50 + k));
    assertEquals(1, runs.runs());
    assertEquals(1000, runs.keys());
    assertEquals(50, runs.get(0));
    assertEquals(1049, runs.get(999));
    assertEquals(AckRuns.ABSENT, runs.get(1000));
    assertEquals(AckRuns.ABSENT, runs.get(-1));
  }

  @Test
  void shouldStartANewRunAtAGapInKeysOrInValues() {
    AckRuns runs = new AckRuns();
    runs.put(0, 0);
    runs.put(1, 1);
    runs.put(3, 2); // key gap
    runs.put(4, 10); // value gap
    assertEquals(3, runs.runs());
    assertEquals(AckRuns.ABSENT, runs.get(2));
    assertEquals(2, runs.get(3));
    assertEquals(10, runs.get(4));
  }

  @Test
  void shouldFillAGapOutOfOrderAndJoinTheRunsOnBothSides() {
    AckRuns runs = new AckRuns();
    runs.put(0, 0);
    runs.put(2, 2);
    assertEquals(2, runs.runs());
    assertEquals(AckRuns.ABSENT, runs.put(1, 1));
    assertEquals(1, runs.runs());
    assertEquals(3, runs.keys());
  }

  @Test
  void shouldInsertAKeyBeforeEveryRun() {
    AckRuns runs = new AckRuns();
    runs.put(10, 10);
    runs.put(5, 100);
    runs.put(9, 9); // joins the run at 10 from the left
    assertEquals(2, runs.runs());
    assertEquals(100, runs.get(5));
    assertEquals(9, runs.get(9));
    assertEquals(10, runs.get(10));
  }

  @Test
  void shouldReturnTheOldValueAndSplitTheRunWhenAKeyInItsMiddleIsOverwritten() {
    AckRuns runs = new AckRuns();
    for (long k = 0; k < 10; k++) runs.put(k, k);
    assertEquals(5, runs.put(5, 77));
    assertEquals(3, runs.runs());
    assertEquals(10, runs.keys());
    assertEquals(4, runs.get(4));
    assertEquals(77, runs.get(5));
    assertEquals(6, runs.get(6));
  }

  @Test
  void shouldKeepOneRunWhenTheSameKeyIsPutWithTheSameValue() {
    AckRuns runs = new AckRuns();
    for (long k = 0; k < 10; k++) runs.put(k, k);
    assertEquals(3, runs.put(3, 3));
    assertEquals(1, runs.runs());
    assertEquals(10, runs.keys());
  }

  /** A log cut back and written again: each overwrite continues the run of the one before. */
  @Test
  void shouldKeepTwoRunsWhenARangeIsOverwrittenInOrder() {
    AckRuns runs = new AckRuns();
    for (long k = 0; k < 100; k++) runs.put(k, k);
    for (long k = 50; k < 150; k++) runs.put(k, 1000 + k);
    assertEquals(2, runs.runs());
    assertEquals(150, runs.keys());
    assertEquals(49, runs.get(49));
    assertEquals(1050, runs.get(50));
    assertEquals(1149, runs.get(149));
  }

  @Test
  void shouldAgreeWithATreeMapOnRandomPuts() {
    Random random = new Random(3);
    for (int round = 0; round < 200; round++) {
      AckRuns runs = new AckRuns();
      TreeMap<Long, Long> model = new TreeMap<>();
      long key = 0, value = 0;
      for (int i = 0; i < 300; i++) {
        switch (random.nextInt(6)) {
          case 0 -> key = random.nextInt(60); // anywhere, overwriting or filling gaps
          case 1 -> value = random.nextInt(60);
          case 2 -> key += 2; // a gap
          default -> { } // continue
        }
        Long before = model.put(key, value);
        assertEquals(before == null ? AckRuns.ABSENT : before, runs.put(key, value), "put " + key + " -> " + value);
        key++;
        value++;
      }
      assertEquals(model.size(), runs.keys());
      for (long k = -1; k <= model.lastKey() + 1; k++) {
        assertEquals(model.getOrDefault(k, AckRuns.ABSENT), runs.get(k), "key " + k);
      }
      assertRunsSortedDisjointAndMaximal(runs, model);
    }
  }

  private static void assertRunsSortedDisjointAndMaximal(AckRuns runs, TreeMap<Long, Long> model) {
    int expectedRuns = 0;
    Map.Entry<Long, Long> previous = null;
    for (Map.Entry<Long, Long> e : model.entrySet()) {
      boolean continues = previous != null && e.getKey() == previous.getKey() + 1
          && e.getValue() == previous.getValue() + 1;
      if (!continues) expectedRuns++;
      previous = e;
    }
    assertEquals(expectedRuns, runs.runs(), "runs are merged whenever one continues the other");
    for (int r = 1; r < runs.runs(); r++) {
      assertTrue(runs.runStart(r - 1) + runs.runCount(r - 1) <= runs.runStart(r), "runs sorted and disjoint");
    }
  }
}
