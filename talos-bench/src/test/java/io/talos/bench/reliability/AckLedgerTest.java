package io.talos.bench.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class AckLedgerTest {
  private static ReadBack reads(long... offsetSeqPairs) {
    ReadBack r = new ReadBack();
    for (int i = 0; i < offsetSeqPairs.length; i += 2) r.add(offsetSeqPairs[i], offsetSeqPairs[i + 1]);
    return r;
  }

  private static AckLedger ackedInOrder(int messages) {
    AckLedger ledger = new AckLedger();
    for (int i = 0; i < messages; i++) ledger.ack(0, i, i);
    return ledger;
  }

  @Test
  void shouldCountEveryMessageReadBackOnceInOrderAsReadBack() {
    AckLedger.Check c = ackedInOrder(4).verify(0, reads(0, 0, 1, 1, 2, 2, 3, 3), Set.of());
    assertEquals(new AckLedger.Check(4, 4, 0, 0, 0, 0), c);
  }

  @Test
  void shouldCountAMissingOffsetAndOtherBytesAtAnOffsetAsLost() {
    AckLedger.Check c = ackedInOrder(4).verify(0, reads(0, 0, 2, 2, 3, -1), Set.of());
    assertEquals(new AckLedger.Check(4, 2, 2, 0, 0, 0), c);
  }

  @Test
  void shouldCountAMissingOffsetTheServerRefusedAsRefused() {
    AckLedger.Check c = ackedInOrder(3).verify(0, reads(0, 0, 2, 2), Set.of(1L));
    assertEquals(new AckLedger.Check(3, 2, 0, 0, 0, 1), c);
  }

  @Test
  void shouldCountAPayloadReadAtTwoOffsetsAsDuplicated() {
    AckLedger.Check c = ackedInOrder(3).verify(0, reads(0, 0, 1, 1, 2, 2, 3, 1), Set.of());
    assertEquals(new AckLedger.Check(3, 3, 0, 1, 1, 0), c);
  }

  @Test
  void shouldCountAMessageServedAfterALaterOneAsReordered() {
    AckLedger ledger = new AckLedger();
    ledger.ack(0, 0, 0);
    ledger.ack(0, 1, 1);
    // the payloads at offsets 0 and 1 are swapped: both lost at their offsets, one reordered
    AckLedger.Check c = ledger.verify(0, reads(0, 1, 1, 0), Set.of());
    assertEquals(new AckLedger.Check(2, 0, 2, 0, 1, 0), c);
  }

  @Test
  void shouldCountAnOffsetHandedOutTwiceOnceAndCheckTheLastMessageThere() {
    AckLedger ledger = new AckLedger();
    for (int i = 0; i < 10; i++) ledger.ack(0, i, i);
    for (int i = 5; i < 10; i++) ledger.ack(0, i, 100 + i); // the log went back to 5
    assertEquals(15, ledger.acknowledged());
    assertEquals(5, ledger.reusedOffsets());
    ReadBack r = new ReadBack();
    for (int i = 0; i < 5; i++) r.add(i, i);
    for (int i = 5; i < 10; i++) r.add(i, 100 + i);
    assertEquals(new AckLedger.Check(10, 10, 0, 0, 0, 0), ledger.verify(0, r, Set.of()));
  }

  @Test
  void shouldNotCountTheSameMessageAcknowledgedTwiceAtItsOffsetAsReused() {
    AckLedger ledger = ackedInOrder(3);
    ledger.ack(0, 1, 1);
    assertEquals(4, ledger.acknowledged());
    assertEquals(0, ledger.reusedOffsets());
    assertEquals(new AckLedger.Check(3, 3, 0, 0, 0, 0), ledger.verify(0, reads(0, 0, 1, 1, 2, 2), Set.of()));
  }

  @Test
  void shouldCheckAcknowledgementsThatArriveOutOfOrder() {
    AckLedger ledger = new AckLedger();
    ledger.ack(0, 4, 4);
    ledger.ack(0, 5, 5);
    ledger.ack(0, 0, 0);
    ledger.ack(0, 2, 2);
    ledger.ack(0, 1, 1);
    AckLedger.Check c = ledger.verify(0, reads(0, 0, 1, 1, 2, 2, 3, 3, 4, 4), Set.of());
    assertEquals(new AckLedger.Check(5, 4, 1, 0, 0, 0), c); // offset 5 never served
  }

  @Test
  void shouldCheckReadsServedOutOfOffsetOrderByOffset() {
    AckLedger.Check c = ackedInOrder(3).verify(0, reads(2, 2, 0, 0, 1, 1), Set.of());
    assertEquals(new AckLedger.Check(3, 3, 0, 0, 2, 0), c);
  }

  @Test
  void shouldKeepPartitionsApart() {
    AckLedger ledger = new AckLedger();
    ledger.ack(0, 0, 0);
    ledger.ack(1, 0, 7);
    assertEquals(new AckLedger.Check(1, 1, 0, 0, 0, 0), ledger.verify(0, reads(0, 0), Set.of()));
    assertEquals(new AckLedger.Check(1, 0, 1, 0, 0, 0), ledger.verify(1, reads(0, 0), Set.of()));
    assertEquals(new AckLedger.Check(0, 0, 0, 0, 0, 0), ledger.verify(2, reads(0, 0), Set.of()));
  }

  @Test
  void shouldCheckAcknowledgementsWithoutOffsetsByPayload() {
    AckLedger ledger = new AckLedger();
    for (long s : new long[] {0, 1, 2, 5, 6}) ledger.ackSeq(0, s);
    // 0 read twice, 1 missing, 3 (not acknowledged) read, 6 read before 5: one reordered
    AckLedger.Check c = ledger.verifyBySeq(0, reads(0, 0, 1, 0, 2, 2, 3, 3, 4, 6, 5, 5, 6, -1));
    assertEquals(new AckLedger.Check(5, 4, 1, 1, 1, 0), c);
  }

  @Test
  void shouldCountPayloadsStoredTwiceAcknowledgedOrNot() {
    assertEquals(2, AckLedger.storedTwice(reads(0, 0, 1, 0, 2, 0, 3, 9, 4, 9, 5, -1, 6, -1, 7, 4)));
  }

  @Test
  void shouldGiveEveryAcknowledgedSequenceNumberOnce() {
    AckLedger ledger = new AckLedger();
    ledger.ack(0, 0, 10);
    ledger.ack(0, 1, 11);
    ledger.ack(0, 7, 3);
    List<Long> seqs = new ArrayList<>();
    ledger.forEachAckedSeq(0, seqs::add);
    assertEquals(List.of(10L, 11L, 3L), seqs);
  }

  /**
   * Random acknowledgement histories (batches with gaps, failed puts, offsets handed out again,
   * out-of-order and repeated acknowledgements) and read-backs (losses, duplicates, foreign bytes,
   * swaps, offsets served twice or out of order), checked against a direct implementation of the
   * rules with maps.
   */
  @Test
  void shouldAgreeWithAMapBasedCheckOnRandomHistories() {
    Random random = new Random(11);
    for (int round = 0; round < 300; round++) {
      AckLedger ledger = new AckLedger();
      TreeMap<Long, Long> model = new TreeMap<>();
      TreeSet<Long> modelSeqs = new TreeSet<>();
      long modelReused = 0;
      long offset = 0, seq = 0;
      for (int batch = 0; batch < 40; batch++) {
        int n = 1 + random.nextInt(8);
        int kind = random.nextInt(10);
        if (kind == 0) {
          offset = Math.max(0, offset - random.nextInt(12)); // log cut back: offsets handed out again
        } else if (kind == 1) {
          seq += n; // failed put: sequence numbers skipped, offsets maybe
          if (random.nextBoolean()) offset += n;
          continue;
        }
        List<long[]> acks = new ArrayList<>();
        for (int i = 0; i < n; i++) acks.add(new long[] {offset + i, seq + i});
        if (kind == 2) java.util.Collections.shuffle(acks, random);
        if (kind == 3) acks.add(acks.get(0)); // acknowledged twice
        for (long[] a : acks) {
          ledger.ack(0, a[0], a[1]);
          ledger.ackSeq(0, a[1]);
          Long before = model.put(a[0], a[1]);
          if (before != null && before != a[1]) modelReused++;
          modelSeqs.add(a[1]);
        }
        offset += n;
        seq += n;
      }
      ReadBack reads = new ReadBack();
      List<long[]> served = new ArrayList<>();
      for (long o = 0; o <= offset + 2; o++) {
        int fate = random.nextInt(20);
        long s = model.getOrDefault(o, random.nextInt(4) == 0 ? -1L : seq + o);
        if (fate == 0) continue; // lost
        if (fate == 1) s = -1; // other bytes
        if (fate == 2) s = random.nextInt((int) seq + 1); // someone else's payload
        served.add(new long[] {o, s});
        if (fate == 3) served.add(new long[] {o, random.nextInt((int) seq + 1)}); // offset served twice
      }
      if (random.nextInt(4) == 0 && served.size() > 2) { // served out of offset order
        int a = random.nextInt(served.size()), b = random.nextInt(served.size());
        long[] t = served.get(a);
        served.set(a, served.get(b));
        served.set(b, t);
      }
      for (long[] r : served) reads.add(r[0], r[1]);
      Set<Long> refused = new HashSet<>();
      for (int i = 0; i < 3; i++) refused.add((long) random.nextInt((int) offset + 1));

      String at = "round " + round;
      assertEquals(modelReused, ledger.reusedOffsets(), at);
      assertEquals(modelVerify(model, served, refused), ledger.verify(0, reads, refused), at);
      assertEquals(modelVerifyBySeq(modelSeqs, served), ledger.verifyBySeq(0, reads), at);
      assertEquals(modelStoredTwice(served), AckLedger.storedTwice(reads), at);
    }
  }

  private static AckLedger.Check modelVerify(TreeMap<Long, Long> expected, List<long[]> reads, Set<Long> refusedOffsets) {
    Map<Long, Long> seqAt = new HashMap<>();
    Map<Long, Integer> timesSeen = new HashMap<>();
    for (long[] r : reads) {
      seqAt.put(r[0], r[1]);
      if (r[1] >= 0) timesSeen.merge(r[1], 1, Integer::sum);
    }
    long readBack = 0, lost = 0, duplicated = 0, refused = 0;
    for (Map.Entry<Long, Long> e : expected.entrySet()) {
      Long got = seqAt.get(e.getKey());
      if (got != null && got.equals(e.getValue())) {
        readBack++;
        if (timesSeen.getOrDefault(e.getValue(), 0) > 1) duplicated++;
      } else if (got == null && refusedOffsets.contains(e.getKey())) {
        refused++;
      } else {
        lost++;
      }
    }
    Set<Long> ackedSeqs = new HashSet<>(expected.values());
    long reordered = 0, max = -1;
    for (long[] r : reads) {
      if (!ackedSeqs.contains(r[1])) continue;
      if (r[1] < max) reordered++;
      max = Math.max(max, r[1]);
    }
    return new AckLedger.Check(expected.size(), readBack, lost, duplicated, reordered, refused);
  }

  private static AckLedger.Check modelVerifyBySeq(TreeSet<Long> expected, List<long[]> reads) {
    Map<Long, Integer> timesSeen = new HashMap<>();
    long reordered = 0, max = -1;
    for (long[] r : reads) {
      if (r[1] < 0) continue;
      timesSeen.merge(r[1], 1, Integer::sum);
      if (expected.contains(r[1])) {
        if (r[1] < max) reordered++;
        max = Math.max(max, r[1]);
      }
    }
    long readBack = 0, lost = 0, duplicated = 0;
    for (long s : expected) {
      int n = timesSeen.getOrDefault(s, 0);
      if (n == 0) {
        lost++;
      } else {
        readBack++;
        if (n > 1) duplicated++;
      }
    }
    return new AckLedger.Check(expected.size(), readBack, lost, duplicated, reordered, 0);
  }

  private static long modelStoredTwice(List<long[]> reads) {
    Map<Long, Integer> timesSeen = new HashMap<>();
    long twice = 0;
    for (long[] r : reads) if (r[1] >= 0 && timesSeen.merge(r[1], 1, Integer::sum) == 2) twice++;
    return twice;
  }
}
