package io.talos.bench.load;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * CPU time the hypervisor took from this virtual machine during a measurement window: the
 * "steal" the kernel counts in {@code /proc/stat} while a virtual CPU had work but its host ran
 * something else. A stolen stretch stops every thread on that CPU (server, generator, GC) at once,
 * and neither the generator's {@link HiccupMeter} nor any process on the guest can tell it from
 * their own slowness; on a shared host a second with 10-20% steal can hold a put for tens of
 * milliseconds. The report prints it beside the latencies so that a run disturbed from outside
 * reads as such.
 *
 * <p>Samples the machine's cumulative steal (all CPUs) once a {@link #PERIOD_NANOS period} from
 * construction until {@link #close()}: the total over the window and the most in one period.
 * Where the counter is not available (not Linux) it reports nothing ({@link #available()} false).
 * A {@link MeterLoop} runs {@link #step()}; {@link #close()} stops it, takes a last sample and
 * makes the figures safe to read from the closing thread.
 */
final class StealMeter implements AutoCloseable {
  static final long PERIOD_NANOS = TimeUnit.SECONDS.toNanos(1);
  private static final Path PROC_STAT = Path.of("/proc/stat");
  /**
   * Ticks per second of the {@code /proc/stat} counters: USER_HZ, 100 on every Linux
   * architecture the JDK runs on (the kernel converts its own HZ to it for user space).
   */
  private static final long USER_HZ = 100;

  private final LongSupplier stealMillis;
  private final LongConsumer sleep;
  private final MeterLoop loop;
  private final long first;
  private long last;
  private long worstPeriod;

  /** Starts measuring now, from {@code /proc/stat}. */
  StealMeter(String name) {
    this(StealMeter::procStatStealMillis, LockSupport::parkNanos, name);
  }

  /**
   * @param stealMillis the machine's cumulative steal, all CPUs, in ms; negative when unknown
   * @param sleep sleeps about the nanoseconds given
   * @param name the thread's name, or null for no thread (the caller calls {@link #step()})
   */
  StealMeter(LongSupplier stealMillis, LongConsumer sleep, String name) {
    this.stealMillis = stealMillis;
    this.sleep = sleep;
    this.first = stealMillis.getAsLong();
    this.last = first;
    this.loop = name == null || first < 0 ? null : new MeterLoop(name, this::step);
  }

  /** Sleeps one period, then samples. */
  void step() {
    sleep.accept(PERIOD_NANOS);
    sample();
  }

  private void sample() {
    if (first < 0) return;
    long now = stealMillis.getAsLong();
    if (now < 0) return;
    worstPeriod = Math.max(worstPeriod, now - last);
    last = now;
  }

  /** Stops the thread and takes the window's last sample. */
  @Override
  public void close() throws InterruptedException {
    if (loop != null) loop.stop();
    sample();
  }

  /** Whether the machine counts steal (read after {@link #close()}). */
  boolean available() {
    return first >= 0;
  }

  /** CPU time stolen over the window, all CPUs, ms (read after {@link #close()}). */
  long totalMillis() {
    return available() ? last - first : 0;
  }

  /** The most stolen in one period of the window, all CPUs, ms (read after {@link #close()}). */
  long worstPeriodMillis() {
    return worstPeriod;
  }

  /** The cumulative steal of all CPUs from {@code /proc/stat}, ms, or -1 where there is none. */
  static long procStatStealMillis() {
    // the first line only: the rest (per CPU, interrupts) runs to kilobytes
    try (BufferedReader r = Files.newBufferedReader(PROC_STAT)) {
      String cpu = r.readLine();
      return cpu == null ? -1 : parseStealMillis(cpu);
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }

  /**
   * The steal of {@code /proc/stat}'s first line ({@code cpu user nice system idle iowait irq
   * softirq steal ...}, in USER_HZ ticks), in ms; -1 for a line without it (kernels before 2.6.11).
   */
  static long parseStealMillis(String cpuLine) {
    String[] f = cpuLine.trim().split("\\s+");
    if (f.length < 9 || !f[0].equals("cpu")) return -1;
    return Long.parseLong(f[8]) * 1000 / USER_HZ;
  }
}
