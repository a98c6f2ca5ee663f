package io.talos.bench.auth;

import io.talos.server.auth.Authenticator;
import io.talos.server.auth.ReplayGuard;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The replay guard's cost per state-changing request, in its steady state: requests signed in
 * the current second, the clock moving one second every {@code perSecond} requests, so that as
 * many seconds expire as begin and the guard stays full of the last {@code windowSeconds}.
 * {@code remember}: the server's guard (a 64-bit fingerprint per request in a primitive set per
 * second, reused once expired). Baseline {@code rememberStrings}: what it did before, a string
 * {@code keyId:signature} per request in a hash set plus a list per second. Run with {@code -prof
 * gc}: the baseline's bytes per operation are objects that live as long as the window, copied by
 * young collections until promoted; the guard's are none.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(1)
@State(Scope.Thread)
public class ReplayGuardBenchmark {
  @Param({"2000"})
  public int perSecond;

  @Param({"60"})
  public int windowSeconds;

  private SteppedClock clock;
  private ReplayGuard guard;
  private StringGuard baseline;
  /** Signatures as the server holds them (made by the HTTP layer before the guard sees them). */
  private String[] signatures;
  private long sent;

  @Setup
  public void setUp() {
    clock = new SteppedClock(1_763_800_000_000L);
    guard = new ReplayGuard(clock, windowSeconds * 1000L, Integer.MAX_VALUE);
    baseline = new StringGuard(clock, windowSeconds * 1000L);
    signatures = new String[1 << 18]; // more than a window holds: no signature repeats within it
    java.util.Random random = new java.util.Random(1);
    byte[] mac = new byte[20];
    for (int i = 0; i < signatures.length; i++) {
      random.nextBytes(mac);
      signatures[i] = java.util.Base64.getEncoder().encodeToString(mac); // as long as an HmacSHA1 signature
    }
  }

  /** The next request's signed second, advancing the clock a second every {@code perSecond}. */
  private long nextSecond() {
    if (++sent % perSecond == 0) clock.millis += 1000;
    return clock.millis / 1000;
  }

  @Benchmark
  public int remember() throws Authenticator.AuthenticationException {
    long second = nextSecond();
    guard.checkAndRemember("AKBENCHKEY", signatures[(int) (sent & (signatures.length - 1))], second);
    return guard.size();
  }

  @Benchmark
  public int rememberStrings() {
    long second = nextSecond();
    baseline.checkAndRemember("AKBENCHKEY", signatures[(int) (sent & (signatures.length - 1))], second);
    return baseline.seen.size();
  }

  /** The baseline: the guard as it was, one string per remembered request. */
  static final class StringGuard {
    private final Clock clock;
    private final long maxPastMs;
    final TreeMap<Long, List<String>> bySecond = new TreeMap<>();
    final Set<String> seen = new HashSet<>();

    StringGuard(Clock clock, long maxPastMs) {
      this.clock = clock;
      this.maxPastMs = maxPastMs;
    }

    synchronized boolean checkAndRemember(String keyId, String signature, long timestampSecs) {
      long oldest = Math.floorDiv(clock.millis() - maxPastMs, 1000);
      while (!bySecond.isEmpty() && bySecond.firstKey() < oldest) {
        Map.Entry<Long, List<String>> e = bySecond.pollFirstEntry();
        e.getValue().forEach(seen::remove);
      }
      String key = keyId + ':' + signature;
      if (!seen.add(key)) return false;
      bySecond.computeIfAbsent(timestampSecs, s -> new ArrayList<>(4)).add(key);
      return true;
    }
  }

  /** A clock the benchmark moves. */
  static final class SteppedClock extends Clock {
    long millis;

    SteppedClock(long millis) {
      this.millis = millis;
    }

    @Override
    public long millis() {
      return millis;
    }

    @Override
    public Instant instant() {
      return Instant.ofEpochMilli(millis);
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }
  }
}
