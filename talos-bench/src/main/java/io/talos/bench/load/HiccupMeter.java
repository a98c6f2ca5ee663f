package io.talos.bench.load;

import io.talos.server.scheduling.ThreadSlice;
import java.util.ArrayList;
import java.util.List;
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
 * until {@link #close()}, and each wake at least {@link #STALL_MIN_NANOS} late as a {@link Stall};
 * wakes before it are not recorded. A {@link MeterLoop} runs {@link #step()}; {@link #close()}
 * stops it and makes the figures safe to read from the closing thread. {@link #pinned} makes one
 * whose thread stays on one CPU ({@link CpuHeartbeats}).
 */
final class HiccupMeter implements AutoCloseable {
  static final long PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
  /** The least lateness kept as a {@link Stall}. */
  static final long STALL_MIN_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
  /**
   * The scheduler slice a pinned meter's thread asks for: a thread with a short slice that wakes
   * preempts a busy one at once (Linux 6.12+), so on a CPU that runs at all it wakes within about
   * a millisecond, busy neighbours or not.
   */
  static final int PINNED_SLICE_US = ThreadSlice.MIN_US;

  /** A wake due at {@code dueNanos} that came at {@code wokeNanos} ({@link System#nanoTime()}). */
  record Stall(int cpu, long dueNanos, long wokeNanos) {
    long nanos() {
      return wokeNanos - dueNanos;
    }

    /**
     * Whether [{@code fromNanos}, {@code toNanos}] shares an instant with the stall or with as long
     * again after it: the sends and requests that queued up while the CPU stood still are worked
     * off afterwards, on a machine still busy, and a put sent into that backlog waits for it.
     */
    boolean overlaps(long fromNanos, long toNanos) {
      return dueNanos <= toNanos && fromNanos <= wokeNanos + nanos();
    }
  }

  private final Histogram lateness = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
  private final List<Stall> stalls = new ArrayList<>();
  private final LongSupplier clock;
  private final LongConsumer sleep;
  /** Written by {@link #recordFrom} from another thread. */
  private volatile long fromNanos;
  private final int cpu;
  private final MeterLoop loop;
  private long expected;
  /** For a pinned meter: 0 until its thread tried, 1 pinned, -1 not. Guarded by this. */
  private int pinnedState;

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
    this(clock, sleep, fromNanos, -1, name);
  }

  private HiccupMeter(LongSupplier clock, LongConsumer sleep, long fromNanos, int cpu, String name) {
    this.clock = clock;
    this.sleep = sleep;
    this.fromNanos = fromNanos;
    this.cpu = cpu;
    this.expected = clock.getAsLong() + PERIOD_NANOS;
    this.loop = name == null ? null : new MeterLoop(name, this::setUp, this::step);
  }

  /**
   * A meter whose thread runs on {@code cpu} only, with a {@link #PINNED_SLICE_US} slice; null
   * when that could not be had (the thread then ends at once): not Linux, no such CPU, or a kernel
   * that does not apply the slice (before 6.12), on which busy neighbours could delay a wake by
   * their own slice and a stand-still would not mean the CPU stood still. Returns once the thread
   * tried.
   */
  static HiccupMeter pinned(int cpu, long fromNanos, String name) throws InterruptedException {
    HiccupMeter meter = new HiccupMeter(System::nanoTime, LockSupport::parkNanos, fromNanos, cpu, name);
    boolean ready = false;
    try {
      synchronized (meter) {
        while (meter.pinnedState == 0) meter.wait();
        ready = meter.pinnedState > 0;
      }
    } finally {
      if (!ready) meter.close();
    }
    return ready ? meter : null;
  }

  /** On the meter's thread, before its first step: false ends the thread. */
  private boolean setUp() {
    if (cpu < 0) return true;
    boolean ready = false;
    try {
      // read back: the pin holds only if the thread may now run on that CPU alone
      ready = CpuAffinity.pinCurrentThread(cpu) && CpuAffinity.allowedCpus().equals(List.of(cpu))
          && ThreadSlice.setForCurrentThread(PINNED_SLICE_US);
      expected = clock.getAsLong() + PERIOD_NANOS;
      return ready;
    } finally { // also when a call threw: pinned() must not wait for ever
      synchronized (this) {
        pinnedState = ready ? 1 : -1;
        notifyAll();
      }
    }
  }

  /**
   * Records the wakes due from {@code fromNanos} on instead (a meter started before its window is
   * known, so that starting it does not delay the window).
   */
  void recordFrom(long fromNanos) {
    this.fromNanos = fromNanos;
  }

  /** Sleeps one period and records how much later than asked it woke. */
  void step() {
    sleep.accept(PERIOD_NANOS);
    long now = clock.getAsLong();
    if (expected >= fromNanos) {
      long late = Math.max(0, now - expected);
      lateness.recordValue(Math.min(late, lateness.getHighestTrackableValue()));
      if (late >= STALL_MIN_NANOS) stalls.add(new Stall(cpu, expected, now));
    }
    expected = now + PERIOD_NANOS;
  }

  /** Stops the thread; afterwards the figures are complete. */
  @Override
  public void close() throws InterruptedException {
    if (loop != null) loop.stop();
  }

  /** Lateness of each recorded wake, ns (read after {@link #close()}). */
  Histogram lateness() {
    return lateness;
  }

  /** The wakes at least {@link #STALL_MIN_NANOS} late, in order (read after {@link #close()}). */
  List<Stall> stalls() {
    return List.copyOf(stalls);
  }
}
