package io.talos.server.scheduling;

import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which scheduler slice the server's request threads (HTTP threads, task-pool workers, storage
 * threads) run with now, and how each of them moves to it.
 *
 * <p>Why a policy and not a fixed slice: a short slice ({@link ThreadSlice}) lets a woken request
 * thread preempt a busy neighbour at once, which shortens the tail of puts when other processes
 * hold the cores. When the server's own work fills the machine, though, its threads preempt each
 * other and their clients just as often, and peak throughput drops (measured with the clients on
 * the same two cores: 100-byte produce 0.70-0.79x, a quarter more context switches). So with
 * {@link When#CONTENDED} (the default) the threads ask for the short slice only while the machine
 * is busy (its CPU time at least {@code machineBusyMin} used) and this process uses little of it
 * (at most {@code processMax} of the machine's CPU time): other work holds the cores, and the
 * server's few wake-ups are what waits. {@link When#ALWAYS} keeps the slice on.
 *
 * <p>How a thread switches: it calls {@link #applyToCurrentThread()} before each request or task,
 * which compares the slice that thread last set with the current one (a volatile read and a
 * thread-local lookup) and makes the system call only when they differ. A switch so reaches each
 * thread at its next request; an idle thread keeps its old slice until then. Threads started by a
 * request thread begin with the kernel's default ({@link ThreadSlice}). {@link #runOnce()} samples
 * the CPU and decides; {@link #start()} runs it every {@code checkIntervalMs} on a daemon thread.
 *
 * <p>Thread-safe: {@link #applyToCurrentThread()} and the getters from any thread; {@link
 * #runOnce()} from one thread at a time (each sample covers the time since the previous one).
 */
public final class ThreadSlicePolicy implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ThreadSlicePolicy.class);

  /** The kernel's default slice for every thread, always. */
  public static final ThreadSlicePolicy NONE = always(0);

  /** When the request threads run with the configured slice. */
  public enum When {
    /** From the first request on. */
    ALWAYS,
    /** While the machine is busy with other work: see the class comment. */
    CONTENDED;

    /** {@code always} or {@code contended}, any case. */
    public static When named(String name) {
      return valueOf(name.toUpperCase(Locale.ROOT));
    }
  }

  private final int sliceUs;
  private final When when;
  private final double machineBusyMin;
  private final double processMax;
  private final CpuUse cpu;
  private final long checkIntervalMs;
  /** The slice the request threads should have now; 0: the kernel's default. */
  private volatile int currentUs;
  private final AtomicLong switches = new AtomicLong();
  /** Per thread, the slice it last set (a new thread starts with the default, 0). */
  private final ThreadLocal<int[]> applied = ThreadLocal.withInitial(() -> new int[1]);
  private ScheduledExecutorService checker;

  /**
   * @param sliceUs the short slice: 0 (never one) or between {@link ThreadSlice#MIN_US} and {@link ThreadSlice#MAX_US}
   * @param machineBusyMin with {@code processMax}, fractions of the machine's CPU time (0 to 1): see the class comment
   * @param cpu sampled by {@link #runOnce()}; unused with {@link When#ALWAYS}
   * @param checkIntervalMs how often {@link #start()}'s thread samples, at least 1
   */
  public ThreadSlicePolicy(int sliceUs, When when, double machineBusyMin, double processMax, CpuUse cpu,
      long checkIntervalMs) {
    if (!(machineBusyMin >= 0 && machineBusyMin <= 1 && processMax >= 0 && processMax <= 1)) {
      throw new IllegalArgumentException("machineBusyMin (" + machineBusyMin + ") and processMax (" + processMax
          + ") must be fractions between 0 and 1");
    }
    if (checkIntervalMs < 1) throw new IllegalArgumentException("checkIntervalMs must be at least 1, got " + checkIntervalMs);
    this.sliceUs = ThreadSlice.requireAllowed(sliceUs);
    this.when = Objects.requireNonNull(when, "when");
    this.machineBusyMin = machineBusyMin;
    this.processMax = processMax;
    this.cpu = when == When.CONTENDED ? Objects.requireNonNull(cpu, "cpu") : cpu;
    this.checkIntervalMs = checkIntervalMs;
    this.currentUs = when == When.ALWAYS ? sliceUs : 0;
  }

  /** {@code sliceUs} for every request thread, from its first request on. */
  public static ThreadSlicePolicy always(int sliceUs) {
    return new ThreadSlicePolicy(sliceUs, When.ALWAYS, 0, 1, null, 1);
  }

  /** The slice the request threads should have now, in µs; 0: the kernel's default. */
  public int currentUs() {
    return currentUs;
  }

  /** The configured short slice, in µs (0: none). */
  public int sliceUs() {
    return sliceUs;
  }

  /** How often {@link #runOnce()} changed {@link #currentUs()}. */
  public long switches() {
    return switches.get();
  }

  /**
   * Moves the calling thread to {@link #currentUs()} if it is not there yet: call it before each
   * request or task. Cheap when nothing changed; one system call per thread and switch otherwise
   * (a failed or ignored call is logged once by {@link ThreadSlice} and not retried until the
   * next switch).
   */
  public void applyToCurrentThread() {
    if (sliceUs == 0) return;
    int want = currentUs;
    int[] have = applied.get();
    if (have[0] == want) return;
    have[0] = want;
    ThreadSlice.setForCurrentThread(want);
  }

  /**
   * Samples the CPU and sets {@link #currentUs()}: the slice while the machine is at least {@code
   * machineBusyMin} busy and this process used at most {@code processMax} of it, else the
   * default (also when the sample is unknown). With {@link When#ALWAYS} or no slice, does nothing.
   * Returns {@link #currentUs()}.
   */
  public int runOnce() {
    if (sliceUs == 0 || when == When.ALWAYS) return currentUs;
    CpuUse.Sample s = cpu.sample();
    boolean contended = s.machineBusy() >= machineBusyMin && s.process() <= processMax; // NaN: false
    int next = contended ? sliceUs : 0;
    if (next != currentUs) {
      currentUs = next;
      switches.incrementAndGet();
      LOG.debug("request threads now ask for a {} slice (machine {} busy, this process {})",
          next == 0 ? "default" : next + " us", s.machineBusy(), s.process());
    }
    return next;
  }

  /**
   * Starts sampling every {@code checkIntervalMs} on a daemon thread ({@code talos-thread-slices});
   * nothing to start with {@link When#ALWAYS}, no slice, or where slices are unavailable.
   */
  public synchronized void start() {
    if (checker != null || sliceUs == 0 || when == When.ALWAYS) return;
    if (ThreadSlice.unavailableReason() != null) {
      LOG.info("request threads keep the scheduler's default slice: {}", ThreadSlice.unavailableReason());
      return;
    }
    cpu.sample(); // the first interval starts now
    checker = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "talos-thread-slices");
      t.setDaemon(true);
      return t;
    });
    checker.scheduleWithFixedDelay(() -> {
      try {
        runOnce();
      } catch (RuntimeException e) {
        LOG.warn("deciding the request threads' slice failed; will retry", e);
      }
    }, checkIntervalMs, checkIntervalMs, TimeUnit.MILLISECONDS);
  }

  /** Stops the sampling thread; the threads keep the slice they have. */
  @Override
  public synchronized void close() {
    if (checker != null) checker.shutdownNow();
    checker = null;
  }

  @Override
  public String toString() {
    return "ThreadSlicePolicy{sliceUs=" + sliceUs + ", when=" + when + ", machineBusyMin=" + machineBusyMin
        + ", processMax=" + processMax + ", currentUs=" + currentUs + "}";
  }
}
