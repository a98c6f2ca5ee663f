package io.talos.server.auth;

import com.carrotsearch.hppc.BitMixer;
import java.time.Clock;
import java.util.Arrays;

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
 * <p>What is remembered: for each request, a 64-bit fingerprint of (key id, signature) and its
 * signed timestamp (seconds); a replay matches both. A fingerprint is a hash of values an attacker
 * cannot choose (a signature is an HMAC under a key they do not hold), so two different requests
 * collide with probability about n / 2<sup>64</sup> for n remembered in one second: a legitimate
 * request refused as a replay about once in 10<sup>15</sup> at 10,000 a second, and the client's
 * retry (signed anew) goes through.
 *
 * <p>Layout: a ring of entries in arrival order (fingerprint, timestamp; a forgotten entry keeps
 * its place, marked dead) and an open-addressing index of ring positions by fingerprint (linear
 * probing, at most half full, deletion by backward shift, so no tombstones). Entries leave from
 * the ring's head: once its timestamp is too old to be accepted anyway, or to make room. Arrays
 * grow by doubling up to {@code maxEntries} and are never allocated again after that: about 24
 * bytes per remembered request, and no object per request or per second. Anything the guard
 * allocated in small pieces would live for the whole window, and be copied by every young
 * collection until promoted: per-second sets were the largest steady source of what a young
 * collection copied at 1,000 puts a second, for the first minutes of a server's life.
 *
 * <p>Memory is bounded by {@code maxEntries}. When full, the oldest entry is forgotten and the
 * guard's <em>horizon</em> moves up to its timestamp: from then on a request whose timestamp is at
 * or before the horizon is refused (HTTP 412, "too old to check") rather than accepted unchecked.
 * Under normal load the horizon stays far behind the present and nobody notices; under a flood it
 * narrows the accepted past window instead of opening a hole for replays. A request accepted at
 * or before the horizon it moved itself need not be remembered: its replay is refused by it.
 *
 * <p>Thread-safe: one lock; each call is amortized O(1).
 */
public final class ReplayGuard {
  private static final int INITIAL_ENTRIES = 1024;
  /** Index slot holding no entry. */
  private static final int EMPTY = -1;
  /** Timestamp of a forgotten entry still in the ring. */
  private static final long DEAD = Long.MIN_VALUE;

  private final Clock clock;
  private final long maxPastMs;
  private final int maxEntries;
  /** The ring, in arrival order: {@code count} entries from {@code head}, wrapping. */
  private long[] fingerprints;
  private long[] seconds;
  private int head;
  private int count;
  /** Ring positions by fingerprint; EMPTY where none. Length a power of two, at least 2 x the ring's. */
  private int[] index;
  /** Entries remembered (the ring's entries that are not dead). */
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
    allocate(Math.min(INITIAL_ENTRIES, maxEntries));
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
      if (find(fingerprint, timestampSecs) != EMPTY) {
        throw new Authenticator.AuthenticationException(409, "replayed request: this signed request (key '" + keyId
            + "', timestamp " + timestampSecs + ") was already received; every request must be signed anew", keyId);
      }
      if (count == fingerprints.length) {
        if (fingerprints.length < maxEntries) {
          allocate((int) Math.min(maxEntries, 2L * fingerprints.length));
        } else {
          long dropped = dropHead();
          horizonSecs = Math.max(horizonSecs, dropped);
          if (timestampSecs <= horizonSecs) return; // a replay of it is refused by the horizon
        }
      }
      int position = (head + count) % fingerprints.length;
      fingerprints[position] = fingerprint;
      seconds[position] = timestampSecs;
      count++;
      size++;
      index[emptySlot(fingerprint)] = position;
    }
  }

  /**
   * Forgets a remembered request that was refused before it had any effect (the server was too
   * busy), so that the client's identical retry within the same second is served.
   */
  public void forget(String keyId, String signature, long timestampSecs) {
    long fingerprint = fingerprint(keyId, signature);
    synchronized (this) {
      int slot = find(fingerprint, timestampSecs);
      if (slot == EMPTY) return;
      seconds[index[slot]] = DEAD; // keeps its place in the ring until the head passes it
      removeSlot(slot);
      size--;
    }
  }

  /** How many signatures are remembered (those too old to be accepted anyway are not counted). */
  public synchronized int size() {
    expire();
    return size;
  }

  /** Drops entries from the head while their timestamp is too old to be accepted anyway. */
  private void expire() {
    long oldestAcceptedSecs = Math.floorDiv(clock.millis() - maxPastMs, 1000);
    while (count > 0 && seconds[head] < oldestAcceptedSecs) dropHead(); // DEAD is below any second
  }

  /** Removes the ring's head entry; returns its timestamp, or {@link #DEAD} if it was forgotten. */
  private long dropHead() {
    long secs = seconds[head];
    if (secs != DEAD) {
      removeSlot(slotOf(head));
      size--;
    }
    head = (head + 1) % fingerprints.length;
    count--;
    return secs;
  }

  /** The index slot of a remembered request, or EMPTY. */
  private int find(long fingerprint, long timestampSecs) {
    int mask = index.length - 1;
    for (int slot = home(fingerprint, mask); ; slot = (slot + 1) & mask) {
      int position = index[slot];
      if (position == EMPTY) return EMPTY;
      if (fingerprints[position] == fingerprint && seconds[position] == timestampSecs) return slot;
    }
  }

  /** The index slot that points at ring position {@code position} (which is in the index). */
  private int slotOf(int position) {
    int mask = index.length - 1;
    int slot = home(fingerprints[position], mask);
    while (index[slot] != position) slot = (slot + 1) & mask;
    return slot;
  }

  private int emptySlot(long fingerprint) {
    int mask = index.length - 1;
    int slot = home(fingerprint, mask);
    while (index[slot] != EMPTY) slot = (slot + 1) & mask;
    return slot;
  }

  /**
   * Empties an index slot, moving later entries of its probe run back so that every entry stays
   * reachable from its home slot without passing an empty one.
   */
  private void removeSlot(int slot) {
    int mask = index.length - 1;
    int hole = slot;
    for (int next = (hole + 1) & mask; index[next] != EMPTY; next = (next + 1) & mask) {
      int home = home(fingerprints[index[next]], mask);
      if (((next - home) & mask) >= ((next - hole) & mask)) {
        index[hole] = index[next];
        hole = next;
      }
    }
    index[hole] = EMPTY;
  }

  private static int home(long fingerprint, int mask) {
    return ((int) (fingerprint >>> 32) ^ (int) fingerprint) & mask;
  }

  /** Makes the ring {@code entries} long (keeping its entries, from position 0) and rebuilds the index. */
  private void allocate(int entries) {
    long[] newFingerprints = new long[entries];
    long[] newSeconds = new long[entries];
    for (int i = 0; i < count; i++) {
      int from = (head + i) % fingerprints.length;
      newFingerprints[i] = fingerprints[from];
      newSeconds[i] = seconds[from];
    }
    fingerprints = newFingerprints;
    seconds = newSeconds;
    head = 0;
    index = new int[Integer.highestOneBit(Math.max(2, entries - 1)) << 2]; // > 2 x entries: at most half full
    Arrays.fill(index, EMPTY);
    for (int position = 0; position < count; position++) {
      if (seconds[position] != DEAD) index[emptySlot(fingerprints[position])] = position;
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
