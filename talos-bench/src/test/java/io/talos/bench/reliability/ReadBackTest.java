package io.talos.bench.reliability;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.Set;
import org.junit.jupiter.api.Test;

class ReadBackTest {
  @Test
  void shouldKeepAPartitionReadBackInOrderAsOneRun() {
    ReadBack reads = new ReadBack();
    for (long i = 0; i < 1_000_000; i++) reads.add(100 + i, i);
    assertEquals(1, reads.runs());
    assertEquals(1_000_000, reads.size());
    assertSame(reads, reads.byOffset());
    assertEquals(0, reads.seqsReadAtLeast(2).length);
  }

  @Test
  void shouldNeverContinueARunFromOrIntoBytesThatAreNotOurs() {
    ReadBack reads = new ReadBack();
    reads.add(0, -1);
    reads.add(1, 0); // -1 + 1 == 0, but -1 is no sequence number
    reads.add(2, -1);
    reads.add(3, -1);
    assertEquals(4, reads.runs());
    AckLedger ledger = new AckLedger();
    ledger.ack(0, 0, 5);
    ledger.ack(0, 1, 0);
    assertEquals(new AckLedger.Check(2, 1, 1, 0, 0, 0), ledger.verify(0, reads, Set.of()));
  }

  @Test
  void shouldGiveTheSequenceNumbersReadTwiceAndMoreAsIntervals() {
    ReadBack reads = new ReadBack();
    for (long i = 0; i < 10; i++) reads.add(i, i); // 0-9
    for (long i = 0; i < 5; i++) reads.add(10 + i, 5 + i); // 5-9 again
    reads.add(15, 7); // 7 a third time
    reads.add(16, -1);
    assertArrayEquals(new long[][] {{0, 10}}, reads.seqsReadAtLeast(1));
    assertArrayEquals(new long[][] {{5, 10}}, reads.seqsReadAtLeast(2));
    assertArrayEquals(new long[][] {{7, 8}}, reads.seqsReadAtLeast(3));
    assertEquals(5, AckLedger.storedTwice(reads));
  }

  @Test
  void shouldSortMessagesServedOutOfOffsetOrderKeepingServedOrderAmongEqualOffsets() {
    ReadBack reads = new ReadBack();
    reads.add(5, 5);
    reads.add(6, 6);
    reads.add(0, 0);
    reads.add(5, 9);
    ReadBack sorted = reads.byOffset();
    assertEquals(4, sorted.size());
    assertEquals(0, sorted.runOffset(0));
    assertEquals(5, sorted.runOffset(1));
    assertEquals(5, sorted.runSeq(1));
    assertEquals(5, sorted.runOffset(2));
    assertEquals(9, sorted.runSeq(2));
    assertEquals(6, sorted.runOffset(3));
  }
}
