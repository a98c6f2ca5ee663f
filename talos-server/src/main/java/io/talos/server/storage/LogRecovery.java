package io.talos.server.storage;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LeaseRecoverable;
import org.apache.hadoop.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens the segments of a partition directory after a restart, a crash or a takeover, for the
 * owner that just {@link PartitionOwnership#claim claimed} it.
 *
 * <p>Sealed segments with a valid index are not read; others are scanned up to the next segment's
 * base offset (a gap before it is acknowledged data lost: logged as an error, and reads of it
 * fail). The newest segment is always scanned, and cut back to its last whole, CRC-valid record:
 * the rest is a torn tail. Since files are never reopened for writing, the recovered segment is
 * sealed with the valid length in its index (so the torn bytes stay on disk, ignored, until
 * retention deletes the segment) and a new active segment starts at the recovered end offset; a
 * newest segment without any whole record is replaced instead (the new file is created before the
 * old one is deleted, so the directory always names the end offset).
 *
 * <p><b>Lengths.</b> On file systems with leases (hdfs) the length in a directory listing is not
 * final while the file is open, and the listing is taken before the lease recovery: a segment
 * left open by a crashed or fenced writer has its lease recovered first, and every segment's
 * length is read again ({@code getFileStatus}) once the file is closed. Only that length is
 * scanned; using the listing's would drop acknowledged (hflushed) records and hand their offsets
 * out again.
 *
 * <p>Not thread-safe: used by the thread that opens the log.
 */
final class LogRecovery {
  private static final Logger LOG = LoggerFactory.getLogger(LogRecovery.class);

  private final FileSystem fs;
  private final Path dir;
  private final LogConfig config;
  private final TailCache cache;
  private final PartitionOwnership owner;

  private LogRecovery(FileSystem fs, Path dir, LogConfig config, TailCache cache, PartitionOwnership owner) {
    this.fs = fs;
    this.dir = dir;
    this.config = config;
    this.cache = cache;
    this.owner = owner;
  }

  /** A segment or index file found in the directory. */
  record SegmentFile(long baseOffset, long epoch, FileStatus status) {}

  /**
   * Opens every segment of {@code dir}, ending with a new active one.
   *
   * @param knownNextOffset the partition's next offset as recorded outside the directory (0 if
   *     unknown): offsets below it were handed out, so the log must reach it
   * @param reset whether the operator accepted that offsets below {@code knownNextOffset} are lost:
   *     the new active segment then starts at {@code knownNextOffset}
   * @return the segments, ascending, the last one writable
   * @throws PartitionDataMissingException if the log ends below {@code knownNextOffset} and not
   *     {@code reset}
   */
  static List<LogSegment> recover(FileSystem fs, Path dir, LogConfig config, TailCache cache,
      PartitionOwnership owner, long knownNextOffset, boolean reset) throws IOException {
    return new LogRecovery(fs, dir, config, cache, owner).recover(knownNextOffset, reset);
  }

  private List<LogSegment> recover(long knownNextOffset, boolean reset) throws IOException {
    TreeMap<Long, SegmentFile> logs = new TreeMap<>();
    List<SegmentFile> indexes = new ArrayList<>();
    for (FileStatus st : fs.listStatus(dir)) {
      String name = st.getPath().getName();
      if (name.endsWith(LogSegment.LOG_SUFFIX) && st.isFile()) {
        SegmentFile f = parseSegmentName(st, LogSegment.LOG_SUFFIX);
        SegmentFile other = logs.get(f.baseOffset());
        if (other == null) {
          logs.put(f.baseOffset(), f);
        } else {
          SegmentFile older = other.epoch() < f.epoch() ? other : f;
          logs.put(f.baseOffset(), other.epoch() < f.epoch() ? f : other);
          dropOlderDuplicate(older);
        }
      } else if (name.endsWith(LogSegment.INDEX_SUFFIX) && st.isFile()) {
        indexes.add(parseSegmentName(st, LogSegment.INDEX_SUFFIX));
      } else if (name.endsWith(TimeIndex.SUFFIX) && st.isFile()) {
        indexes.add(parseSegmentName(st, TimeIndex.SUFFIX));
      } else if (name.endsWith(LogSegment.INDEX_SUFFIX + ".tmp") || name.endsWith(TimeIndex.SUFFIX + ".tmp")) {
        deleteLeftover(st.getPath());
      } else if (!name.endsWith(PartitionOwnership.OWNER_SUFFIX)) {
        LOG.warn("Ignoring unexpected file {} in partition log directory {}", name, dir);
      }
    }
    for (SegmentFile index : indexes) {
      SegmentFile log = logs.get(index.baseOffset());
      if (log == null || log.epoch() != index.epoch()) {
        LOG.info("Deleting {}: its segment is gone", index.status().getPath());
        deleteLeftover(index.status().getPath());
      }
    }

    List<LogSegment> opened = new ArrayList<>();
    try {
      openSegments(logs, opened, knownNextOffset, reset);
    } catch (IOException | RuntimeException e) {
      for (LogSegment s : opened) {
        s.abortWriter();
        s.closeInput();
      }
      throw e;
    }
    return opened;
  }

  /**
   * Opens the segment files (ascending base offsets) into {@code opened}, ending with a new active
   * one. An empty file that is not the newest is dropped: no roll leaves one (a segment is rolled
   * only once it holds records), only a fenced owner that created a segment after the takeover.
   */
  private void openSegments(TreeMap<Long, SegmentFile> logs, List<LogSegment> opened, long knownNextOffset,
      boolean reset) throws IOException {
    List<SegmentFile> files = new ArrayList<>();
    List<Long> lengths = new ArrayList<>();
    for (SegmentFile f : logs.values()) {
      files.add(f);
      lengths.add(recoveredLength(f.status()));
    }
    for (int i = files.size() - 2; i >= 0; i--) {
      if (lengths.get(i) == 0) {
        LOG.warn("Deleting {}: an empty segment that is not the newest one (left by a fenced owner)",
            files.get(i).status().getPath());
        deleteLeftover(files.get(i).status().getPath());
        files.remove(i);
        lengths.remove(i);
      }
    }
    LogSegment emptyLast = null;
    LogSegment.Damage damage = null;
    long end = 0;
    for (int i = 0; i < files.size(); i++) {
      SegmentFile f = files.get(i);
      long fileBytes = lengths.get(i);
      if (i < files.size() - 1) {
        opened.add(LogSegment.openSealed(fs, dir, f.baseOffset(), f.epoch(), fileBytes, files.get(i + 1).baseOffset(),
            config, cache));
        continue;
      }
      LogSegment last = LogSegment.recover(fs, dir, f.baseOffset(), f.epoch(), fileBytes, config, cache);
      end = last.nextOffset();
      damage = last.damage();
      if (last.hasRecords()) {
        last.seal();
        opened.add(last);
      } else {
        emptyLast = last;
      }
    }
    // Valid records after a corrupt one in the newest segment prove their offsets were handed out:
    // cutting back there would hand them out again (other messages under offsets a consumer may
    // have read), so that is missing data like offsets recorded in the metadata store.
    String evidence = "recorded in the metadata store";
    if (damage != null && damage.handedOutUpTo() > knownNextOffset) {
      knownNextOffset = damage.handedOutUpTo();
      evidence = "valid records follow a corrupt one at offset " + damage.offset() + " (position "
          + damage.position() + ": " + damage.reason() + ")";
    }
    if (end < knownNextOffset) {
      String what = files.isEmpty()
          ? "holds no segment (missing or emptied)"
          : "ends at offset " + end;
      if (!reset) {
        throw new PartitionDataMissingException("partition log " + dir + " " + what + ", but offsets up to "
            + knownNextOffset + " were handed out (" + evidence + "): its data is missing."
            + " Restore the directory, or accept the loss with 'bin/talos partition reset <topic> <partition>',"
            + " which continues the partition at offset " + knownNextOffset);
      }
      LOG.error("DATA LOSS accepted by an operator reset: partition log {} {}; it continues at offset {}, and"
          + " offsets [{}, {}) cannot be read", dir, what, knownNextOffset, end, knownNextOffset);
      end = knownNextOffset;
    }
    // create the new active segment before deleting an empty one, so that a crash or failure in
    // between never leaves a directory without a segment naming the end offset
    if (emptyLast != null && emptyLast.baseOffset() == end && emptyLast.epoch() == owner.epoch()) {
      emptyLast.abortWriter();
      emptyLast.closeInput();
      opened.add(owner.createSegment(end, config, cache)); // same name: create() replaces it in place
    } else {
      opened.add(owner.createSegment(end, config, cache));
      if (emptyLast != null) {
        emptyLast.closeInput();
        deleteLeftover(LogSegment.indexPath(dir, emptyLast.baseOffset(), emptyLast.epoch()));
        deleteLeftover(emptyLast.path());
      }
    }
  }

  /** A lower-epoch segment file with the same base offset as another: deleted if empty, else kept aside. */
  private void dropOlderDuplicate(SegmentFile older) throws IOException {
    Path path = older.status().getPath();
    long len = recoveredLength(older.status());
    if (len == 0) {
      LOG.info("Deleting {}: an empty segment replaced by a newer owner's", path);
      deleteLeftover(path);
    } else {
      LOG.error("Ignoring {}: another segment with the same base offset and a newer owner epoch exists", path);
    }
  }

  /**
   * Deletes a file that is no part of the log (it is ignored either way). A failure, including a
   * {@code delete} that returns false, is logged and the next open tries again: it must not keep
   * the partition from opening.
   */
  private void deleteLeftover(Path path) {
    try {
      LogSegment.deleteFile(fs, path);
    } catch (IOException e) {
      LOG.warn("Could not delete {}, which is no part of the log {}; it is ignored and the next open tries again",
          path, dir, e);
    }
  }

  /**
   * The final length of a segment file. On file systems with leases, a file left open by its
   * writer has its lease recovered first (waiting up to {@link LogConfig#leaseRecoveryTimeoutMs()}
   * until it is closed), and the length is then read again: the listing's length may predate the
   * recovery or a close by the previous owner. Elsewhere the listing's length is final.
   */
  private long recoveredLength(FileStatus listed) throws IOException {
    if (!(fs instanceof LeaseRecoverable leases)) return listed.getLen();
    Path path = listed.getPath();
    if (!leases.isFileClosed(path)) {
      LOG.warn("{} was left open by its writer; recovering its lease", path);
      long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.leaseRecoveryTimeoutMs());
      boolean closedNow = leases.recoverLease(path);
      while (!closedNow) {
        if (System.nanoTime() - deadlineNs > 0) {
          throw new IOException("lease of " + path + " was not recovered within leaseRecoveryTimeoutMs="
              + config.leaseRecoveryTimeoutMs());
        }
        try {
          Thread.sleep(200);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new InterruptedIOException("interrupted while recovering the lease of " + path);
        }
        closedNow = leases.isFileClosed(path);
      }
    }
    long len = fs.getFileStatus(path).getLen();
    if (len != listed.getLen()) {
      LOG.info("{} is {} bytes once closed (the directory listing said {})", path, len, listed.getLen());
    }
    return len;
  }

  static SegmentFile parseSegmentName(FileStatus st, String suffix) throws IOException {
    String name = st.getPath().getName();
    String stem = name.substring(0, name.length() - suffix.length());
    long base;
    long epoch = 0;
    if (stem.length() == 20 && isDigits(stem)) {
      base = Long.parseLong(stem);
    } else if (stem.length() == 41 && stem.charAt(20) == '-' && isDigits(stem.substring(0, 20))
        && isDigits(stem.substring(21))) {
      base = Long.parseLong(stem.substring(0, 20));
      epoch = Long.parseLong(stem.substring(21));
    } else {
      throw new IOException("unexpected segment file name " + name + ": expected 20 digits, optionally followed by"
          + " '-' and a 20-digit owner epoch, + " + suffix);
    }
    return new SegmentFile(base, epoch, st);
  }

  static boolean isDigits(String s) {
    return !s.isEmpty() && s.chars().allMatch(c -> c >= '0' && c <= '9');
  }
}
