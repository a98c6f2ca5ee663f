package io.talos.server.auth;

import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Refuses a signed request seen before. A Galaxy signature covers the method, path, timestamp
 * (seconds), the other {@code x-xiaomi-*} headers and the body's MD5, so a request captured on the
 * wire stays valid for as long as its timestamp is accepted ({@code auth.clock.skew.max.ms} in
 * the past, {@code auth.clock.skew.future.max.ms} ahead). Remembering every accepted signature for
 * that window makes a second delivery detectable.
 *
 * <p>Two legitimate requests never share a signature as long as their bodies differ: the SDK 2.0.2
 * signs a new request (new timestamp or new body) for every send, and its puts and gets carry a
 * unique {@code sequenceId}. Read-only metadata calls may repeat byte for byte within one second
 * (a client polling a topic); the caller exempts those (a replay of them changes nothing).
 *
 * <p>Memory is bounded by {@code maxEntries}. Entries are kept by their request timestamp (whole
 * seconds) and dropped once that timestamp is too old to be accepted anyway. When full, the
 * entries with the oldest timestamp are forgotten and the guard's <em>horizon</em> moves up to
 * that second: from then on a request whose timestamp is at or before the horizon is refused
 * (HTTP 412, "too old to check") rather than accepted unchecked. Under normal load the horizon
 * stays far behind the present and nobody notices; under a flood it narrows the accepted past
 * window instead of opening a hole for replays.
 *
 * <p>Thread-safe: one lock around a map of seconds to signatures and a set of signatures; each
 * call is O(log n).
 */
public final class ReplayGuard {
  private final Clock clock;
  private final long maxPastMs;
  private final int maxEntries;
  /** Request timestamp (seconds) → keys remembered with that timestamp. */
  private final TreeMap<Long, List<String>> bySecond = new TreeMap<>();
  private final Set<String> seen = new HashSet<>();
  /** Requests with a timestamp at or before this second can no longer be checked. */
  private long horizonSecs = Long.MIN_VALUE;

  /**
   * @param maxPastMs how far in the past a timestamp is still accepted (entries older than that
   *     are useless and dropped)
   */
  public ReplayGuard(Clock clock, long maxPastMs, int maxEntries) {
    if (maxEntries < 1) throw new IllegalArgumentException("maxEntries must be at least 1");
    this.clock = clock;
    this.maxPastMs = maxPastMs;
    this.maxEntries = maxEntries;
  }

  /**
   * Remembers the request or refuses it.
   *
   * @param keyId the signing key id (signatures of different keys never collide by accident)
   * @param signature the request's signature, already verified
   * @param timestampSecs the request's signed X-Xiaomi-Timestamp
   * @throws Authenticator.AuthenticationException 409 when this signature was seen before, 412
   *     when the timestamp is older than what the guard still remembers
   */
  public void checkAndRemember(String keyId, String signature, long timestampSecs)
      throws Authenticator.AuthenticationException {
    String key = keyId + ':' + signature;
    synchronized (this) {
      expire();
      if (timestampSecs <= horizonSecs) {
        throw new Authenticator.AuthenticationException(412, "request timestamp " + timestampSecs
            + " is older than the replay guard can check (it remembers requests signed after " + horizonSecs
            + "; auth.replay.max.entries is reached); sign the request again with the current time", keyId);
      }
      if (!seen.add(key)) {
        throw new Authenticator.AuthenticationException(409, "replayed request: this signed request (key '" + keyId
            + "', timestamp " + timestampSecs + ") was already received; every request must be signed anew", keyId);
      }
      bySecond.computeIfAbsent(timestampSecs, s -> new ArrayList<>(4)).add(key);
      while (seen.size() > maxEntries) {
        Map.Entry<Long, List<String>> oldest = bySecond.pollFirstEntry();
        oldest.getValue().forEach(seen::remove);
        horizonSecs = Math.max(horizonSecs, oldest.getKey());
      }
    }
  }

  /**
   * Forgets a remembered request that was refused before it had any effect (the server was too
   * busy), so that the client's identical retry within the same second is served.
   */
  public synchronized void forget(String keyId, String signature, long timestampSecs) {
    String key = keyId + ':' + signature;
    if (!seen.remove(key)) return;
    List<String> keys = bySecond.get(timestampSecs);
    if (keys != null) {
      keys.remove(key);
      if (keys.isEmpty()) bySecond.remove(timestampSecs);
    }
  }

  /** How many signatures are remembered. */
  public synchronized int size() {
    return seen.size();
  }

  /** Drops entries whose timestamp is beyond the accepted past window: such requests fail the skew check. */
  private void expire() {
    long oldestAcceptedSecs = Math.floorDiv(clock.millis() - maxPastMs, 1000);
    while (!bySecond.isEmpty() && bySecond.firstKey() < oldestAcceptedSecs) {
      bySecond.pollFirstEntry().getValue().forEach(seen::remove);
    }
  }
}
