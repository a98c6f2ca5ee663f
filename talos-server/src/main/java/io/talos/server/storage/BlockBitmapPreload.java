package io.talos.server.storage;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Has ext4 read every block group's bitmap of the data directory's file system once, in the
 * background, when it is mounted with {@code no_prefetch_block_bitmaps}: what ext4 itself does
 * after mounting without that option.
 *
 * <p>Why: ext4 allocates a buffered write's blocks when the kernel writes it back, holding the
 * file's block-map lock, and with that option the first allocation in a block group reads the
 * group's bitmap from the device right there. An append to the same segment that needs a new
 * block waits for the lock meanwhile: traced on a loaded VM, the write-back waited 23.5 ms for a
 * bitmap and an append 21.6 ms behind it. Once a group is loaded, ext4 keeps its summary in memory
 * for as long as the file system is mounted and loads it on demand no more; its bitmap and buddy
 * pages are page cache, though, and a bitmap the kernel drops under memory pressure is read again
 * when an allocation needs it, with or without this (as after a mount without the option).
 *
 * <p>How: reading {@code /proc/fs/ext4/<device>/mb_groups} (readable by any user) makes ext4 list
 * each group's free space, loading every group not loaded yet: at most one bitmap read per group
 * (one block per 128 MiB with 4 KiB blocks, 8 MiB for a 256 GiB file system; a group never
 * written needs none), one after the other. The device's name there is the kernel's, found from
 * the mount's device number under {@code /sys/dev/block}.
 *
 * <p>Advice only: nothing here changes what is stored or when a put is acknowledged; a failure
 * leaves the bitmaps to be read on demand, as before.
 *
 * <p>Thread-safety: {@link #run} once, by one thread (the one {@link #start} starts, or a test);
 * the getters from any thread.
 */
public final class BlockBitmapPreload implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(BlockBitmapPreload.class);
  private static final Path PROC_FS_EXT4 = Path.of("/proc/fs/ext4");
  private static final Path SYS_DEV_BLOCK = Path.of("/sys/dev/block");
  /** The groups files a preload was started for in this process. */
  private static final Set<Path> STARTED = ConcurrentHashMap.newKeySet();

  private final Path groupsFile;
  private volatile long groups = -1;
  private volatile long failedGroups = -1;
  private volatile long elapsedMs = -1;
  private volatile String failure;

  BlockBitmapPreload(Path groupsFile) {
    this.groupsFile = groupsFile;
  }

  /**
   * The preload for the file system of {@code mount}, or empty when it needs none (not ext4, or
   * mounted to prefetch the bitmaps itself) or cannot have one (its kernel files are missing).
   */
  public static Optional<BlockBitmapPreload> of(DataDirMount mount) {
    return groupsFile(mount, PROC_FS_EXT4, SYS_DEV_BLOCK).map(BlockBitmapPreload::new);
  }

  /**
   * {@code <procFsExt4>/<name>/mb_groups}, where {@code name} is the last element of the link
   * {@code <sysDevBlock>/<major:minor>} (the kernel's name of the device, as ext4 names its
   * directory); empty when the mount needs no preload or either file is missing.
   */
  static Optional<Path> groupsFile(DataDirMount mount, Path procFsExt4, Path sysDevBlock) {
    if (!mount.readsBlockBitmapsOnDemand()) return Optional.empty();
    try {
      Path device = Files.readSymbolicLink(sysDevBlock.resolve(mount.device()));
      Path file = procFsExt4.resolve(device.getFileName().toString()).resolve("mb_groups");
      return Files.isReadable(file) ? Optional.of(file) : Optional.empty();
    } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  /**
   * Starts {@link #run} on a daemon thread of its own and returns at once; does nothing when this
   * process started one for the same file system before (ext4 keeps the groups it loaded, so a
   * second server in the process, or a restarted one, would only list them again).
   *
   * @return whether it started
   */
  public boolean start() {
    if (!STARTED.add(groupsFile)) return false;
    Thread t = new Thread(this, "block-bitmap-preload");
    t.setDaemon(true);
    t.start();
    return true;
  }

  /** Reads the groups' list to its end (the kernel loads each group as it lists it), and logs the outcome. */
  @Override
  public void run() {
    long start = System.nanoTime();
    long n = 0;
    long failed = 0;
    try (BufferedReader in = Files.newBufferedReader(groupsFile, StandardCharsets.US_ASCII)) {
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        if (isGroupLine(line)) {
          n++;
          if (line.endsWith("I/O error")) failed++;
        }
      }
      groups = n;
      failedGroups = failed;
      elapsedMs = (System.nanoTime() - start) / 1_000_000;
      if (failed == 0) {
        LOG.info("Storage: ext4 has the block bitmaps of {} groups loaded ({}), read in {} ms", n, groupsFile, elapsedMs);
      } else {
        LOG.warn("Storage: ext4 has the block bitmaps of {} of {} groups loaded ({}), read in {} ms; the others"
            + " failed with an I/O error and are read again when an allocation needs them", n - failed, n,
            groupsFile, elapsedMs);
      }
    } catch (IOException | RuntimeException e) {
      failure = e.toString();
      LOG.warn("Storage: could not have ext4 load the block bitmaps through {} (they are read on demand): {}",
          groupsFile, failure);
    }
  }

  /**
   * One group's line, {@code #<group> : <free> ...}; the header is {@code #group: free ...}. A
   * group whose bitmap could not be read is listed as {@code #<group> : I/O error} (ext4 tries it
   * again when it allocates there).
   */
  static boolean isGroupLine(String line) {
    return line.length() > 1 && line.charAt(0) == '#' && Character.isDigit(line.charAt(1));
  }

  /** Groups listed, once the read is done; -1 before, or if it failed. */
  public long groups() {
    return groups;
  }

  /** Of {@link #groups()}, those ext4 could not load (an I/O error); -1 before, or if the read failed. */
  public long failedGroups() {
    return failedGroups;
  }

  /** How long the read took, once done; -1 before, or if it failed. */
  public long elapsedMs() {
    return elapsedMs;
  }

  /** Why the read failed, or null. */
  public String failure() {
    return failure;
  }
}
