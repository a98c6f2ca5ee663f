package io.talos.bench.load;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;

/**
 * Closed-loop load: every thread runs its {@link Step} again as soon as it returns, like the
 * synchronous SimpleProducer / SimpleConsumer threads of the reference tables. Requests that start
 * during the warm-up are not recorded; the measurement window follows it.
 */
final class ClosedLoop {
  private ClosedLoop() {}

  /** One synchronous request; returns the number of messages it carried, 0 for none. */
  @FunctionalInterface
  interface Step {
    int run() throws Exception;
  }

  /** What a group of threads (e.g. the put threads) did in the measurement window. */
  static final class GroupResult {
    final String name;
    final Histogram latencyNanos = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
    final LongAdder requests = new LongAdder();
    final LongAdder empty = new LongAdder();
    final LongAdder messages = new LongAdder();
    final LongAdder errors = new LongAdder();
    final AtomicReference<Throwable> firstError = new AtomicReference<>();
    double seconds;

    GroupResult(String name) {
      this.name = name;
    }

    double qps() {
      return requests.sum() / seconds;
    }

    double messagesPerSecond() {
      return messages.sum() / seconds;
    }
  }

  /**
   * Runs {@code groups} (name to one step per thread) for warm-up + measurement.
   *
   * @param countEmpty whether requests that returned 0 messages are recorded (a consumer that has
   *     caught up): if not, they are counted in {@code empty} only, and the thread parks 100 µs
   */
  static Map<String, GroupResult> run(String label, Progress progress, double warmupSeconds,
      double measureSeconds, Map<String, List<Step>> groups, boolean countEmpty)
      throws InterruptedException {
    Map<String, GroupResult> results = new LinkedHashMap<>();
    List<Thread> threads = new ArrayList<>();
    long start = System.nanoTime();
    long measureStart = start + (long) (warmupSeconds * 1e9);
    long end = measureStart + (long) (measureSeconds * 1e9);
    for (Map.Entry<String, List<Step>> g : groups.entrySet()) {
      GroupResult r = new GroupResult(g.getKey());
      results.put(g.getKey(), r);
      int i = 0;
      for (Step step : g.getValue()) {
        Thread t = new Thread(() -> loop(step, r, measureStart, end, countEmpty), label + "-" + g.getKey() + "-" + i++);
        t.setDaemon(true);
        threads.add(t);
      }
    }
    progress.start(label, warmupSeconds + measureSeconds, () -> {
      StringBuilder sb = new StringBuilder();
      double secs = Math.max(1e-9, (System.nanoTime() - measureStart) / 1e9);
      for (GroupResult r : results.values()) {
        if (System.nanoTime() < measureStart) {
          sb.append(r.name).append(" warming up  ");
        } else {
          sb.append(String.format(Locale.ROOT, "%s %,.0f req/s %,.0f msg/s  ", r.name,
              r.requests.sum() / secs, r.messages.sum() / secs));
        }
        if (r.errors.sum() > 0) sb.append("errors ").append(r.errors.sum()).append("  ");
      }
      return sb.toString();
    });
    threads.forEach(Thread::start);
    for (Thread t : threads) t.join();
    progress.stop();
    for (GroupResult r : results.values()) r.seconds = measureSeconds;
    return results;
  }

  private static void loop(Step step, GroupResult r, long measureStart, long end, boolean countEmpty) {
    Histogram local = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
    long requests = 0;
    long messages = 0;
    long empty = 0;
    while (true) {
      long t0 = System.nanoTime();
      if (t0 >= end) break;
      int n;
      try {
        n = step.run();
      } catch (Exception e) {
        r.errors.increment();
        r.firstError.compareAndSet(null, e);
        sleepQuietly(10);
        continue;
      }
      long t1 = System.nanoTime();
      if (t0 < measureStart || t1 > end) continue;
      if (n == 0 && !countEmpty) {
        empty++;
        java.util.concurrent.locks.LockSupport.parkNanos(100_000);
        continue;
      }
      local.recordValue(Math.min(t1 - t0, local.getHighestTrackableValue()));
      requests++;
      messages += n;
      if ((requests & 63) == 0) {
        r.requests.add(requests);
        r.messages.add(messages);
        requests = 0;
        messages = 0;
      }
    }
    r.requests.add(requests);
    r.messages.add(messages);
    r.empty.add(empty);
    synchronized (r.latencyNanos) {
      r.latencyNanos.add(local);
    }
  }

  static void sleepQuietly(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
