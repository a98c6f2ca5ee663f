package io.talos.server.storage;

import com.sun.jna.LastErrorException;

/**
 * Keeps the extent tree of a new local segment file one level deep for the file's whole life, by
 * reserving {@link #ANCHORS} single blocks past any end the segment reaches ({@code fallocate}
 * with {@code FALLOC_FL_KEEP_SIZE}: the file's size, and so everything a reader or the recovery
 * scan sees, does not change; the blocks cost {@link #ANCHORS} x 4 KiB of disk per segment and
 * go with the file).
 *
 * <p>Why: ext4 keeps up to four extents in the inode itself and moves them into a tree block
 * when there are more. A segment written while other files of the partition (its indexes) are
 * written too is allocated in pieces, so its extent count crosses four and back: when the
 * kernel's write-back converts the newly written extents and they merge into four or fewer, the
 * tree block is freed under the inode's block-map lock. On a file system mounted with {@code
 * discard} and without a journal the freed block is discarded there and then, a round trip to
 * the disk while every append that needs a new block waits for that lock. The anchors are
 * separated by holes, so they never merge with each other or with the data: the file always has
 * more than four extents, its tree never shrinks back into the inode, and write-back never frees
 * a tree block of it.
 *
 * <p>Linux only; elsewhere, or where the file system has no {@code fallocate} (the call fails with
 * its error number), the file is left as it is: the anchors are advice about the layout and never
 * change what the file holds.
 *
 * <p>Thread-safe: each call opens, reserves and closes its own descriptor.
 */
final class ExtentTreePin {
  /** More extents than the inode holds (four), so the tree stays in a block of its own. */
  static final int ANCHORS = 5;
  /** Bytes of each anchor: one block of a 4 KiB-block file system (ext4's default). */
  static final long ANCHOR_BYTES = 4096;
  /** Distance between two anchors' starts, and the alignment of the first: the hole between them keeps them apart. */
  static final long ANCHOR_SPACING = 64 * 1024;

  /** {@code O_WRONLY | O_CLOEXEC} (Linux x86-64 and aarch64). */
  private static final int O_WRONLY_CLOEXEC = 0x80001;
  private static final int FALLOC_FL_KEEP_SIZE = 1;

  private static final String UNAVAILABLE = LinuxLibc.register(ExtentTreePin.class);

  private ExtentTreePin() {}

  private static native int open(String path, int flags) throws LastErrorException;

  private static native int close(int fd);

  private static native int fallocate(int fd, int mode, long offset, long len) throws LastErrorException;

  /** Null when files can be pinned on this machine, else why not. */
  static String unavailableReason() {
    return UNAVAILABLE;
  }

  /** Where the first anchor of a file whose data ends before {@code dataLimitBytes} starts. */
  static long firstAnchorOffset(long dataLimitBytes) {
    return (dataLimitBytes / ANCHOR_SPACING + 1) * ANCHOR_SPACING;
  }

  /**
   * Reserves the anchors of the file at {@code path}, from {@link #firstAnchorOffset} on. If the
   * data ever reached them it would only be written into blocks reserved ahead, as any
   * preallocated block is.
   *
   * @param dataLimitBytes the most bytes of data the file gets (a segment: its roll size plus
   *     the largest block appended past it)
   * @return null when they are reserved, else why not (the file is then unchanged, or holds
   *     only some of the anchors past its end)
   */
  static String pin(String path, long dataLimitBytes) {
    if (UNAVAILABLE != null) return UNAVAILABLE;
    int fd;
    try {
      fd = open(path, O_WRONLY_CLOEXEC);
    } catch (LastErrorException e) {
      return "open failed with errno " + e.getErrorCode();
    }
    long first = firstAnchorOffset(dataLimitBytes);
    try {
      for (int i = 0; i < ANCHORS; i++) {
        fallocate(fd, FALLOC_FL_KEEP_SIZE, first + i * ANCHOR_SPACING, ANCHOR_BYTES);
      }
      return null;
    } catch (LastErrorException e) {
      return "fallocate failed with errno " + e.getErrorCode();
    } finally {
      close(fd);
    }
  }
}
