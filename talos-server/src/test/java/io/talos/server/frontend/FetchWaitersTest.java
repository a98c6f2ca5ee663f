package io.talos.server.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.codahale.metrics.MetricRegistry;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class FetchWaitersTest {
  private final FetchWaiters waiters = new FetchWaiters(30_000, 100, new MetricRegistry());

  @AfterEach
  void close() {
    waiters.close();
  }

  @Test
  void ticksArePowersOfTwoOfAtMostASixteenthOfTheWait() {
    assertEquals(1, FetchWaiters.tickMs(1));
    assertEquals(1, FetchWaiters.tickMs(31));
    assertEquals(2, FetchWaiters.tickMs(32));
    assertEquals(4, FetchWaiters.tickMs(100));
    assertEquals(8, FetchWaiters.tickMs(255));
    assertEquals(16, FetchWaiters.tickMs(256));
    assertEquals(FetchWaiters.MAX_TICK_MS, FetchWaiters.tickMs(600_000));
  }

  @Test
  void aWaitsEndIsItsTimeRoundedUpToItsTick() {
    long ms = 1_000_000L;
    // 5000 ms from 1000.3 ms: not before 6000.3, so 6001 rounded up to 16 ms
    assertEquals(6016, FetchWaiters.endMs(1000 * ms + 300_000, 5000));
    assertEquals(6016, FetchWaiters.endMs(1015 * ms + 999_999, 5000), "the same tick");
    assertEquals(6032, FetchWaiters.endMs(1016 * ms, 5000), "the next one");
    assertEquals(1011, FetchWaiters.endMs(1000 * ms + 1, 10), "short waits: 1 ms ticks");
    // nanoTime may be negative: still at or after the time, never before
    long end = FetchWaiters.endMs(-7 * ms - 400_000, 300);
    assertTrue(end * ms >= -7 * ms - 400_000 + 300 * ms && end % 16 == 0, "end " + end);
    assertTrue((end - 16) * ms < -7 * ms - 400_000 + 300 * ms, "not a tick later than needed: " + end);
  }

  @Test
  void aWaitEndsNotBeforeItsTimeAndAtMostATickAfter() throws Exception {
    FetchWaiters.Slot slot = waiters.slot("t", 0);
    CountDownLatch ended = new CountDownLatch(1);
    AtomicLong endedAt = new AtomicLong();
    long t0 = System.nanoTime();
    FetchWaiters.Waiter w = new FetchWaiters.Waiter(() -> {
      throw new AssertionError("no append");
    }, () -> {
      endedAt.set(System.nanoTime());
      ended.countDown();
    });
    assertEquals(FetchWaiters.Parked.PARKED, waiters.park(slot, slot.appends(), w, 300));
    assertTrue(ended.await(5, TimeUnit.SECONDS));
    long ms = TimeUnit.NANOSECONDS.toMillis(endedAt.get() - t0);
    // the tick of a 300 ms wait is 16 ms (the exact end is checked above); this is real time on a
    // busy machine, so only loosely bounded above
    assertTrue(ms >= 300 && ms < 300 + 16 + 500, "ended after " + ms + " ms");
    assertEquals(0, waiters.parked());
    assertEquals(0, waiters.buckets(), "a fired bucket leaves");
  }

  @Test
  void getsWhoseWaitsEndInTheSameTickShareABucketAndAWokenOneLeavesIt() throws Exception {
    FetchWaiters.Slot a = waiters.slot("t", 0);
    FetchWaiters.Slot b = waiters.slot("t", 1);
    AtomicInteger woken = new AtomicInteger();
    AtomicInteger timedOut = new AtomicInteger();
    long t0 = System.nanoTime();
    for (int i = 0; i < 20; i++) {
      FetchWaiters.Waiter w = new FetchWaiters.Waiter(woken::incrementAndGet, timedOut::incrementAndGet);
      FetchWaiters.Slot s = i % 2 == 0 ? a : b;
      assertEquals(FetchWaiters.Parked.PARKED, waiters.park(s, s.appends(), w, 20_000));
    }
    // ends rounded up to 16 ms: one bucket per 16 ms the parks took, and one more across a tick's edge
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    assertTrue(waiters.buckets() <= tookMs / 16 + 2, "buckets: " + waiters.buckets() + " in " + tookMs + " ms");
    assertEquals(20, waiters.bucketed());
    waiters.appended("t", 0);
    assertEquals(10, woken.get());
    assertEquals(10, waiters.parked());
    assertEquals(10, waiters.bucketed(), "the woken left their bucket");
    waiters.appended("t", 1);
    assertEquals(20, woken.get());
    assertEquals(0, waiters.parked());
    assertEquals(0, waiters.bucketed());
    assertEquals(0, timedOut.get());
  }

  @Test
  void aWokenGetIsNeverAlsoTimedOut() throws Exception {
    FetchWaiters.Slot slot = waiters.slot("t", 0);
    AtomicInteger woken = new AtomicInteger();
    AtomicInteger timedOut = new AtomicInteger();
    CountDownLatch other = new CountDownLatch(1);
    waiters.park(slot, slot.appends(), new FetchWaiters.Waiter(woken::incrementAndGet, timedOut::incrementAndGet), 50);
    waiters.appended("t", 0);
    // a second get whose wait ends later: once it has ended, the first's bucket has fired too
    waiters.park(slot, slot.appends(), new FetchWaiters.Waiter(() -> {}, other::countDown), 60);
    assertTrue(other.await(5, TimeUnit.SECONDS));
    assertEquals(1, woken.get());
    assertEquals(0, timedOut.get());
  }

  @Test
  void anAppendSinceTheReadMeansReadAgainAndTheLimitAnswersAtOnce() {
    FetchWaiters small = new FetchWaiters(30_000, 1, new MetricRegistry());
    try {
      FetchWaiters.Slot slot = small.slot("t", 0);
      long seen = slot.appends();
      small.appended("t", 0);
      assertEquals(FetchWaiters.Parked.CHANGED, small.park(slot, seen, new FetchWaiters.Waiter(() -> {}, () -> {}), 1000));
      assertEquals(FetchWaiters.Parked.PARKED,
          small.park(slot, slot.appends(), new FetchWaiters.Waiter(() -> {}, () -> {}), 1000));
      assertEquals(FetchWaiters.Parked.FULL,
          small.park(slot, slot.appends(), new FetchWaiters.Waiter(() -> {}, () -> {}), 1000));
      assertEquals(1, small.buckets(), "one bucket for the one parked get");
    } finally {
      small.close();
    }
  }

  @Test
  void aTimeoutThatThrowsDoesNotStrandTheOthersOfItsBucket() throws Exception {
    FetchWaiters.Slot slot = waiters.slot("t", 0);
    CountDownLatch ended = new CountDownLatch(2);
    waiters.park(slot, slot.appends(), new FetchWaiters.Waiter(() -> {}, ended::countDown), 100);
    waiters.park(slot, slot.appends(), new FetchWaiters.Waiter(() -> {}, () -> {
      throw new IllegalStateException("answer failed");
    }), 100);
    waiters.park(slot, slot.appends(), new FetchWaiters.Waiter(() -> {}, ended::countDown), 100);
    assertTrue(ended.await(5, TimeUnit.SECONDS), "both others ended");
    assertEquals(0, waiters.parked());
  }

  @Test
  void closeAnswersEveryParkedGet() {
    FetchWaiters.Slot slot = waiters.slot("t", 0);
    AtomicInteger timedOut = new AtomicInteger();
    for (int i = 0; i < 3; i++) {
      waiters.park(slot, slot.appends(), new FetchWaiters.Waiter(() -> {}, timedOut::incrementAndGet), 20_000);
    }
    waiters.close();
    assertEquals(3, timedOut.get());
    assertEquals(0, waiters.parked());
    assertEquals(0, waiters.buckets());
    assertEquals(FetchWaiters.Parked.FULL,
        waiters.park(slot, slot.appends(), new FetchWaiters.Waiter(() -> {}, () -> {}), 1000));
  }
}
