package io.talos.client.producer;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class KeyHashPartitionerTest {
  /** Kafka's own murmur2 test vectors (its UtilsTest): the hash is Kafka's. */
  @Test
  void murmur2MatchesKafka() {
    Map<String, Integer> cases = new LinkedHashMap<>();
    cases.put("21", -973932308);
    cases.put("foobar", -790332482);
    cases.put("a-little-bit-long-string", -985981536);
    cases.put("a-little-bit-longer-string", -1486304829);
    cases.put("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971);
    cases.put("abc", 479470107);
    cases.forEach((k, h) -> assertEquals(h, KeyHashPartitioner.murmur2(k.getBytes(UTF_8)), k));
  }

  /**
   * The key to partition vector of docs/clients.md (computed there by an independent
   * implementation): hash and modulo must never change, or keys move between partitions.
   */
  @Test
  void keysMapToFixedPartitions() {
    record Case(String key, int hash, List<Integer> partitionsFor1_2_3_8_100) {}
    List<Case> vector = List.of(
        new Case("", 275646681, List.of(0, 1, 0, 1, 81)),
        new Case("a", -1563381124, List.of(0, 0, 1, 4, 24)),
        new Case("orders", -1029842276, List.of(0, 0, 0, 4, 72)),
        new Case("customer-17", 1584006640, List.of(0, 0, 1, 0, 40)),
        new Case("user:42", -1493546323, List.of(0, 1, 1, 5, 25)),
        new Case("\u00e9t\u00e9", -2101193575, List.of(0, 1, 1, 1, 73)),
        new Case("\u6d88\u606f", -1008452770, List.of(0, 0, 1, 6, 78)),
        new Case("a-little-bit-longer-string", -1486304829, List.of(0, 1, 2, 3, 19)));
    int[] counts = {1, 2, 3, 8, 100};
    KeyHashPartitioner partitioner = new KeyHashPartitioner();
    for (Case c : vector) {
      assertEquals(c.hash(), KeyHashPartitioner.murmur2(c.key().getBytes(UTF_8)), c.key());
      for (int i = 0; i < counts.length; i++) {
        int expected = c.partitionsFor1_2_3_8_100().get(i);
        assertEquals(expected, KeyHashPartitioner.partitionForKey(c.key(), counts[i]), c.key());
        assertEquals(expected, partitioner.partition(ProducerRecord.of(c.key(), new byte[1]), counts[i]));
      }
    }
  }

  @Test
  void keylessRecordsStickUntilTheirBatchCloses() {
    KeyHashPartitioner partitioner = new KeyHashPartitioner();
    int first = partitioner.partition(ProducerRecord.of(new byte[1]), 4);
    for (int i = 0; i < 10; i++) assertEquals(first, partitioner.partition(ProducerRecord.of(new byte[1]), 4));
    partitioner.onBatchClosed((first + 1) % 4, 4); // another partition's batch: no effect
    assertEquals(first, partitioner.partition(ProducerRecord.of(new byte[1]), 4));
    Set<Integer> seen = new HashSet<>();
    int current = first;
    for (int i = 0; i < 200; i++) {
      partitioner.onBatchClosed(current, 4);
      int next = partitioner.partition(ProducerRecord.of(new byte[1]), 4);
      assertNotEquals(current, next, "moves on to another partition");
      current = next;
      seen.add(current);
    }
    assertEquals(Set.of(0, 1, 2, 3), seen);
    // a shrunken view (never happens on the wire, but must not pick a partition out of range)
    assertEquals(0, partitioner.partition(ProducerRecord.of(new byte[1]), 1));
  }

  @Test
  void roundRobinCyclesThroughAllPartitions() {
    RoundRobinPartitioner rr = new RoundRobinPartitioner();
    for (int i = 0; i < 9; i++) assertEquals(i % 3, rr.partition(ProducerRecord.of("k", new byte[1]), 3));
  }

  @Test
  void rejectsAnEmptyPartitionCount() {
    assertThrows(IllegalArgumentException.class, () -> KeyHashPartitioner.partitionForKey("k", 0));
  }
}
