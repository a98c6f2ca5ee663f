package io.talos.client.producer.internals;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.client.producer.BufferExhaustedException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class BufferMemoryTest {
  @Test
  void failsAtOnceWhenFullAndMaxBlockIsZero() throws Exception {
    BufferMemory m = new BufferMemory(100);
    m.reserve(60, 0);
    m.reserve(40, 0);
    BufferExhaustedException e = assertThrows(BufferExhaustedException.class, () -> m.reserve(1, 0));
    assertTrue(e.getMessage().contains("100 of buffer.memory.bytes=100 bytes are taken"), e.getMessage());
    assertTrue(e.getMessage().contains("max.block.ms=0"), e.getMessage());
    assertTrue(e.isRetriable());
    assertEquals(100, m.usedBytes());
  }

  @Test
  void rejectsARecordLargerThanTheWholeBuffer() {
    BufferMemory m = new BufferMemory(100);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> m.reserve(101, 1000));
    assertTrue(e.getMessage().contains("101 bytes"), e.getMessage());
    assertEquals(0, m.usedBytes());
  }

  @Test
  void aBlockedReserveProceedsWhenSpaceIsReleased() throws Exception {
    BufferMemory m = new BufferMemory(100);
    m.reserve(100, 0);
    CompletableFuture<Void> blocked = CompletableFuture.runAsync(() -> {
      try {
        m.reserve(30, 60_000);
      } catch (InterruptedException e) {
        throw new RuntimeException(e);
      }
    });
    while (m.waitingThreads() == 0) Thread.sleep(1); // until it waits
    m.release(20); // not enough yet
    assertEquals(1, m.waitingThreads());
    m.release(10);
    blocked.get(30, TimeUnit.SECONDS);
    assertEquals(100, m.usedBytes());
    assertEquals(0, m.waitingThreads());
  }

  @Test
  void releasingMoreThanReservedIsABug() {
    BufferMemory m = new BufferMemory(100);
    assertThrows(IllegalStateException.class, () -> m.release(1));
  }
}
