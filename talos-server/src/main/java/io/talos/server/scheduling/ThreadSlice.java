package io.talos.server.scheduling;

import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Platform;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks the Linux scheduler for a short time slice for the calling thread, or gives it back: the
 * threads that a put or a get waits for (the HTTP threads, the task-pool workers, the storage
 * threads) ask for one when {@link ThreadSlicePolicy} says so.
 *
 * <p>Why: when every core is busy (other processes, the JIT, the GC), a thread woken by a request
 * waits until the scheduler lets it run, and each put passes through several such wake-ups. Since
 * Linux 6.12 the fair scheduler (EEVDF) lets a thread of the normal class choose its slice
 * ({@code sched_setattr} with {@code sched_runtime}, 0.1 to 100 ms; no privilege needed, the
 * thread's weight is unchanged): a thread with a shorter slice gets an earlier deadline when it
 * wakes, and preempts a running thread whose slice is longer. A server thread runs for tens of
 * microseconds per request and sleeps again, so it loses nothing by a short slice, and on a busy
 * machine it runs soon after its wake-up instead of after a busy neighbour's slice. It gets no
 * more CPU than its fair share: the weight (nice value) decides that, not the slice.
 *
 * <p>Best effort: on another system, another architecture, a kernel older than 6.12 (which takes
 * the call but ignores the slice), or if the call fails, the thread keeps the kernel's default;
 * the first such case is logged once (a failed call as a warning). After {@link
 * #setForCurrentThread}, a thread that the calling thread starts gets the kernel's default slice,
 * not the calling thread's (the call sets {@code SCHED_FLAG_RESET_ON_FORK}; without it Linux would
 * copy the slice to every thread started from a request thread, whatever that thread is for);
 * {@link #around} lets them inherit it. {@link #ofCurrentThreadNanos()}
 * reads back what the kernel applies. The call binds through JNA's interface mapping (the C
 * library's {@code syscall}; the C library has no wrapper for these two calls).
 *
 * <p>Thread-safe; each call applies to the calling thread only.
 */
public final class ThreadSlice {
  private static final Logger LOG = LoggerFactory.getLogger(ThreadSlice.class);
  /** The range the kernel accepts for a custom slice of a normal-class thread, in microseconds. */
  public static final int MIN_US = 100;
  public static final int MAX_US = 100_000;

  /** {@code struct sched_attr}, its first version (56 bytes): what both calls read and write. */
  private static final int ATTR_SIZE = 56;
  private static final int OFF_POLICY = 4;
  private static final int OFF_FLAGS = 8;
  private static final int OFF_RUNTIME = 24;
  private static final int SCHED_OTHER = 0;
  private static final int SCHED_BATCH = 3;
  /** Threads started by this one begin with the default policy, nice (if negative) and slice. */
  private static final long SCHED_FLAG_RESET_ON_FORK = 0x01;

  private static final long SETATTR;
  private static final long GETATTR;
  private static final CLibrary LIBC;
  private static final String UNAVAILABLE;
  private static volatile boolean failureLogged;

  static {
    long set = -1;
    long get = -1;
    CLibrary lib = null;
    String why = null;
    if (!Platform.isLinux()) {
      why = "not Linux (" + System.getProperty("os.name") + ")";
    } else if (Platform.isIntel() && Platform.is64Bit()) {
      set = 314;
      get = 315;
    } else if (Platform.isARM() && Platform.is64Bit()) {
      set = 274;
      get = 275;
    } else {
      why = "no system call numbers for " + System.getProperty("os.arch");
    }
    if (why == null) {
      try {
        lib = Native.load(Platform.C_LIBRARY_NAME, CLibrary.class);
      } catch (Throwable t) { // UnsatisfiedLinkError, or JNA's own library missing for this platform
        why = "the C library could not be bound through JNA: " + t;
      }
    }
    SETATTR = set;
    GETATTR = get;
    LIBC = lib;
    UNAVAILABLE = why;
  }

  /** The C library's variadic {@code long syscall(long number, ...)}. */
  interface CLibrary extends Library {
    long syscall(long number, Object... args);
  }

  private ThreadSlice() {}

  /** Null when slices can be requested here, else why not. */
  public static String unavailableReason() {
    return UNAVAILABLE;
  }

  /** Whether {@code micros} is 0 (the kernel's default) or a slice the kernel accepts. */
  public static boolean isAllowed(int micros) {
    return micros == 0 || (micros >= MIN_US && micros <= MAX_US);
  }

  /** {@code micros}, if {@link #isAllowed}; else an IllegalArgumentException saying what is. */
  public static int requireAllowed(int micros) {
    if (!isAllowed(micros)) {
      throw new IllegalArgumentException("thread slice " + micros + " us must be 0 or between " + MIN_US
          + " and " + MAX_US);
    }
    return micros;
  }

  /**
   * Sets the calling thread's slice to {@code micros}, or back to the kernel's default with 0,
   * keeping its policy and nice value; threads it starts afterwards begin with the default.
   * Returns whether the kernel now applies a slice of {@code micros} (for 0, whether the call was
   * made and taken); false on a kernel that takes the call but ignores the slice, and wherever
   * slices are unavailable.
   *
   * @throws IllegalArgumentException unless micros is 0 or between {@link #MIN_US} and {@link #MAX_US}
   */
  public static boolean setForCurrentThread(int micros) {
    return set(micros, true);
  }

  private static boolean set(int micros, boolean resetOnFork) {
    requireAllowed(micros);
    if (UNAVAILABLE != null) {
      if (micros != 0) logOnce(false, "threads keep the scheduler's default slice: {}", UNAVAILABLE);
      return false;
    }
    Memory attr = currentAttr(); // keeps the policy and nice value: the same nice never needs a privilege
    if (attr == null) {
      logOnce(true, "threads keep the scheduler's default slice: sched_getattr failed, errno {}", Native.getLastError());
      return false;
    }
    int policy = attr.getInt(OFF_POLICY);
    if (policy != SCHED_OTHER && policy != SCHED_BATCH) return false; // a real-time or deadline thread: not ours to change
    attr.setInt(0, ATTR_SIZE);
    attr.setLong(OFF_FLAGS, resetOnFork ? SCHED_FLAG_RESET_ON_FORK : 0L);
    attr.setLong(OFF_RUNTIME, micros * 1000L); // 0: the kernel's default slice again
    if (LIBC.syscall(SETATTR, 0, attr, 0) != 0) {
      logOnce(true, "threads keep the scheduler's default slice: sched_setattr failed, errno {}", Native.getLastError());
      return false;
    }
    if (micros == 0) return true;
    Long applied = ofCurrentThreadNanos();
    if (applied == null || applied != micros * 1000L) {
      logOnce(false, "threads keep the scheduler's default slice: this kernel does not apply a chosen one (Linux"
          + " 6.12 or later does; it reports {} ns)", applied);
      return false;
    }
    return true;
  }

  /**
   * The calling thread's slice as the kernel reports it, in nanoseconds, or null where it cannot be
   * read. Kernels before 6.12 report 0 for a thread of the normal class.
   */
  public static Long ofCurrentThreadNanos() {
    if (UNAVAILABLE != null) return null;
    Memory attr = currentAttr();
    return attr == null ? null : attr.getLong(OFF_RUNTIME);
  }

  /** The calling thread's {@code sched_attr} ({@code sched_getattr}), or null if the call failed. */
  private static Memory currentAttr() {
    Memory attr = new Memory(ATTR_SIZE);
    attr.clear();
    return LIBC.syscall(GETATTR, 0, attr, ATTR_SIZE, 0) == 0 ? attr : null;
  }

  /**
   * {@code task}, preceded by asking for a slice of {@code micros} (0: {@code task} itself) that
   * the threads {@code task} starts get too: the body of a thread that runs a whole program part
   * with one slice (the bench's load generator and the client threads it starts).
   */
  public static Runnable around(int micros, Runnable task) {
    if (micros == 0) return task;
    return () -> {
      set(micros, false);
      task.run();
    };
  }

  /** @param failure a call that failed (warning), not a system without custom slices (information) */
  private static void logOnce(boolean failure, String message, Object arg) {
    if (failureLogged) return;
    failureLogged = true;
    if (failure) {
      LOG.warn(message, arg);
    } else {
      LOG.info(message, arg);
    }
  }
}
