package io.talos.bench.load;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;
import org.HdrHistogram.Histogram;

/**
 * How late a thread of the load generator wakes when it asks to wake every millisecond: the
 * stalls that the machine (CPU scheduling, a busy neighbour) and the generator's own JVM (its GC
 * and safepoints) add to every latency the generator measures, whatever server it measures. A
 * put acknowledged after more than 20 ms while the generator itself did not run for 20 ms says
 * nothing about the server.
 *
 * <p>Records the lateness of each wake from {@code fromNanos} (a scenario's measurement window)
 * until {@link #close()}; wakes before it are not recorded. A {@link MeterLoop} runs {@link
 * #step()}; {@link #close()} stops it and makes the histogram safe to read from the closing
 * thread.
 */
final class HiccupMeter implements AutoCloseable {
  static final long PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

  private final Histogram lateness = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
  private final LongSupplier clock;
  private final LongConsumer sleep;
  private final long fromNanos;
  private final MeterLoop loop;
  private long expected;

  /** Starts measuring; wakes due before {@code fromNanos} ({@link System#nanoTime()}) are not recorded. */
  HiccupMeter(long fromNanos, String name) {
    this(System::nanoTime, LockSupport::parkNanos, fromNanos, name);
  }

  /**
   * @param clock nanosecond clock
   * @param sleep sleeps about the nanoseconds given
   * @param name the thread's name, or null for no thread (the caller calls {@link #step()})
   */
  HiccupMeter(LongSupplier clock, LongConsumer sleep, long fromNanos, String name) {
    this.clock = clock;
    this.sleep = sleep;
    this.fromNanos = fromNanos;
    this.expected = clock.getAsLong() + PERIOD_NANOS;
    this.loop = name == null ? null : new MeterLoop(name, this::step);
  }

  /** Sleeps one period and records how much later than asked it woke. */
  void step() {
    sleep.accept(PERIOD_NANOS);
    long now = clock.getAsLong();
    if (expected >= fromNanos) {
      lateness.recordValue(Math.min(Math.max(0, now - expected), lateness.getHighestTrackableValue()));
    }
    expected = now + PERIOD_NANOS;
  }

  /** Stops the thread; afterwards {@link #lateness()} is complete. */
  @Override
  public void close() throws InterruptedException {
    if (loop != null) loop.stop();
  }

  /** Lateness of each recorded wake, ns (read after {@link #close()}). */
  Histogram lateness() {
    return lateness;
  }
}
