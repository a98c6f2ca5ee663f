package io.talos.server.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.talos.server.ManualClock;
import io.talos.server.auth.Authenticator.AuthenticationException;
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
}
