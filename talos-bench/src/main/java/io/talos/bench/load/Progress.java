package io.talos.bench.load;

import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The progress line on stderr while a measurement runs: rewritten in place every second on a
 * terminal, one line every 5 s otherwise (logs, CI).
 */
final class Progress implements AutoCloseable {
  private static final boolean TTY = System.console() != null;
  private final PrintStream err = System.err;
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "bench-progress");
    t.setDaemon(true);
    return t;
  });
  private ScheduledFuture<?> task;
  private long lastNanos;

  /** Shows {@code label elapsed/total status()} until {@link #stop}. */
  synchronized void start(String label, double totalSeconds, Supplier<String> status) {
    stop();
    long t0 = System.nanoTime();
    lastNanos = t0;
    long periodMs = TTY ? 1000 : 5000;
    task = timer.scheduleAtFixedRate(() -> {
      double elapsed = (System.nanoTime() - t0) / 1e9;
      String line = String.format(Locale.ROOT, "[%s] %5.1f/%.0fs %s", label, elapsed, totalSeconds, status.get());
      if (TTY) {
        err.print("\r\033[K" + line);
      } else {
        err.println(line);
      }
      err.flush();
    }, periodMs, periodMs, TimeUnit.MILLISECONDS);
  }

  synchronized void stop() {
    if (task != null) {
      task.cancel(false);
      task = null;
      if (TTY) err.print("\r\033[K");
    }
  }

  /** A line of its own (phase changes: starting a server, a cell done). */
  synchronized void note(String message) {
    if (TTY && task != null) err.print("\r\033[K");
    err.println(message);
    err.flush();
  }

  @Override
  public void close() {
    stop();
    timer.shutdownNow();
  }
}
