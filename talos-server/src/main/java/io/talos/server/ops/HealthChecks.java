package io.talos.server.ops;

import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;

/**
 * What {@code GET /ops/health} reports: named checks, each a probe that returns null when fine or
 * says what is wrong. The server registers: {@code metadata} (a read from the metadata store),
 * {@code storage} (a status call on the storage root) and {@code file-descriptors} (open
 * descriptors against the process limit, from the OS MXBean, failing at a configured percentage).
 *
 * <p>Probes run on their own daemon threads and are waited for at most the probe timeout: a store
 * or file system that hangs makes its check fail ("no answer within ...") instead of hanging the
 * health request. A check whose previous probe is still hanging is not probed again (so a hang
 * costs one thread per check, not one per health request) and fails saying so. Thread-safe.
 */
public final class HealthChecks {
  /** The outcome of one check: {@code problem} is null when it passed. */
  public record Result(String name, String problem) {
    public boolean ok() {
      return problem == null;
    }
  }

  private final Map<String, Callable<String>> checks = new LinkedHashMap<>();
  private final Map<String, CompletableFuture<String>> inFlight = new ConcurrentHashMap<>();
  private final long probeTimeoutMs;
  private final ExecutorService probes = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "talos-health-probe");
    t.setDaemon(true);
    return t;
  });

  public HealthChecks(long probeTimeoutMs) {
    if (probeTimeoutMs < 1) throw new IllegalArgumentException("probeTimeoutMs=" + probeTimeoutMs);
    this.probeTimeoutMs = probeTimeoutMs;
  }

  /**
   * Adds a check. {@code probe} returns null when fine, otherwise what is wrong; a probe that
   * throws fails with the exception's message.
   */
  public synchronized HealthChecks add(String name, Callable<String> probe) {
    checks.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(probe, "probe"));
    return this;
  }

  /** Runs every check (concurrently, each bounded by the probe timeout), in registration order. */
  public List<Result> run() {
    Map<String, Callable<String>> snapshot;
    synchronized (this) {
      snapshot = new LinkedHashMap<>(checks);
    }
    Map<String, CompletableFuture<String>> started = new LinkedHashMap<>();
    Map<String, String> refused = new LinkedHashMap<>();
    snapshot.forEach((name, probe) -> {
      CompletableFuture<String> previous = inFlight.get(name);
      if (previous != null && !previous.isDone()) {
        refused.put(name, "the previous probe has not answered yet (hanging for more than " + probeTimeoutMs + " ms)");
        return;
      }
      CompletableFuture<String> f = CompletableFuture.supplyAsync(() -> {
        try {
          return probe.call();
        } catch (Exception e) {
          return e.getClass().getSimpleName() + ": " + e.getMessage();
        }
      }, probes);
      inFlight.put(name, f);
      started.put(name, f);
    });
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(probeTimeoutMs);
    List<Result> results = new ArrayList<>();
    for (String name : snapshot.keySet()) {
      if (refused.containsKey(name)) {
        results.add(new Result(name, refused.get(name)));
        continue;
      }
      String problem;
      try {
        problem = started.get(name).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (TimeoutException e) {
        problem = "no answer within " + probeTimeoutMs + " ms (ops.health.probe.timeout.ms)";
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        problem = "interrupted";
      } catch (ExecutionException e) {
        problem = String.valueOf(e.getCause());
      }
      results.add(new Result(name, problem));
    }
    return results;
  }

  /**
   * A file-descriptor check: fails when {@code open} reaches {@code maxPercent} of {@code max}.
   * Where the counts are unknown (-1) it passes, saying nothing.
   */
  public static Callable<String> fileDescriptors(LongSupplier open, LongSupplier max, int maxPercent) {
    return () -> {
      long o = open.getAsLong();
      long m = max.getAsLong();
      if (o < 0 || m <= 0) return null;
      if (o * 100 >= (long) maxPercent * m) {
        return o + " of " + m + " file descriptors are open, at or above " + maxPercent
            + "% (ops.health.fd.used.max.percent): new connections and partition opens will fail soon";
      }
      return null;
    };
  }

  /** Open descriptors of this process per the OS MXBean, -1 where the platform does not say. */
  public static long openFileDescriptors() {
    OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    return os instanceof com.sun.management.UnixOperatingSystemMXBean u ? u.getOpenFileDescriptorCount() : -1;
  }

  /** The process's descriptor limit per the OS MXBean, -1 where the platform does not say. */
  public static long maxFileDescriptors() {
    OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    return os instanceof com.sun.management.UnixOperatingSystemMXBean u ? u.getMaxFileDescriptorCount() : -1;
  }

  public void close() {
    probes.shutdownNow();
  }
}
