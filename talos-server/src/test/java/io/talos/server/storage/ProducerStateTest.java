package io.talos.server.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.server.storage.ProducerState.Append;
import io.talos.server.storage.ProducerState.Duplicate;
import io.talos.server.storage.ProducerState.OutOfOrder;
import io.talos.server.storage.ProducerState.StoredPut;
import org.junit.jupiter.api.Test;

/** The dedupe rules of {@link ProducerState}, stepped put by put. */
class ProducerStateTest {
  private static final long T0 = 1_700_000_000_000L;

  @Test
  void newProducerAnySequenceThenOnlyTheNextOne() {
    ProducerState s = new ProducerState(10, 60_000);
    assertInstanceOf(Append.class, s.check(7, 0));
    assertInstanceOf(Append.class, s.check(7, 41), "an unknown producer (expired, evicted) is accepted");
    s.record(7, 0, 100, 105, T0);
    assertInstanceOf(Append.class, s.check(7, 1));
    OutOfOrder gap = assertInstanceOf(OutOfOrder.class, s.check(7, 2));
    assertTrue(gap.message().contains("puts 1 to 1 are missing"), gap.message());
    assertTrue(gap.message().contains("expected 1"), gap.message());
  }

  @Test
  void repeatIsAnsweredWithTheStoredOffsets() {
    ProducerState s = new ProducerState(10, 60_000);
    s.record(7, 0, 100, 105, T0);
    s.record(7, 1, 105, 110, T0 + 1);
    assertEquals(new StoredPut(0, 100, 105), assertInstanceOf(Duplicate.class, s.check(7, 0)).stored());
    assertEquals(new StoredPut(1, 105, 110), assertInstanceOf(Duplicate.class, s.check(7, 1)).stored());
    assertInstanceOf(Append.class, s.check(8, 1), "producers are independent");
  }

  @Test
  void repeatOlderThanTheRetainedPutsIsOutOfOrder() {
    ProducerState s = new ProducerState(10, 60_000);
    for (int seq = 0; seq < ProducerState.RETAINED_PUTS + 2; seq++) s.record(7, seq, seq * 10L, seq * 10L + 10, T0);
    assertInstanceOf(OutOfOrder.class, s.check(7, 0));
    assertInstanceOf(OutOfOrder.class, s.check(7, 1));
    assertInstanceOf(Duplicate.class, s.check(7, 2));
    assertEquals(ProducerState.RETAINED_PUTS, s.recentPuts(7).size());
  }

  @Test
  void fullStateForgetsTheProducerWhoseLastPutIsOldest() {
    ProducerState s = new ProducerState(2, 60_000);
    s.record(1, 0, 0, 1, T0);
    s.record(2, 0, 1, 2, T0 + 1);
    s.record(1, 1, 2, 3, T0 + 2); // producer 1 put last: 2 is now the oldest
    s.record(3, 0, 3, 4, T0 + 3);
    assertEquals(2, s.size());
    assertEquals(1, s.evicted());
    assertTrue(s.recentPuts(2).isEmpty());
    assertEquals(2, s.recentPuts(1).size());
    assertInstanceOf(Append.class, s.check(2, 0), "forgotten: a repeat is stored again");
  }

  @Test
  void idleProducersExpireByAppendTime() {
    ProducerState s = new ProducerState(10, 1_000);
    s.record(1, 0, 0, 1, T0);
    s.record(2, 0, 1, 2, T0 + 600);
    assertEquals(0, s.expire(T0 + 1_000));
    assertEquals(1, s.expire(T0 + 1_001));
    assertTrue(s.recentPuts(1).isEmpty());
    assertEquals(1, s.recentPuts(2).size());
    assertEquals(1, s.expire(T0 + 1_601));
    assertEquals(0, s.size());
  }

  @Test
  void limitsAreChecked() {
    assertThrows(IllegalArgumentException.class, () -> new ProducerState(0, 1));
    assertThrows(IllegalArgumentException.class, () -> new ProducerState(1, 0));
  }
}
