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

  /** A request signed long ago that arrives late is still checked, and expires with its second. */
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
   * When full, the guard forgets the oldest signed second, not the oldest arrival: one request
   * from a client whose clock runs ahead must not move the horizon past the present and refuse
   * every correctly clocked request after it.
   */
  @Test
  void aClientClockAheadDoesNotMoveTheHorizonPastThePresent() throws Exception {
    ManualClock clock = new ManualClock(NOW_MS);
    ReplayGuard guard = new ReplayGuard(clock, 900_000, 1000);
    guard.checkAndRemember("k", "fast", NOW_SECS + 30);
    int n = 0;
    for (int second = 0; second < 12; second++) { // 1,200 requests: the guard fills and forgets
      for (int i = 0; i < 100; i++) guard.checkAndRemember("k", "sig" + n++, clock.millis() / 1000);
      clock.advanceMs(1000);
    }
    guard.checkAndRemember("k", "accurate", clock.millis() / 1000);
    assertEquals(409, assertThrows(AuthenticationException.class,
        () -> guard.checkAndRemember("k", "fast", NOW_SECS + 30)).httpStatus());
  }

  /**
   * Requests refused before they had any effect and forgotten (an overloaded server) leave
   * nothing behind: they neither fill the guard nor move its horizon, so the client's retry is
   * served.
   */
  @Test
  void forgottenRequestsDoNotFillTheGuard() throws Exception {
    ReplayGuard guard = new ReplayGuard(new ManualClock(NOW_MS), 900_000, 1000);
    guard.checkAndRemember("k", "live", NOW_SECS);
    for (int i = 0; i < 1200; i++) {
      guard.checkAndRemember("k", "busy" + i, NOW_SECS);
      guard.forget("k", "busy" + i, NOW_SECS);
    }
    assertEquals(1, guard.size());
    guard.checkAndRemember("k", "busy7", NOW_SECS); // a retry
    guard.checkAndRemember("k", "other", NOW_SECS);
    assertEquals(409, assertThrows(AuthenticationException.class,
        () -> guard.checkAndRemember("k", "live", NOW_SECS)).httpStatus());
  }
}
