package io.talos.server.storage;

import java.io.FileNotFoundException;
import java.io.IOException;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LeaseRecoverable;
import org.apache.hadoop.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who may change one partition directory: the single-writer (fencing) protocol. This comment is
 * the one description of it; docs/storage-format.md refers here.
 *
 * <p><b>Why.</b> On file systems with leases (hdfs) several servers can reach the same directory,
 * and only one may change it (append, roll, seal, replace, retention). On the local file system
 * (no leases) there is no fencing: epochs stay 0, file names carry no epoch, and a {@code file://}
 * root belongs to one server.
 *
 * <p><b>Claim.</b> A writer claims the partition ({@link #claim}) by creating the empty marker
 * file {@code <20-digit epoch>.owner} with {@code overwrite=false}, at one more than every epoch
 * found in the directory (markers and segment names); losing that race to another server just
 * tries the next epoch. Older markers are then deleted. Only after the claim does the writer list
 * the segments and recover the lease of every segment still open ({@link LogRecovery}), which
 * makes the previous owner's next hflush fail, and reads each segment's length again once it is
 * closed.
 *
 * <p><b>Names.</b> Every segment an owner creates carries its epoch in its name ({@code
 * <baseOffset>-<epoch>.log}), so two owners never create, replace or delete the same file.
 *
 * <p><b>Check before mutate.</b> The owner calls {@link #check} (no marker with a higher epoch
 * exists) before every change of existing files: sealing or replacing a segment (roll, failed
 * append, close), and retention deletes ({@link SegmentRetention}); and {@link #createSegment
 * after creating} a segment, before the first append to it. An owner that finds a newer marker
 * (or its own marker gone) is <i>fenced</i> for good: that call and every later one throw {@link
 * PartitionFencedException}, and it touches no file again (close does not seal, retention does
 * not delete). {@link #isFenced()} tells the cache to close and evict the log.
 *
 * <p><b>Why that suffices.</b> The check after creating a segment passes only if the new owner's
 * marker came later, so the new owner's listing (after its marker) sees the segment and recovers
 * its lease; the old owner's appends to any segment the new owner saw fail once that lease is
 * recovered, and every append acknowledged before is in the length the recovery fixes (read after
 * the file is closed, never from the listing). A change of an existing file is checked first, so
 * once the new owner's marker exists the old owner changes nothing but a file whose lease the new
 * owner recovers (an hflush then fails).
 *
 * <p>Thread-safety: {@link #check} and {@link #createSegment} are called by the log's append-lock
 * holder (or the opening thread); {@link #isFenced} and {@link #ensureNotFenced} from any thread.
 */
final class PartitionOwnership {
  private static final Logger LOG = LoggerFactory.getLogger(PartitionOwnership.class);
  static final String OWNER_SUFFIX = ".owner";

  private final FileSystem fs;
  private final Path dir;
  /** Whether owner epochs fence other servers: only where files have leases. */
  private final boolean fencing;
  /** This owner's epoch; 0 without fencing. */
  private final long epoch;
  /** Non-null once another owner took over: what every call then throws. */
  private volatile String fencedBy;

  private PartitionOwnership(FileSystem fs, Path dir, boolean fencing, long epoch) {
    this.fs = fs;
    this.dir = dir;
    this.fencing = fencing;
    this.epoch = epoch;
  }

  /** Whether {@code fs} has leases, so that partitions are claimed and fenced on it. */
  static boolean fencingOn(FileSystem fs) {
    return fs instanceof LeaseRecoverable;
  }

  /**
   * Claims the partition in {@code dir} (which must exist): on a file system with leases creates
   * the marker of the next owner epoch, trying higher epochs if another server claims
   * concurrently, then deletes the markers of older epochs; elsewhere owns it at epoch 0.
   */
  static PartitionOwnership claim(FileSystem fs, Path dir) throws IOException {
    if (!fencingOn(fs)) return new PartitionOwnership(fs, dir, false, 0);
    long max = 0;
    for (FileStatus st : fs.listStatus(dir)) {
      String name = st.getPath().getName();
      if (name.endsWith(OWNER_SUFFIX)) {
        max = Math.max(max, parseOwnerEpoch(name));
      } else if (name.endsWith(LogSegment.LOG_SUFFIX) || name.endsWith(LogSegment.INDEX_SUFFIX)) {
        max = Math.max(max, LogRecovery.parseSegmentName(st, name.endsWith(LogSegment.LOG_SUFFIX)
            ? LogSegment.LOG_SUFFIX : LogSegment.INDEX_SUFFIX).epoch());
      }
    }
    for (int attempt = 0; attempt < 10; attempt++) {
      long mine = max + 1;
      Path marker = ownerMarker(dir, mine);
      try {
        FSDataOutputStream out = fs.create(marker, false);
        out.close();
      } catch (IOException e) {
        if (!fs.exists(marker)) throw e;
        LOG.info("Owner epoch {} of {} was claimed by another server; trying the next", mine, dir);
        max = mine;
        continue;
      }
      for (FileStatus st : fs.listStatus(dir)) {
        String name = st.getPath().getName();
        if (name.endsWith(OWNER_SUFFIX) && parseOwnerEpoch(name) < mine) {
          try {
            LogSegment.deleteFile(fs, st.getPath());
          } catch (IOException e) { // harmless: the higher marker decides; the next claim retries
            LOG.warn("Could not delete the old owner marker {}", st.getPath(), e);
          }
        }
      }
      LOG.info("Claimed {} with owner epoch {}", dir, mine);
      return new PartitionOwnership(fs, dir, true, mine);
    }
    throw new IOException("could not claim " + dir + ": 10 owner epochs up to " + max + " were claimed concurrently");
  }

  static Path ownerMarker(Path dir, long epoch) {
    return new Path(dir, String.format("%020d%s", epoch, OWNER_SUFFIX));
  }

  static long parseOwnerEpoch(String name) throws IOException {
    String digits = name.substring(0, name.length() - OWNER_SUFFIX.length());
    if (digits.length() != 20 || !LogRecovery.isDigits(digits)) {
      throw new IOException("unexpected owner marker " + name + ": expected 20 digits + " + OWNER_SUFFIX);
    }
    return Long.parseLong(digits);
  }

  /** This owner's epoch; 0 without fencing. */
  long epoch() {
    return epoch;
  }

  boolean fencing() {
    return fencing;
  }

  /**
   * Check before mutate: throws (and fences this owner for good) if a newer owner claimed the
   * partition or this owner's marker is gone. No-op without fencing.
   */
  void check() throws IOException {
    if (!fencing) return;
    ensureNotFenced();
    long newest = -1;
    try {
      for (FileStatus st : fs.listStatus(dir)) {
        String name = st.getPath().getName();
        if (name.endsWith(OWNER_SUFFIX)) newest = Math.max(newest, parseOwnerEpoch(name));
      }
    } catch (FileNotFoundException e) {
      newest = -1;
    }
    if (newest == epoch) return;
    fencedBy = newest > epoch
        ? "partition log " + dir + " was taken over by another server (owner epoch " + newest + " > ours, " + epoch
            + "); this server no longer appends to it or serves it"
        : "partition log " + dir + " lost its owner marker (epoch " + epoch + "); this server no longer appends to it";
    LOG.warn("{}", fencedBy);
    throw new PartitionFencedException(fencedBy);
  }

  /** Throws if a previous {@link #check} found this owner fenced. */
  void ensureNotFenced() throws PartitionFencedException {
    String why = fencedBy;
    if (why != null) throw new PartitionFencedException(why);
  }

  boolean isFenced() {
    return fencedBy != null;
  }

  /**
   * Creates a segment under this owner's epoch and checks the ownership after creating it, before
   * anything is appended. A fenced owner deletes the file it just created (nobody else uses its
   * epoch's names).
   */
  LogSegment createSegment(long baseOffset, LogConfig config, TailCache cache) throws IOException {
    LogSegment s = LogSegment.create(fs, dir, baseOffset, epoch, config, cache);
    try {
      check();
    } catch (IOException e) {
      try {
        s.deleteFiles();
      } catch (IOException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
    return s;
  }
}
