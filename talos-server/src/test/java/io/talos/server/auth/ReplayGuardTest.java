package io.talos.server.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.server.ManualClock;
import io.talos.server.auth.Authenticator.AuthenticationException;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

class ReplayGuardTest {
  private static final long NOW_MS = 1_763_800_000_000L;
  private static final long NOW_SECS = NOW_MS / 1000;

  @Test
  void refusesASignatureSeenBeforeAndAcceptsNewOnes() throws Exception {
    ReplayGuard guard = new ReplayGuard(new ManualClock(NOW_MS), 900_000, 100);
    guard.checkAndRemember("k", "sig1", NOW_SECS);
    AuthenticationException e = assertThrows(AuthenticationException.class,
        () -> guard.checkAndRemember("k", "sig1", NOW_SECS));
    assertEquals(409, e.httpStatus());
    guard.checkAndRemember("k", "sig2", NOW_SECS);
    guard.checkAndRemember("other-key", "sig1", NOW_SECS);
    assertEquals(3, guard.size());
  }

  @Test
  void forgetsEntriesOnceTheirTimestampIsTooOldToBeAccepted() throws Exception {
    ManualClock clock = new ManualClock(NOW_MS);
    ReplayGuard guard = new ReplayGuard(clock, 900_000, 100);
    guard.checkAndRemember("k", "old", NOW_SECS - 850);
    guard.checkAndRemember("k", "new", NOW_SECS);
    clock.advanceMs(60_000);
    guard.checkAndRemember("k", "trigger", NOW_SECS + 60);
    assertEquals(2, guard.size());
  }

  @Test
  void whenFullRefusesTimestampsAtOrBeforeWhatItForgot() throws Exception {
    ReplayGuard guard = new ReplayGuard(new ManualClock(NOW_MS), 900_000, 3);
    guard.checkAndRemember("k", "a", NOW_SECS - 10);
    guard.checkAndRemember("k", "b", NOW_SECS - 5);
    guard.checkAndRemember("k", "c", NOW_SECS);
    guard.checkAndRemember("k", "d", NOW_SECS); // full: forgets second NOW-10
    assertEquals(3, guard.size());
    // "a" is forgotten, yet its replay is not accepted: its timestamp is at the horizon.
    AuthenticationException e = assertThrows(AuthenticationException.class,
        () -> guard.checkAndRemember("k", "a", NOW_SECS - 10));
    assertEquals(412, e.httpStatus());
    assertThrows(AuthenticationException.class, () -> guard.checkAndRemember("k", "b", NOW_SECS - 5));
    guard.checkAndRemember("k", "e", NOW_SECS - 9);
  }

  @Test
  void aForgottenRequestMayBeSentAgain() throws Exception {
    ReplayGuard guard = new ReplayGuard(new ManualClock(NOW_MS), 900_000, 10);
    guard.checkAndRemember("k", "busy", NOW_SECS);
    guard.forget("k", "busy", NOW_SECS);
    assertEquals(0, guard.size());
    guard.checkAndRemember("k", "busy", NOW_SECS);
  }

  @Test
  void aSecondEmptiedByForgettingIsNotFoundUnderItsOldTimestampOnceReused() throws Exception {
    ReplayGuard guard = new ReplayGuard(new ManualClock(NOW_MS), 900_000, 10);
    guard.checkAndRemember("k", "busy", NOW_SECS);
    guard.forget("k", "busy", NOW_SECS); // its second is now empty: dropped, its storage kept for reuse
    guard.checkAndRemember("k", "busy", NOW_SECS); // the client's retry
    guard.checkAndRemember("k", "next", NOW_SECS + 1); // a new second, maybe on reused storage
    AuthenticationException e = assertThrows(AuthenticationException.class,
        () -> guard.checkAndRemember("k", "busy", NOW_SECS));
    assertEquals(409, e.httpStatus());
    assertEquals(2, guard.size());
  }

  @Test
  void keyIdAndSignatureAreNotConfusedAcrossTheirBoundary() throws Exception {
    ReplayGuard guard = new ReplayGuard(new ManualClock(NOW_MS), 900_000, 10);
    guard.checkAndRemember("a:b", "c", NOW_SECS);
    guard.checkAndRemember("a", "b:c", NOW_SECS);
    guard.checkAndRemember("k", "s", NOW_SECS);
    guard.checkAndRemember("k", "s", NOW_SECS - 1); // another second: another signed request
    assertEquals(4, guard.size());
  }

  @Test
  void aSecondsEntriesDoNotOutliveItWhenItsStorageIsReused() throws Exception {
    ManualClock clock = new ManualClock(NOW_MS);
    ReplayGuard guard = new ReplayGuard(clock, 10_000, 100);
    for (int i = 0; i < 50; i++) guard.checkAndRemember("k", "s" + i, NOW_SECS);
    for (int step = 1; step <= 30; step++) {
      clock.advanceMs(1000);
      long now = NOW_SECS + step;
      // The same signatures under a new second (a different request each time) are accepted,
      // whatever storage the expired seconds left behind.
      for (int i = 0; i < 3; i++) guard.checkAndRemember("k", "s" + i, now);
      assertThrows(AuthenticationException.class, () -> guard.checkAndRemember("k", "s0", now));
    }
    assertEquals(3 * 11, guard.size()); // seconds NOW+20 .. NOW+30 are still within the 10 s window
  }

  /**
   * What a remembered request costs the heap once the guard is in its steady state (as many
   * seconds expire as begin): a few bytes of garbage at most, no object that lives on. Objects per
   * request that live for the guard's whole window were copied by every young collection until
   * promoted (at 1,000 puts a second, most of what each young collection copied).
   */
  @Test
  void rememberingARequestAllocatesAlmostNothingInTheSteadyState() throws Exception {
    com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    ManualClock clock = new ManualClock(NOW_MS);
    ReplayGuard guard = new ReplayGuard(clock, 20_000, 1_000_000);
    int seconds = 80;
    int perSecond = 2000;
    String[][] signatures = new String[seconds][perSecond]; // made before measuring
    for (int second = 0; second < seconds; second++) {
      for (int i = 0; i < perSecond; i++) signatures[second][i] = "sig-" + second + "-" + i;
    }
    long measuredFrom = 0;
    long before = 0;
    for (int second = 0; second < seconds; second++) {
      if (second == 40) { // the window (20 s) turned over twice: from here on seconds are reused
        before = threads.getCurrentThreadAllocatedBytes();
        measuredFrom = second;
      }
      long ts = NOW_SECS + second;
      for (int i = 0; i < perSecond; i++) guard.checkAndRemember("key", signatures[second][i], ts);
      clock.advanceMs(1000);
    }
    long allocated = threads.getCurrentThreadAllocatedBytes() - before;
    double perRequest = (double) allocated / ((seconds - measuredFrom) * perSecond);
    assertTrue(perRequest < 24, "bytes allocated per remembered request: " + perRequest);
  }

  /**
   * A server younger than its skew window expires nothing yet: what it remembers each second must
   * still not be new objects, which would live for the whole window and be copied by every young
   * collection until promoted. Once its arrays have grown to what the rate needs, remembering
   * allocates nothing.
   */
  @Test
  void aYoungGuardAllocatesNothingOnceItsArraysHaveGrown() throws Exception {
    com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    ManualClock clock = new ManualClock(NOW_MS);
    ReplayGuard guard = new ReplayGuard(clock, 900_000, 1_000_000);
    int seconds = 60;
    int perSecond = 2000;
    String[][] signatures = new String[seconds][perSecond];
    for (int second = 0; second < seconds; second++) {
      for (int i = 0; i < perSecond; i++) signatures[second][i] = "sig-" + second + "-" + i;
    }
    long before = 0;
    int measuredFrom = 40; // 80,000 remembered: past the growth to 131,072 entries at 65,536, before the next
    for (int second = 0; second < seconds; second++) {
      if (second == measuredFrom) before = threads.getCurrentThreadAllocatedBytes();
      long ts = NOW_SECS + second;
      for (int i = 0; i < perSecond; i++) guard.checkAndRemember("key", signatures[second][i], ts);
      clock.advanceMs(1000);
    }
    long allocated = threads.getCurrentThreadAllocatedBytes() - before;
    assertEquals(seconds * perSecond, guard.size()); // nothing expired: the window is 900 s
    double perRequest = (double) allocated / ((seconds - measuredFrom) * perSecond);
    assertTrue(perRequest < 1, "bytes allocated per remembered request: " + perRequest);
  }

  /** Entries leave in arrival order; one signed long ago that arrives late is still checked. */
  @Test
  void aRequestArrivingOutOfTimestampOrderIsRememberedAndExpires() throws Exception {
    ManualClock clock = new ManualClock(NOW_MS);
    ReplayGuard guard = new ReplayGuard(clock, 60_000, 100);
    guard.checkAndRemember("k", "now", NOW_SECS);
    guard.checkAndRemember("k", "late", NOW_SECS - 50); // signed 50 s ago, arrives now
    assertEquals(409, assertThrows(AuthenticationException.class,
        () -> guard.checkAndRemember("k", "late", NOW_SECS - 50)).httpStatus());
    clock.advanceMs(30_000);
    guard.checkAndRemember("k", "trigger", NOW_SECS + 30);
    // "late" is now too old to be accepted by the skew check; the guard may or may not still
    // hold it, but "now" it must.
    assertEquals(409, assertThrows(AuthenticationException.class,
        () -> guard.checkAndRemember("k", "now", NOW_SECS)).httpStatus());
    clock.advanceMs(61_000);
    guard.checkAndRemember("k", "trigger2", NOW_SECS + 91);
    assertEquals(1, guard.size());
  }

  /**
   * Many requests, some forgotten, through growth, expiry and eviction at the limit: the guard
   * agrees with a plain set of what it should still remember, and never accepts a replay of one.
   */
  @Test
  void agreesWithASimpleModelThroughGrowthExpiryAndEviction() throws Exception {
    ManualClock clock = new ManualClock(NOW_MS);
    int maxEntries = 3000;
    ReplayGuard guard = new ReplayGuard(clock, 20_000, maxEntries);
    java.util.Random random = new java.util.Random(7);
    java.util.ArrayDeque<long[]> model = new java.util.ArrayDeque<>(); // {id, ts, alive} in arrival order
    long horizon = Long.MIN_VALUE;
    int next = 0;
    for (int step = 0; step < 60_000; step++) {
      if (step % 500 == 0) clock.advanceMs(1000);
      long now = clock.millis() / 1000;
      long oldest = Math.floorDiv(clock.millis() - 20_000, 1000);
      while (!model.isEmpty() && (model.peekFirst()[2] == 0 || model.peekFirst()[1] < oldest)) model.pollFirst();
      int op = random.nextInt(10);
      if (op < 7 || model.isEmpty()) { // a new request, signed up to 15 s ago
        long ts = now - random.nextInt(15);
        int id = next++;
        if (ts <= horizon) {
          final long t = ts;
          assertEquals(412, assertThrows(AuthenticationException.class,
              () -> guard.checkAndRemember("k", "s" + id, t)).httpStatus());
          continue;
        }
        guard.checkAndRemember("k", "s" + id, ts);
        if (model.size() == maxEntries) {
          // full (forgotten entries keep their place until the oldest passes them): the oldest
          // arrival is forgotten and the horizon moves to its timestamp
          long[] dropped = model.pollFirst();
          while (dropped[2] == 0) dropped = model.pollFirst();
          horizon = Math.max(horizon, dropped[1]);
        }
        if (ts > horizon) model.addLast(new long[] {id, ts, 1});
      } else if (op < 9) { // a replay of something remembered
        long[] e = model.stream().filter(x -> x[2] == 1).skip(random.nextInt(Math.max(1, model.size()))).findFirst()
            .orElse(null);
        if (e == null) continue;
        int status = assertThrows(AuthenticationException.class,
            () -> guard.checkAndRemember("k", "s" + e[0], e[1])).httpStatus();
        assertEquals(e[1] <= horizon ? 412 : 409, status);
      } else { // the server refused one before it had any effect: forgotten
        long[] e = model.peekLast();
        if (e[2] == 1) {
          guard.forget("k", "s" + e[0], e[1]);
          e[2] = 0;
        }
      }
      // entries too old to be accepted, and forgotten ones at the head, are not counted
      while (!model.isEmpty() && (model.peekFirst()[2] == 0 || model.peekFirst()[1] < oldest)) model.pollFirst();
      assertEquals(model.stream().filter(e -> e[2] == 1).count(), guard.size(), "step " + step);
    }
  }
}
