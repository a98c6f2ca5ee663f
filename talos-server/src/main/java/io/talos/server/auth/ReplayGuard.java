package io.talos.server.auth;

import com.carrotsearch.hppc.BitMixer;
import com.carrotsearch.hppc.LongHashSet;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.Map;
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
 * <p>What is remembered: per request timestamp (whole seconds), the set of 64-bit fingerprints of
 * (key id, signature) of the requests signed in that second. A replay carries the same signed
 * timestamp, so it is looked for in its own second only. A fingerprint is a hash of values an
 * attacker cannot choose (a signature is an HMAC under a key they do not hold), so two different
 * requests collide with probability about n / 2<sup>64</sup> for n remembered in one second: a
 * legitimate request refused as a replay about once in 10<sup>15</sup> at 10,000 a second, and the
 * client's retry (signed anew) goes through. Remembering costs 8 to 16 bytes of primitive arrays
 * per request and, once as many seconds expire as begin, no allocation: an expired second's set
 * is emptied and reused. The guard lives as long as the server, so objects per request (strings,
 * map nodes) would each be copied by every young collection until promoted; at 1,000 puts a
 * second that was most of what a young collection copied.
 *
 * <p>Memory is bounded by {@code maxEntries}. Seconds are dropped once too old to be accepted
 * anyway. When full, the oldest second is forgotten and the guard's <em>horizon</em> moves up to
 * it: from then on a request whose timestamp is at or before the horizon is refused (HTTP 412,
 * "too old to check") rather than accepted unchecked. Under normal load the horizon stays far
 * behind the present and nobody notices; under a flood it narrows the accepted past window instead
 * of opening a hole for replays.
 *
 * <p>Thread-safe: one lock; each call is O(log s) for s remembered seconds, plus amortized O(1).
 */
public final class ReplayGuard {
  /** Emptied sets kept for reuse; a steady state begins about one second per second. */
  private static final int SPARE_SETS = 4;
  /**
   * A set that held more is not kept for reuse (an emptied set keeps its table): a flood's
   * seconds would otherwise hold megabytes for good.
   */
  private static final int SPARE_MAX_ENTRIES = 1 << 16;

  private final Clock clock;
  private final long maxPastMs;
  private final int maxEntries;
  /** Request timestamp (seconds) → fingerprints of the requests signed in that second. */
  private final TreeMap<Long, LongHashSet> bySecond = new TreeMap<>();
  private final ArrayDeque<LongHashSet> spare = new ArrayDeque<>(SPARE_SETS);
  /** The second most requests are signed in, and its set (null: none), found without a lookup. */
  private long lastSecs;
  private LongHashSet lastSecond;
  private int size;
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
    long fingerprint = fingerprint(keyId, signature);
    synchronized (this) {
      expire();
      if (timestampSecs <= horizonSecs) {
        throw new Authenticator.AuthenticationException(412, "request timestamp " + timestampSecs
            + " is older than the replay guard can check (it remembers requests signed after " + horizonSecs
            + "; auth.replay.max.entries is reached); sign the request again with the current time", keyId);
      }
      LongHashSet second = secondOf(timestampSecs);
      if (second == null) {
        second = spare.isEmpty() ? new LongHashSet() : spare.pop();
        bySecond.put(timestampSecs, second);
        lastSecs = timestampSecs;
        lastSecond = second;
      }
      if (!second.add(fingerprint)) {
        throw new Authenticator.AuthenticationException(409, "replayed request: this signed request (key '" + keyId
            + "', timestamp " + timestampSecs + ") was already received; every request must be signed anew", keyId);
      }
      size++;
      while (size > maxEntries) {
        Map.Entry<Long, LongHashSet> oldest = bySecond.pollFirstEntry();
        drop(oldest.getValue());
        horizonSecs = Math.max(horizonSecs, oldest.getKey());
      }
    }
  }

  /**
   * Forgets a remembered request that was refused before it had any effect (the server was too
   * busy), so that the client's identical retry within the same second is served.
   */
  public void forget(String keyId, String signature, long timestampSecs) {
    long fingerprint = fingerprint(keyId, signature);
    synchronized (this) {
      LongHashSet second = secondOf(timestampSecs);
      if (second == null || !second.remove(fingerprint)) return;
      size--;
      if (second.isEmpty()) drop(bySecond.remove(timestampSecs));
    }
  }

  /** How many signatures are remembered. */
  public synchronized int size() {
    return size;
  }

  /** Drops seconds beyond the accepted past window: their requests fail the skew check. */
  private void expire() {
    long oldestAcceptedSecs = Math.floorDiv(clock.millis() - maxPastMs, 1000);
    while (!bySecond.isEmpty() && bySecond.firstKey() < oldestAcceptedSecs) {
      drop(bySecond.pollFirstEntry().getValue());
    }
  }

  private LongHashSet secondOf(long timestampSecs) {
    if (lastSecond != null && lastSecs == timestampSecs) return lastSecond;
    return bySecond.get(timestampSecs);
  }

  private void drop(LongHashSet second) {
    if (second == lastSecond) lastSecond = null;
    size -= second.size();
    if (spare.size() < SPARE_SETS && second.size() <= SPARE_MAX_ENTRIES) {
      second.clear();
      spare.push(second);
    }
  }

  /**
   * 64 bits of (key id, signature): FNV-1a over the key id's length and both strings' characters,
   * then MurmurHash3's 64-bit finalizer so that every input bit reaches every output bit.
   */
  static long fingerprint(String keyId, String signature) {
    long h = 0xcbf29ce484222325L;
    h = (h ^ keyId.length()) * 0x100000001b3L;
    for (int i = 0; i < keyId.length(); i++) h = (h ^ keyId.charAt(i)) * 0x100000001b3L;
    for (int i = 0; i < signature.length(); i++) h = (h ^ signature.charAt(i)) * 0x100000001b3L;
    return BitMixer.mix64(h);
  }
}
