package io.talos.server.storage;

import java.io.Closeable;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A read-only view of one partition directory (layout in {@link PartitionLog}), for a server that
 * serves reads of a partition it does not write: it never creates, writes, renames or deletes a
 * file, never claims an owner epoch ({@link PartitionOwnership}) and never recovers a lease, so it
 * never fences the partition's writer, on this server or another.
 *
 * <p><b>What it sees.</b> The {@code .log} files of the directory listing, ascending by base offset
 * (of two with the same base offset, the one of the higher owner epoch; an empty one that is not
 * the newest is skipped, as recovery would delete it). A segment with a valid index is read up to
 * the index's length. Any other segment (on hdfs: the newest, still being written by its owner) is
 * scanned up to the length readers can see now, for a file still open on hdfs the visible length
 * ({@code HdfsDataInputStream.getVisibleLength()}: every hflushed byte, which the listing does not
 * report), and only its whole, CRC-valid records that continue the offsets are readable. The
 * bytes after them may be a record being written: they are looked at again on the next refresh.
 *
 * <p><b>Refresh.</b> A read of an offset at or beyond the known end (or of a file retention
 * deleted meanwhile) lists the directory again and scans the growth of the segments that may still
 * grow, but at most once every {@code refreshIntervalMs} on the clock: a consumer polling the tail
 * costs at most one listing and one open of the newest segment per interval. Between refreshes it
 * answers from what it knows (an end offset that lags by at most the interval).
 *
 * <p><b>Next offset.</b> Like a log, the view never ends below the partition's recorded next offset
 * ({@link NextOffsetStore}, read before each listing, so a writer that raised it after creating a
 * segment is always seen): otherwise its reads fail with {@link PartitionDataMissingException}, as
 * opening the log would.
 *
 * <p><b>Thread-safety.</b> Reads run concurrently, on an immutable snapshot of the segments and
 * the end offset; one refresh at a time swaps in a new snapshot (segments that may grow are
 * extended in place, publishing their records as an append does). Segments that left the listing
 * have their inputs closed under the write lock, never under a running read.
 */
public final class PartitionReader implements Closeable, ReadablePartition {
  private static final Logger LOG = LoggerFactory.getLogger(PartitionReader.class);

  private record Snapshot(List<LogSegment> segments, long endOffset, String missing) {}

  private final FileSystem fs;
  private final Path dir;
  private final LogConfig config;
  private final Clock clock;
  private final long refreshIntervalMs;
  private final NextOffsetStore nextOffsets;
  private final String topicResourceName;
  private final int partitionId;

  private final ReentrantReadWriteLock segmentsLock = new ReentrantReadWriteLock();
  private final Object refreshLock = new Object();
  private volatile Snapshot snapshot = new Snapshot(List.of(), 0, null);
  /** Clock time of the last listing; under refreshLock. */
  private long listedAtMs;
  private volatile boolean closed;
  private volatile int refreshes;

  private PartitionReader(FileSystem fs, Path dir, LogConfig config, Clock clock, long refreshIntervalMs,
      NextOffsetStore nextOffsets, String topicResourceName, int partitionId) {
    this.fs = fs;
    this.dir = dir;
    this.config = config;
    this.clock = clock;
    this.refreshIntervalMs = refreshIntervalMs;
    this.nextOffsets = nextOffsets;
    this.topicResourceName = topicResourceName;
    this.partitionId = partitionId;
  }

  /**
   * Lists and scans {@code dir} once. A missing directory is an empty partition (at offset 0),
   * unless offsets were handed out from it.
   *
   * @param refreshIntervalMs the least time between two listings (see the class comment)
   * @throws PartitionDataMissingException if the partition ends below its recorded next offset
   */
  public static PartitionReader open(FileSystem fs, Path dir, LogConfig config, Clock clock, long refreshIntervalMs,
      NextOffsetStore nextOffsets, String topicResourceName, int partitionId) throws IOException {
    if (refreshIntervalMs < 0) throw new IllegalArgumentException("refreshIntervalMs=" + refreshIntervalMs + " < 0");
    PartitionReader r = new PartitionReader(PartitionLog.rawIfLocal(Objects.requireNonNull(fs, "fs")),
        Objects.requireNonNull(dir, "dir"), Objects.requireNonNull(config, "config"),
        Objects.requireNonNull(clock, "clock"), refreshIntervalMs, Objects.requireNonNull(nextOffsets, "nextOffsets"),
        topicResourceName, partitionId);
    try {
      synchronized (r.refreshLock) {
        r.refreshLocked();
      }
      r.ensureNotMissing();
    } catch (IOException | RuntimeException e) {
      r.close();
      throw e;
    }
    return r;
  }

  @Override
  public long startOffset() {
    Snapshot s = snapshot;
    return s.segments().isEmpty() ? s.endOffset() : Math.min(s.segments().get(0).baseOffset(), s.endOffset());
  }

  @Override
  public long endOffset() {
    return snapshot.endOffset();
  }

  @Override
  public long sizeBytes() {
    long total = 0;
    for (LogSegment seg : snapshot.segments()) total += seg.validBytes();
    return total;
  }

  /** Segments in the view; each holds an input stream once read. */
  public int segmentCount() {
    return snapshot.segments().size();
  }

  /** Listings done so far (the first included). For tests and diagnostics. */
  public int refreshes() {
    return refreshes;
  }

  /**
   * As {@link PartitionLog#read}; an offset at or beyond the known end first refreshes the view if
   * the interval allows.
   *
   * @throws PartitionDataMissingException if the view ends below the partition's recorded next
   *     offset
   */
  @Override
  public List<StoredBlock> read(long offset, int maxMessages, int maxBytes)
      throws OffsetOutOfRangeException, IOException {
    if (maxMessages < 1) throw new IllegalArgumentException("maxMessages=" + maxMessages + " must be >= 1");
    if (maxBytes < 0) throw new IllegalArgumentException("maxBytes=" + maxBytes + " must be >= 0");
    if (offset >= snapshot.endOffset() || snapshot.missing() != null) refreshIfDue();
    try {
      return readKnown(offset, maxMessages, maxBytes);
    } catch (FileNotFoundException e) { // retention by the writer deleted a segment: list again
      if (!refreshIfDue()) throw e;
      return readKnown(offset, maxMessages, maxBytes);
    }
  }

  @Override
  public long offsetForTimestamp(long timestampMs) throws IOException {
    refreshIfDue();
    segmentsLock.readLock().lock();
    try {
      ensureOpen();
      Snapshot s = snapshot;
      if (s.missing() != null) throw new PartitionDataMissingException(s.missing());
      return PartitionLog.offsetForTimestamp(s.segments(), s.endOffset(), timestampMs);
    } finally {
      segmentsLock.readLock().unlock();
    }
  }

  private List<StoredBlock> readKnown(long offset, int maxMessages, int maxBytes)
      throws OffsetOutOfRangeException, IOException {
    segmentsLock.readLock().lock();
    try {
      ensureOpen();
      Snapshot s = snapshot;
      if (s.missing() != null) throw new PartitionDataMissingException(s.missing());
      long end = s.endOffset();
      long start = s.segments().isEmpty() ? end : Math.min(s.segments().get(0).baseOffset(), end);
      if (offset < start || offset > end) throw new OffsetOutOfRangeException(dir.toString(), offset, start, end);
      if (offset == end) return List.of();
      return PartitionLog.readBlocks(dir, s.segments(), end, offset, maxMessages, maxBytes, null);
    } finally {
      segmentsLock.readLock().unlock();
    }
  }

  /**
   * Lists and scans again if the last listing is at least {@code refreshIntervalMs} old.
   *
   * @return whether it did
   */
  public boolean refreshIfDue() throws IOException {
    synchronized (refreshLock) {
      ensureOpen();
      if (clock.millis() - listedAtMs < refreshIntervalMs) return false;
      refreshLocked();
      return true;
    }
  }

  private void ensureNotMissing() throws PartitionDataMissingException {
    String missing = snapshot.missing();
    if (missing != null) throw new PartitionDataMissingException(missing);
  }

  /** One listing: reuses (and extends) the segments still listed, opens new ones, drops gone ones. */
  private void refreshLocked() throws IOException {
    listedAtMs = clock.millis();
    refreshes++;
    long known = nextOffsets.nextOffset(topicResourceName, partitionId); // before listing: see the class comment
    TreeMap<Long, LogRecovery.SegmentFile> files = new TreeMap<>();
    FileStatus[] listing;
    try {
      listing = fs.listStatus(dir);
    } catch (FileNotFoundException e) {
      listing = new FileStatus[0];
    }
    for (FileStatus st : listing) {
      String name = st.getPath().getName();
      if (!st.isFile() || !name.endsWith(LogSegment.LOG_SUFFIX)) continue;
      LogRecovery.SegmentFile f = LogRecovery.parseSegmentName(st, LogSegment.LOG_SUFFIX);
      LogRecovery.SegmentFile other = files.get(f.baseOffset());
      if (other == null || other.epoch() < f.epoch()) files.put(f.baseOffset(), f);
    }
    Snapshot old = snapshot;
    Map<String, LogSegment> current = new HashMap<>();
    for (LogSegment seg : old.segments()) current.put(seg.path().getName(), seg);
    List<LogSegment> next = new ArrayList<>();
    List<LogRecovery.SegmentFile> list = new ArrayList<>(files.values());
    List<LogSegment> opened = new ArrayList<>();
    try {
      for (int i = 0; i < list.size(); i++) {
        LogRecovery.SegmentFile f = list.get(i);
        boolean newest = i == list.size() - 1;
        long limit = newest ? Long.MAX_VALUE : list.get(i + 1).baseOffset();
        LogSegment seg = current.get(f.status().getPath().getName());
        if (seg == null) {
          seg = LogSegment.openReadOnly(fs, dir, f.baseOffset(), f.epoch(), f.status().getLen(), limit, config);
          opened.add(seg);
        } else if (!seg.isComplete()) {
          seg.extendVisible(seg.reopenVisibleLength(), limit);
        }
        if (!newest && !seg.hasRecords()) { // an empty file left before a newer segment
          if (opened.remove(seg)) seg.closeInput();
          continue;
        }
        next.add(seg);
      }
    } catch (FileNotFoundException e) {
      // deleted between the listing and the open (retention, a replaced empty segment): next time
      for (LogSegment seg : opened) seg.closeInput();
      LOG.debug("A segment of {} went away while listing; keeping the previous view", dir, e);
      return;
    } catch (IOException | RuntimeException e) {
      for (LogSegment seg : opened) seg.closeInput();
      throw e;
    }
    long end = next.isEmpty() ? 0 : next.get(next.size() - 1).nextOffset();
    String missing = null;
    if (end < known) {
      missing = "partition log " + dir + " " + (next.isEmpty() ? "holds no segment (missing or emptied)"
          : "ends at offset " + end) + " as far as readers can see, but offsets up to " + known + " were handed out"
          + " (recorded in the metadata store): its data is missing. Restore the directory, or accept the loss with"
          + " 'bin/talos partition reset <topic> <partition>', which continues the partition at offset " + known;
    }
    List<LogSegment> gone = new ArrayList<>(old.segments());
    gone.removeAll(next);
    segmentsLock.writeLock().lock();
    try {
      snapshot = new Snapshot(List.copyOf(next), end, missing);
      for (LogSegment seg : gone) seg.closeInput();
    } finally {
      segmentsLock.writeLock().unlock();
    }
  }

  @Override
  public boolean isClosed() {
    return closed;
  }

  @Override
  public boolean isFenced() {
    return false;
  }

  public Path dir() {
    return dir;
  }

  /** Closes the input streams; reads afterwards fail with an IOException saying so. Idempotent. */
  @Override
  public void close() {
    segmentsLock.writeLock().lock();
    try {
      closed = true;
      for (LogSegment seg : snapshot.segments()) seg.closeInput();
    } finally {
      segmentsLock.writeLock().unlock();
    }
  }

  private void ensureOpen() throws IOException {
    if (closed) throw new IOException("read-only view of partition log " + dir + " is closed");
  }

  @Override
  public String toString() {
    return "PartitionReader[" + dir + ", offsets [" + startOffset() + ", " + endOffset() + "), " + segmentCount()
        + " segments]";
  }
}
