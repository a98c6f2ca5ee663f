package io.talos.bench.load;

import com.sun.jna.Native;
import com.sun.jna.Platform;
import java.util.ArrayList;
import java.util.List;

/**
 * The CPUs this process may run on, and pinning the calling thread to one of them ({@code
 * sched_getaffinity} / {@code sched_setaffinity} of the C library, bound through JNA's direct
 * mapping): what {@link CpuHeartbeats} needs to keep one thread on each CPU. 64-bit Linux only;
 * elsewhere {@link #allowedCpus()} is empty and nothing is pinned.
 */
final class CpuAffinity {
  /** Bits of the masks passed: 1,024 CPUs, glibc's {@code CPU_SETSIZE}. */
  private static final int MASK_LONGS = 16;
  private static final String UNAVAILABLE;

  static {
    String why = null;
    if (!Platform.isLinux()) {
      why = "not Linux";
    } else if (!Platform.is64Bit()) {
      why = "a 32-bit system (the size argument is bound as a 64-bit size_t)";
    } else {
      try {
        Native.register(CpuAffinity.class, Platform.C_LIBRARY_NAME);
      } catch (Throwable t) { // UnsatisfiedLinkError, or JNA's own library missing for this platform
        why = "the C library could not be bound through JNA: " + t;
      }
    }
    UNAVAILABLE = why;
  }

  private static native int sched_getaffinity(int pid, long size, long[] mask);

  private static native int sched_setaffinity(int pid, long size, long[] mask);

  private CpuAffinity() {}

  /** The CPUs the calling thread may run on, ascending; empty where that cannot be known. */
  static List<Integer> allowedCpus() {
    List<Integer> cpus = new ArrayList<>();
    if (UNAVAILABLE != null) return cpus;
    long[] mask = new long[MASK_LONGS];
    if (sched_getaffinity(0, mask.length * 8L, mask) != 0) return cpus;
    for (int i = 0; i < mask.length * 64; i++) {
      if ((mask[i / 64] & (1L << (i % 64))) != 0) cpus.add(i);
    }
    return cpus;
  }

  /** Pins the calling thread to {@code cpu}; whether it is now pinned there. */
  static boolean pinCurrentThread(int cpu) {
    if (UNAVAILABLE != null || cpu < 0 || cpu >= MASK_LONGS * 64) return false;
    long[] mask = new long[MASK_LONGS];
    mask[cpu / 64] = 1L << (cpu % 64);
    return sched_setaffinity(0, mask.length * 8L, mask) == 0;
  }
}
