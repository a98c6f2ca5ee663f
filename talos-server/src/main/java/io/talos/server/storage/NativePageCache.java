package io.talos.server.storage;

/**
 * The three Linux calls that steer the kernel's page cache for a file: {@code open} (read-only,
 * close-on-exec), {@code sync_file_range} and {@code posix_fadvise(POSIX_FADV_DONTNEED)}, bound
 * through JNA's direct mapping ({@link LinuxLibc}). All of them are advice as far as the data
 * is concerned: none changes what a file holds, what a read returns or when a write is durable.
 *
 * <p>{@link #unavailableReason()} says why the calls cannot be used (not Linux, or the C library
 * could not be bound); the callers then leave the page cache to the kernel.
 *
 * <p>Thread-safe: the calls are system calls on descriptors the caller owns.
 */
final class NativePageCache {
  /** {@code O_RDONLY | O_CLOEXEC} (Linux x86-64 and aarch64). */
  private static final int O_RDONLY_CLOEXEC = 0x80000;
  private static final int POSIX_FADV_DONTNEED = 4;
  private static final int SYNC_FILE_RANGE_WAIT_BEFORE = 1;
  private static final int SYNC_FILE_RANGE_WRITE = 2;
  private static final int SYNC_FILE_RANGE_WAIT_AFTER = 4;

  private static final String UNAVAILABLE = LinuxLibc.register(NativePageCache.class);

  private NativePageCache() {}

  private static native int open(String path, int flags);

  private static native int close(int fd);

  private static native int posix_fadvise(int fd, long offset, long len, int advice);

  private static native int sync_file_range(int fd, long offset, long nbytes, int flags);

  /** Null when the calls can be used, else why not. */
  static String unavailableReason() {
    return UNAVAILABLE;
  }

  /** A read-only descriptor of the file, or -1 (it was deleted, or cannot be opened). */
  static int openReadOnly(String path) {
    return open(path, O_RDONLY_CLOEXEC);
  }

  static void closeQuietly(int fd) {
    if (fd >= 0) close(fd);
  }

  /** Starts writing back the dirty pages of the range without waiting for the disk; 0 or -1. */
  static int startWriteBack(int fd, long offset, long length) {
    return sync_file_range(fd, offset, length, SYNC_FILE_RANGE_WRITE);
  }

  /** Writes back the dirty pages of the range and waits until they are on the disk; 0 or -1. */
  static int writeBackAndWait(int fd, long offset, long length) {
    return sync_file_range(fd, offset, length,
        SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
  }

  /**
   * Asks the kernel to drop the range's clean pages from the page cache (dirty pages and pages
   * under write-back stay); 0, or an error number.
   */
  static int dropCleanPages(int fd, long offset, long length) {
    return posix_fadvise(fd, offset, length, POSIX_FADV_DONTNEED);
  }
}
