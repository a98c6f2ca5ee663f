package io.talos.server.storage;

import com.sun.jna.Native;
import com.sun.jna.Platform;
import com.sun.jna.Pointer;

/**
 * Tests only: which pages of a file are in the OS page cache, by {@code mmap} and {@code mincore}
 * (Linux), and how many of them are dirty, by {@code cachestat}. Mapping a file does not bring its
 * pages in; only touching them would.
 */
final class PageResidency {
  private static final int PAGE = 4096;
  private static final int PROT_READ = 1;
  private static final int MAP_SHARED = 1;

  static {
    Native.register(PageResidency.class, Platform.C_LIBRARY_NAME);
  }

  private PageResidency() {}

  private static native int open(String path, int flags);

  private static native int close(int fd);

  private static native Pointer mmap(Pointer addr, long length, int prot, int flags, int fd, long offset);

  private static native int munmap(Pointer addr, long length);

  private static native int mincore(Pointer addr, long length, byte[] vec);

  private static native long syscall(long number, int fd, long[] range, long[] stat, int flags);

  /** {@code cachestat} (Linux 6.5+), the same number on x86-64 and aarch64. */
  private static final long SYS_CACHESTAT = 451;

  /**
   * How many pages of {@code [offset, offset + length)} are dirty (written, not yet handed to the
   * disk), by the {@code cachestat} system call; -1 where the kernel has no such call.
   */
  static long dirtyPages(String path, long offset, long length) {
    int fd = open(path, 0);
    if (fd < 0) throw new IllegalStateException("cannot open " + path + ": errno " + Native.getLastError());
    try {
      long[] stat = new long[5]; // nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted
      if (syscall(SYS_CACHESTAT, fd, new long[] {offset, length}, stat, 0) != 0) return -1;
      return stat[1];
    } finally {
      close(fd);
    }
  }

  /** Fraction (0..1) of the pages of {@code [offset, offset + length)} that are cached; offset page-aligned. */
  static double residentFraction(String path, long offset, long length) {
    if (offset % PAGE != 0) throw new IllegalArgumentException("offset " + offset + " is not page-aligned");
    int fd = open(path, 0);
    if (fd < 0) throw new IllegalStateException("cannot open " + path + ": errno " + Native.getLastError());
    try {
      Pointer p = mmap(null, length, PROT_READ, MAP_SHARED, fd, offset);
      if (Pointer.nativeValue(p) == -1L) throw new IllegalStateException("mmap failed: errno " + Native.getLastError());
      try {
        int pages = (int) ((length + PAGE - 1) / PAGE);
        byte[] vec = new byte[pages];
        if (mincore(p, length, vec) != 0) throw new IllegalStateException("mincore failed: errno " + Native.getLastError());
        int resident = 0;
        for (byte b : vec) resident += b & 1;
        return (double) resident / pages;
      } finally {
        munmap(p, length);
      }
    } finally {
      close(fd);
    }
  }
}
