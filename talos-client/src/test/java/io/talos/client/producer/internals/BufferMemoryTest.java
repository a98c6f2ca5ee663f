package io.talos.client.producer.internals;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.client.producer.BufferExhaustedException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
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
  void aReleaseRacingAReserveThatStartsToWaitIsNeverLost() throws Exception {
    // The release comes at any point of the other thread's way into its wait: before it
    // registers, between registering and sleeping, or while it sleeps. A lost wake-up would leave
    // the reserve blocked until its max.block.ms of a minute runs out.
    BufferMemory m = new BufferMemory(100);
    for (int i = 0; i < 2_000; i++) {
      m.reserve(100, 0);
      CompletableFuture<Void> reserve = CompletableFuture.runAsync(() -> {
        try {
          m.reserve(50, 60_000);
        } catch (InterruptedException e) {
          throw new RuntimeException(e);
        }
      });
      if (i % 2 == 0) Thread.onSpinWait();
      m.release(100);
      reserve.get(10, TimeUnit.SECONDS);
      assertEquals(50, m.usedBytes());
      m.release(50);
    }
    assertEquals(0, m.waitingThreads());
  }

  @Test
  void manyThreadsReservingAndReleasingNeverExceedTheBoundAndAllFinish() throws Exception {
    BufferMemory m = new BufferMemory(100);
    int threads = 4;
    int rounds = 20_000;
    AtomicLong maxSeen = new AtomicLong();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CompletableFuture<?>[] all = new CompletableFuture<?>[threads];
    for (int t = 0; t < threads; t++) {
      int bytes = 10 + 20 * t; // 10, 30, 50, 70: at most one of the large ones fits at a time
      all[t] = CompletableFuture.runAsync(() -> {
        try {
          for (int r = 0; r < rounds; r++) {
            m.reserve(bytes, 60_000);
            maxSeen.accumulateAndGet(m.usedBytes(), Math::max);
            m.release(bytes);
          }
        } catch (InterruptedException e) {
          throw new RuntimeException(e);
        }
      }, pool);
    }
    try {
      CompletableFuture.allOf(all).get(60, TimeUnit.SECONDS);
    } finally {
      pool.shutdownNow();
    }
    assertEquals(0, m.usedBytes());
    assertEquals(0, m.waitingThreads());
    assertTrue(maxSeen.get() <= 100, "used " + maxSeen.get() + " of 100");
  }

  @Test
  void releasingMoreThanReservedIsABug() {
    BufferMemory m = new BufferMemory(100);
    assertThrows(IllegalStateException.class, () -> m.release(1));
  }
}
