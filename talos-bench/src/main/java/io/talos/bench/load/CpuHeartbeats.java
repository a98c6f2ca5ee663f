package io.talos.bench.load;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * One thread on each CPU of the machine, each asking to wake every millisecond with a short
 * scheduler slice: a wake {@link HiccupMeter#STALL_MIN_NANOS} late or more means that CPU ran
 * nothing at all for that long. Busy neighbours cannot do that to a short-slice thread (it
 * preempts them when it wakes); what can is the host taking the virtual CPU (a stretch it may or
 * may not count as steal: {@link StealMeter} sees only the former), a kernel section that keeps
 * the CPU, or a stop of the generator's own JVM. A late put in flight during such a stand-still
 * waited for the machine, whatever the server did: traced, a CPU that stood still for 100 ms
 * fired none of its timers, so the generator's sends and the server's threads queued there all
 * waited it out while the other CPU ran on.
 *
 * <p>Starts its threads on construction (where one cannot be had on every CPU, pinned and with its
 * slice, as on a system other than Linux or a kernel before 6.12, it keeps none and {@link
 * #available()} is false); {@link #close()} stops them and makes the
 * figures safe to read from the closing thread.
 */
final class CpuHeartbeats implements AutoCloseable {
  private final List<HiccupMeter> meters = new ArrayList<>();

  /**
   * Starts a meter on each CPU this process may use, named {@code name-cpuN}, recording nothing
   * until {@link #recordFrom}: starting them takes milliseconds (binding the C library, one
   * thread per CPU), which must not delay the window they measure.
   */
  CpuHeartbeats(String name) throws InterruptedException {
    List<Integer> cpus = CpuAffinity.allowedCpus();
    try {
      for (int cpu : cpus) {
        HiccupMeter m = HiccupMeter.pinned(cpu, Long.MAX_VALUE, name + "-cpu" + cpu);
        if (m != null) meters.add(m);
      }
      if (meters.size() < cpus.size()) { // a CPU without one: none at all
        close();
        meters.clear();
      }
    } catch (InterruptedException | RuntimeException | Error e) {
      close();
      throw e;
    }
  }

  /** Of meters already started (a test's, stepped by hand). */
  CpuHeartbeats(List<HiccupMeter> meters) {
    this.meters.addAll(meters);
  }

  /** Records the wakes due from {@code fromNanos} ({@link System#nanoTime()}) on. */
  void recordFrom(long fromNanos) {
    for (HiccupMeter m : meters) m.recordFrom(fromNanos);
  }

  /** Whether a meter runs on at least one CPU. */
  boolean available() {
    return !meters.isEmpty();
  }

  /** Each CPU's stand-stills, ordered by when they began (read after {@link #close()}). */
  List<HiccupMeter.Stall> stalls() {
    List<HiccupMeter.Stall> all = new ArrayList<>();
    for (HiccupMeter m : meters) all.addAll(m.stalls());
    all.sort(Comparator.comparingLong(HiccupMeter.Stall::dueNanos));
    return all;
  }

  /** The longest stand-still of one CPU, ns; 0 when none (read after {@link #close()}). */
  long longestNanos() {
    return stalls().stream().mapToLong(HiccupMeter.Stall::nanos).max().orElse(0);
  }

  /** Stops every thread; afterwards none runs, and {@link #available()} stays as it was. Idempotent. */
  @Override
  public void close() throws InterruptedException {
    for (HiccupMeter m : meters) m.close();
  }
}
