package io.talos.server.storage;

import java.io.Closeable;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FSError;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LeaseRecoverable;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The durable, ordered log of one partition: message blocks with consecutive offsets, stored as
 * {@link LogSegment segments} in one directory through the Hadoop {@link FileSystem} API.
 *
 * <pre>
 * &lt;dir&gt;/
 *   00000000000000000000.log     sealed segment: offsets [0, 1200)
 *   00000000000000000000.index   its sparse index + seal summary (see {@link OffsetIndex})
 *   00000000000000001200.log     active segment: offsets [1200, endOffset), being written
 * </pre>
 *
 * <p>Only {@code create}, {@code open} with positioned reads, {@code listStatus}, {@code delete},
 * {@code rename} and {@code hflush}/{@code hsync} are used, never {@code append} or {@code
 * truncate}, so the same code runs on {@code file://} (use {@link
 * org.apache.hadoop.fs.RawLocalFileSystem}; a checksummed {@link LocalFileSystem} passed in is
 * unwrapped to it, since its streams cannot hflush/hsync) and on {@code hdfs://}.
 *
 * <p><b>Appends.</b> {@link #append} encodes all blocks of a call into one buffer, writes it with
 * one write and makes it durable with one hflush ({@link Durability#FLUSH}) or hsync ({@link
 * Durability#SYNC}; on RawLocalFileSystem 3.4.1 that is {@code FileDescriptor.sync()}, i.e.
 * fsync), and only then publishes the new end offset. If the write or the flush fails, the end
 * offset is not advanced and the bytes that may have reached the file are never read: the
 * segment's writer is dropped and a new active segment is started at the unchanged end offset
 * (replacing the failed one if it held no acknowledged record). If that fails too, the next append
 * tries again first. A failed append may still have reached the disk; after a crash such a record
 * can appear on recovery (at-least-once: the producer got an error and may send it again).
 *
 * <p><b>Recovery</b> ({@link #open}). Sealed segments with a valid index are not read; others are
 * scanned up to the next segment's base offset (a gap before it is acknowledged data lost: logged
 * as an error, and reads of it fail). The newest segment is always scanned, and cut back to its
 * last whole, CRC-valid record: the rest is a torn tail. Since files are never reopened for
 * writing, the recovered segment is sealed with the valid length in its index (so the torn bytes
 * stay on disk, ignored, until retention deletes the segment) and a new active segment starts at
 * the recovered end offset; a newest segment without any whole record is replaced instead. So
 * each open of a log whose newest segment holds records starts a new segment. On file systems with leases (hdfs), a segment left open by
 * a crashed writer has its lease recovered first, so its length is final.
 *
 * <p><b>Single writer (fencing).</b> On file systems with leases (hdfs) several servers can reach
 * the same directory, and only one may append. {@link #open} claims the partition by creating the
 * empty marker file {@code <20-digit epoch>.owner} with {@code overwrite=false}, at one more than
 * every epoch found in the directory (markers and segment names); losing that race to another
 * server just tries the next epoch. Only then does it list the segments and recover the lease of
 * every segment still open, which makes the previous owner's next hflush fail. Every segment the
 * owner creates carries its epoch in its name ({@code <baseOffset>-<epoch>.log}), so two owners
 * never create, replace or delete the same file. The owner checks that no marker with a higher
 * epoch exists before it seals or replaces a segment (roll, failed append, retention) and after
 * it creates one, before the first append to it; an owner that finds one is <i>fenced</i>: the
 * failing append and every later call throw {@link PartitionFencedException}, and it touches no
 * file again (close does not seal). Why that suffices: the check after creating a segment passes
 * only if the new owner's marker came later, so the new owner's listing (after its marker) sees
 * the segment and recovers its lease; the old owner's appends to any segment the new owner saw fail
 * once that lease is recovered, and every append acknowledged before is in the length the recovery
 * fixes. On the local file system (no leases) there is no fencing, epochs stay 0 and file names
 * carry no epoch: a {@code file://} root belongs to one server.
 *
 * <p><b>Thread-safety.</b> Appends, rolls, retention and close are serialized by an append lock.
 * Reads take no part in it and run concurrently with appends: they see every record below the end
 * offset they read first (volatile), which is published after the records' bytes, index entries
 * and segment size. Removing segments (retention, close) takes a read-write lock exclusively, so a
 * segment is never closed under a running read.
 */
public final class PartitionLog implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(PartitionLog.class);

  private final FileSystem fs;
  private final Path dir;
  private final LogConfig config;
  private final Clock clock;
  private final TailCache cache;
  /** Whether owner epochs fence other servers: only where files have leases. */
  private final boolean fencing;
  /** This owner's epoch; 0 without fencing. */
  private long epoch;

  private final ReentrantLock appendLock = new ReentrantLock();
  private final ReentrantReadWriteLock segmentsLock = new ReentrantReadWriteLock();
  /** Ascending base offsets, never empty; the last one is the active segment. Immutable lists. */
  private volatile List<LogSegment> segments;
  private volatile long endOffset;
  private volatile long lastAppendTimestampMs;
  private volatile boolean closed;
  /** Non-null once another owner took over: what every call then throws. */
  private volatile String fencedBy;

  private PartitionLog(FileSystem fs, Path dir, LogConfig config, Clock clock, TailCache cache) {
    this.fs = fs;
    this.dir = dir;
    this.config = config;
    this.clock = clock;
    this.cache = cache;
    this.fencing = fs instanceof LeaseRecoverable;
  }

  /**
   * Opens the log in {@code dir}, creating the directory and a first segment at offset 0 if
   * needed, and recovers it (see the class comment). Afterwards every acknowledged record is
   * readable and the log is writable.
   */
  public static PartitionLog open(FileSystem fs, Path dir, LogConfig config, Clock clock) throws IOException {
    return open(fs, dir, config, clock, TailCache.DISABLED);
  }

  /**
   * As {@link #open(FileSystem, Path, LogConfig, Clock)}, caching recent appends in {@code cache}
   * (shared by the logs of a server). On a file system with leases this takes the partition over
   * from any previous owner (see "Single writer" in the class comment).
   *
   * @throws PartitionFencedException if yet another server claimed the partition while this one
   *     was opening it
   */
  public static PartitionLog open(FileSystem fs, Path dir, LogConfig config, Clock clock, TailCache cache)
      throws IOException {
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(clock, "clock");
    Objects.requireNonNull(cache, "cache");
    PartitionLog log = new PartitionLog(rawIfLocal(Objects.requireNonNull(fs, "fs")), dir, config, clock, cache);
    log.recover();
    return log;
  }

  /** The checksummed local file system writes .crc files and cannot hflush/hsync: use its raw one. */
  static FileSystem rawIfLocal(FileSystem fs) {
    return fs instanceof LocalFileSystem local ? local.getRaw() : fs;
  }

  private void recover() throws IOException {
    long startNs = System.nanoTime();
    if (!fs.exists(dir)) {
      Path existing = dir.getParent();
      while (existing != null && !fs.exists(existing)) existing = existing.getParent();
      if (!fs.mkdirs(dir)) throw new IOException("could not create partition log directory " + dir);
      if (config.durability() == Durability.SYNC) {
        // persist the new directory entries, from the deepest one up to the directory that existed
        for (Path p = dir.getParent(); p != null; p = p.getParent()) {
          LogSegment.syncDirectory(fs, p);
          if (p.equals(existing)) break;
        }
      }
    }
    if (fencing) epoch = claimOwnership();
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
      } else if (name.endsWith(LogSegment.INDEX_SUFFIX + ".tmp")) {
        fs.delete(st.getPath(), false);
      } else if (!name.endsWith(OWNER_SUFFIX)) {
        LOG.warn("Ignoring unexpected file {} in partition log directory {}", name, dir);
      }
    }
    for (SegmentFile index : indexes) {
      SegmentFile log = logs.get(index.baseOffset());
      if (log == null || log.epoch() != index.epoch()) {
        LOG.info("Deleting {}: its segment is gone", index.status().getPath());
        fs.delete(index.status().getPath(), false);
      }
    }

    List<LogSegment> opened = new ArrayList<>();
    try {
      openSegments(logs, opened);
    } catch (IOException | RuntimeException e) {
      for (LogSegment s : opened) {
        s.abortWriter();
        s.closeInput();
      }
      throw e;
    }
    long maxTs = -1;
    for (LogSegment s : opened) maxTs = Math.max(maxTs, s.maxAppendTimestampMs());
    lastAppendTimestampMs = maxTs;
    segments = List.copyOf(opened);
    endOffset = active().baseOffset();
    LOG.info("Opened partition log {}: offsets [{}, {}), {} segments, {} bytes, in {} ms", dir, startOffset(),
        endOffset, segments.size(), sizeBytes(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs));
  }

  /** A segment or index file found in the directory. */
  private record SegmentFile(long baseOffset, long epoch, FileStatus status) {}

  /**
   * Opens the segment files (ascending base offsets) into {@code opened}, ending with a new active
   * one. An empty file that is not the newest is dropped: no roll leaves one (a segment is rolled
   * only once it holds records), only a fenced owner that created a segment after the takeover.
   */
  private void openSegments(TreeMap<Long, SegmentFile> logs, List<LogSegment> opened) throws IOException {
    List<SegmentFile> files = new ArrayList<>();
    List<Long> lengths = new ArrayList<>();
    for (SegmentFile f : logs.values()) {
      Path path = f.status().getPath();
      files.add(f);
      lengths.add(recoverLeaseIfOpen(path) ? fs.getFileStatus(path).getLen() : f.status().getLen());
    }
    for (int i = files.size() - 2; i >= 0; i--) {
      if (lengths.get(i) == 0) {
        LOG.warn("Deleting {}: an empty segment that is not the newest one (left by a fenced owner)",
            files.get(i).status().getPath());
        fs.delete(files.get(i).status().getPath(), false);
        files.remove(i);
        lengths.remove(i);
      }
    }
    for (int i = 0; i < files.size(); i++) {
      SegmentFile f = files.get(i);
      long fileBytes = lengths.get(i);
      if (i < files.size() - 1) {
        opened.add(LogSegment.openSealed(fs, dir, f.baseOffset(), f.epoch(), fileBytes, files.get(i + 1).baseOffset(),
            config, cache));
        continue;
      }
      LogSegment last = LogSegment.recover(fs, dir, f.baseOffset(), f.epoch(), fileBytes, config, cache);
      if (last.hasRecords()) {
        last.seal();
        opened.add(last);
        opened.add(createSegment(last.nextOffset()));
      } else {
        last.deleteFiles();
        opened.add(createSegment(f.baseOffset()));
      }
    }
    if (opened.isEmpty()) {
      opened.add(createSegment(0));
    }
  }

  /** A lower-epoch segment file with the same base offset as another: deleted if empty, else kept aside. */
  private void dropOlderDuplicate(SegmentFile older) throws IOException {
    Path path = older.status().getPath();
    long len = recoverLeaseIfOpen(path) ? fs.getFileStatus(path).getLen() : older.status().getLen();
    if (len == 0) {
      LOG.info("Deleting {}: an empty segment replaced by a newer owner's", path);
      fs.delete(path, false);
    } else {
      LOG.error("Ignoring {}: another segment with the same base offset and a newer owner epoch exists", path);
    }
  }

  private static SegmentFile parseSegmentName(FileStatus st, String suffix) throws IOException {
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

  private static boolean isDigits(String s) {
    return !s.isEmpty() && s.chars().allMatch(c -> c >= '0' && c <= '9');
  }

  static final String OWNER_SUFFIX = ".owner";

  static Path ownerMarker(Path dir, long epoch) {
    return new Path(dir, String.format("%020d%s", epoch, OWNER_SUFFIX));
  }

  /**
   * Claims the partition: creates the empty marker of the next owner epoch with {@code
   * overwrite=false} (empty, so it needs no DataNode), trying higher epochs if another server
   * claims concurrently, then deletes the markers of older epochs.
   */
  private long claimOwnership() throws IOException {
    long max = 0;
    for (FileStatus st : fs.listStatus(dir)) {
      String name = st.getPath().getName();
      if (name.endsWith(OWNER_SUFFIX)) {
        max = Math.max(max, parseOwnerEpoch(name));
      } else if (name.endsWith(LogSegment.LOG_SUFFIX) || name.endsWith(LogSegment.INDEX_SUFFIX)) {
        max = Math.max(max, parseSegmentName(st, name.endsWith(LogSegment.LOG_SUFFIX)
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
        if (name.endsWith(OWNER_SUFFIX) && parseOwnerEpoch(name) < mine) fs.delete(st.getPath(), false);
      }
      LOG.info("Claimed {} with owner epoch {}", dir, mine);
      return mine;
    }
    throw new IOException("could not claim " + dir + ": 10 owner epochs up to " + max + " were claimed concurrently");
  }

  private static long parseOwnerEpoch(String name) throws IOException {
    String digits = name.substring(0, name.length() - OWNER_SUFFIX.length());
    if (digits.length() != 20 || !isDigits(digits)) {
      throw new IOException("unexpected owner marker " + name + ": expected 20 digits + " + OWNER_SUFFIX);
    }
    return Long.parseLong(digits);
  }

  /**
   * Throws (and fences this log for good) if a newer owner claimed the partition. No-op without
   * fencing. Append-lock holder or the opening thread.
   */
  private void checkOwnership() throws IOException {
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

  private void ensureNotFenced() throws PartitionFencedException {
    String why = fencedBy;
    if (why != null) throw new PartitionFencedException(why);
  }

  /** Whether another server took the partition over (every append and read now fails). */
  public boolean isFenced() {
    return fencedBy != null;
  }

  /**
   * Creates a segment under this owner's epoch and checks the ownership after creating it, before
   * anything is appended (see "Single writer"). A fenced owner deletes the file it just created
   * (nobody else uses its epoch's names).
   */
  private LogSegment createSegment(long baseOffset) throws IOException {
    LogSegment s = LogSegment.create(fs, dir, baseOffset, epoch, config, cache);
    try {
      checkOwnership();
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

  /**
   * On file systems with leases, a file a crashed writer left open reports a stale length until
   * its lease is recovered. Waits up to {@link LogConfig#leaseRecoveryTimeoutMs()}.
   *
   * @return whether the lease had to be recovered (the length must then be read again)
   */
  private boolean recoverLeaseIfOpen(Path path) throws IOException {
    if (!(fs instanceof LeaseRecoverable leases) || leases.isFileClosed(path)) return false;
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
    return true;
  }

  private LogSegment active() {
    List<LogSegment> s = segments;
    return s.get(s.size() - 1);
  }

  /**
   * Appends blocks at consecutive offsets starting at {@link #endOffset()} and returns after they
   * are durable per the configured {@link Durability}. One thread at a time per partition is
   * expected; concurrent calls are serialized.
   *
   * @param appendTimestampMs stored in every block as its append time
   * @return the offset assigned to the first message of the first block
   * @throws IllegalArgumentException if the list is empty or a block has no messages, a null
   *     payload or a payload above {@link LogConfig#maxBlockBytes()}; nothing is written
   * @throws PartitionFencedException if another server took the partition over; nothing was
   *     appended and the log stays unwritable
   * @throws IOException if writing failed; nothing was appended and the log stays writable
   */
  public long append(List<BlockToAppend> blocks, long appendTimestampMs) throws IOException {
    Objects.requireNonNull(blocks, "blocks");
    if (blocks.isEmpty()) throw new IllegalArgumentException("no blocks to append");
    long batchBytes = 0;
    for (int i = 0; i < blocks.size(); i++) {
      BlockToAppend b = blocks.get(i);
      if (b == null || b.payload() == null) {
        throw new IllegalArgumentException("block " + i + " or its payload is null");
      }
      if (b.messageCount() < 1) {
        throw new IllegalArgumentException("block " + i + " has messageCount=" + b.messageCount() + "; must be >= 1");
      }
      if (b.payload().length > config.maxBlockBytes()) {
        throw new IllegalArgumentException("block " + i + " payload is " + b.payload().length
            + " bytes; maxBlockBytes=" + config.maxBlockBytes());
      }
      batchBytes += RecordFormat.recordLength(b.payload().length);
    }
    if (batchBytes > Integer.MAX_VALUE - 16) {
      throw new IllegalArgumentException("blocks total " + batchBytes + " bytes; one append holds at most "
          + (Integer.MAX_VALUE - 16));
    }

    appendLock.lock();
    try {
      ensureOpen();
      ensureNotFenced();
      long first = endOffset;
      byte[] batch = new byte[(int) batchBytes];
      long[] offsets = new long[blocks.size()];
      int[] positions = new int[blocks.size()];
      long next = first;
      int pos = 0;
      for (int i = 0; i < blocks.size(); i++) {
        offsets[i] = next;
        positions[i] = pos;
        pos += RecordFormat.encode(batch, pos, next, appendTimestampMs, blocks.get(i));
        next = Math.addExact(next, blocks.get(i).messageCount());
      }
      long nowMs = clock.millis();
      LogSegment seg = segmentForAppend(batch.length, nowMs);
      try {
        seg.append(batch, offsets, positions, next, appendTimestampMs, nowMs);
      } catch (IOException | RuntimeException | Error e) {
        throw appendFailed(seg, first, e);
      }
      lastAppendTimestampMs = Math.max(lastAppendTimestampMs, appendTimestampMs);
      endOffset = next;
      return first;
    } finally {
      appendLock.unlock();
    }
  }

  /** The active segment, after rolling it by size or age or replacing it after a failure. */
  private LogSegment segmentForAppend(int batchBytes, long nowMs) throws IOException {
    LogSegment a = active();
    if (!a.isWritable()) {
      LOG.info("Starting a new segment of {} at offset {} (the last append or roll failed)", dir, endOffset);
      return startNewActiveSegment();
    }
    if (a.hasRecords()) {
      if (a.validBytes() + batchBytes > config.segmentBytes()) {
        LOG.debug("Rolling {} at offset {}: {} + {} bytes > segmentBytes={}", dir, endOffset, a.validBytes(),
            batchBytes, config.segmentBytes());
        return startNewActiveSegment();
      }
      if (nowMs - a.firstAppendClockMs() >= config.segmentMs()) {
        LOG.debug("Rolling {} at offset {}: first append {} ms ago >= segmentMs={}", dir, endOffset,
            nowMs - a.firstAppendClockMs(), config.segmentMs());
        return startNewActiveSegment();
      }
    }
    return a;
  }

  /**
   * Seals the active segment and starts a new, empty one at {@link #endOffset()}; an active segment
   * without records is replaced by a fresh file instead. If creating the new file fails, the old
   * segment stays last without a writer and the next append calls this again. Append lock held.
   */
  private LogSegment startNewActiveSegment() throws IOException {
    checkOwnership();
    LogSegment old = active();
    List<LogSegment> list = new ArrayList<>(segments);
    if (old.hasRecords()) {
      old.seal();
      LogSegment fresh = createSegment(endOffset);
      list.add(fresh);
      segments = List.copyOf(list);
      return fresh;
    }
    old.abortWriter();
    if (old.epoch() != epoch) old.deleteFiles(); // else create() below replaces the file
    LogSegment fresh = createSegment(old.baseOffset());
    list.set(list.size() - 1, fresh);
    segmentsLock.writeLock().lock();
    try {
      segments = List.copyOf(list);
      old.closeInput();
    } finally {
      segmentsLock.writeLock().unlock();
    }
    return fresh;
  }

  /** Leaves the log writable after a failed append and returns what to throw. Append lock held. */
  private IOException appendFailed(LogSegment seg, long offset, Throwable failure) {
    seg.abortWriter();
    if (failure instanceof PartitionFencedException fenced) return fenced;
    if (fencing && failure instanceof IOException) {
      try {
        checkOwnership();
      } catch (PartitionFencedException fenced) {
        fenced.initCause(failure);
        return fenced;
      } catch (IOException e) {
        failure.addSuppressed(e); // cannot tell: the roll below checks again
      }
    }
    LOG.warn("Append to {} at offset {} failed; the partial write is ignored and a new segment starts at {}",
        seg.path(), offset, offset, failure);
    try {
      startNewActiveSegment();
    } catch (PartitionFencedException fenced) {
      fenced.initCause(failure);
      return fenced;
    } catch (IOException | RuntimeException | FSError e) {
      failure.addSuppressed(e);
      LOG.warn("Could not start a new segment of {} at offset {}; the next append tries again", dir, offset, e);
    }
    if (failure instanceof IOException io) return io;
    if (failure instanceof FSError) return new IOException("disk error appending to " + seg.path(), failure);
    if (failure instanceof RuntimeException re) throw re;
    throw (Error) failure;
  }

  /**
   * Reads the blocks from the one that contains {@code offset} onwards (so the first block may start
   * before {@code offset}). Stops once the returned blocks hold at least {@code maxMessages}
   * messages, or before a block whose payload would make the returned payload bytes exceed {@code
   * maxBytes}; but the first block is always returned, however large. Safe to call concurrently
   * with everything else.
   *
   * @return empty when {@code offset == endOffset()}
   * @throws OffsetOutOfRangeException if {@code offset < startOffset()} or {@code offset > endOffset()}
   * @throws PartitionFencedException if another server took the partition over
   * @throws CorruptRecordException if the first block to return cannot be decoded; when a later one
   *     cannot, the blocks before it are returned and the next read reports it
   */
  public List<StoredBlock> read(long offset, int maxMessages, int maxBytes)
      throws OffsetOutOfRangeException, IOException {
    if (maxMessages < 1) throw new IllegalArgumentException("maxMessages=" + maxMessages + " must be >= 1");
    if (maxBytes < 0) throw new IllegalArgumentException("maxBytes=" + maxBytes + " must be >= 0");
    segmentsLock.readLock().lock();
    try {
      ensureOpen();
      ensureNotFenced();
      long end = endOffset; // read before the segments: they are published before the end offset
      List<LogSegment> segs = segments;
      long start = segs.get(0).baseOffset();
      if (offset < start || offset > end) {
        throw new OffsetOutOfRangeException(dir.toString(), offset, start, end);
      }
      List<StoredBlock> result = new ArrayList<>();
      long target = offset;
      long messages = 0;
      long bytes = 0;
      for (int i = floorSegment(segs, offset); i < segs.size() && target < end; i++) {
        LogSegment seg = segs.get(i);
        if (target >= seg.nextOffset()) continue;
        if (target < seg.baseOffset()) {
          LogSegment prev = segs.get(i - 1);
          if (!result.isEmpty()) break;
          throw new CorruptRecordException("offsets [" + prev.nextOffset() + ", " + seg.baseOffset() + ") of " + dir
              + " are lost: " + (prev.lostTail() != null ? prev.lostTail() : "no segment holds them"));
        }
        LogSegment.RecordCursor c = seg.cursor(seg.index().lookup(target), seg.validBytes());
        try {
          RecordFormat.Header h;
          while ((h = c.next()) != null) {
            if (h.startOffset() >= end) return result;
            if (h.nextOffset() <= target) {
              c.advance(h);
              continue;
            }
            if (h.startOffset() > target) {
              throw new CorruptRecordException("expected the record holding offset " + target + ", found one starting"
                  + " at " + h.startOffset());
            }
            if (!result.isEmpty() && bytes + h.payloadLength() > maxBytes) return result;
            result.add(c.block(h));
            messages += h.messageCount();
            bytes += h.payloadLength();
            target = h.nextOffset();
            c.advance(h);
            if (messages >= maxMessages) return result;
          }
        } catch (CorruptRecordException e) {
          if (!result.isEmpty()) return result;
          CorruptRecordException wrapped = new CorruptRecordException("cannot read offset " + target + " of " + dir
              + ": corrupt record at position " + c.position() + " of " + seg.path() + ": " + e.getMessage());
          wrapped.initCause(e);
          LOG.error("{}", wrapped.getMessage());
          throw wrapped;
        }
      }
      return result;
    } finally {
      segmentsLock.readLock().unlock();
    }
  }

  /** Index of the segment with the greatest base offset {@code <= offset} (0 if none). */
  private static int floorSegment(List<LogSegment> segs, long offset) {
    int lo = 0;
    int hi = segs.size() - 1;
    while (lo < hi) {
      int mid = (lo + hi + 1) >>> 1;
      if (segs.get(mid).baseOffset() <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /**
   * Deletes the oldest segments whose newest append timestamp is older than {@code now -
   * retentionMs} by the log's clock, stopping at the first one that is not (so offsets stay
   * contiguous). The active segment is never deleted while it is written to; but when every
   * segment has expired, the active one is sealed and a new empty one started at {@link
   * #endOffset()} so the old one can go too: an idle partition does not keep its last segment
   * forever, and the end offset survives a restart through the new segment's file name. {@link
   * #startOffset()} then equals {@link #endOffset()}. Readers of deleted offsets get {@link
   * OffsetOutOfRangeException}.
   *
   * @return the number of segments deleted
   * @throws IOException if deleting a file failed (after trying all; the segments are gone from
   *     the log either way, and leftover files are deleted by a later pass after a restart)
   */
  public int deleteExpiredSegments(long retentionMs) throws IOException {
    if (retentionMs < 0) throw new IllegalArgumentException("retentionMs=" + retentionMs + " must be >= 0");
    appendLock.lock();
    try {
      ensureOpen();
      if (fencedBy != null) return 0; // the new owner applies retention
      long cutoffMs = clock.millis() - retentionMs;
      List<LogSegment> segs = segments;
      int expired = 0;
      while (expired < segs.size() - 1 && segs.get(expired).maxAppendTimestampMs() < cutoffMs) expired++;
      LogSegment a = active();
      if (expired == segs.size() - 1 && a.hasRecords() && a.maxAppendTimestampMs() < cutoffMs) {
        try {
          startNewActiveSegment();
          segs = segments;
          expired++;
        } catch (PartitionFencedException e) {
          return 0;
        } catch (IOException | RuntimeException | FSError e) {
          LOG.warn("Could not roll the expired active segment of {}; it is kept until the next pass", dir, e);
        }
      }
      if (expired == 0) return 0;
      List<LogSegment> doomed = segs.subList(0, expired);
      segmentsLock.writeLock().lock();
      try {
        segments = List.copyOf(segs.subList(expired, segs.size()));
        for (LogSegment s : doomed) s.closeInput();
      } finally {
        segmentsLock.writeLock().unlock();
      }
      IOException failure = null;
      for (LogSegment s : doomed) {
        try {
          s.deleteFiles();
        } catch (IOException e) {
          if (failure == null) failure = e;
          else failure.addSuppressed(e);
        }
      }
      LOG.info("Retention deleted {} segments of {} older than {} ms; offsets now start at {}", expired, dir,
          retentionMs, startOffset());
      if (failure != null) throw failure;
      return expired;
    } finally {
      appendLock.unlock();
    }
  }

  /** hsyncs the active segment whatever the {@link Durability}, e.g. before a planned shutdown. */
  public void sync() throws IOException {
    appendLock.lock();
    try {
      ensureOpen();
      ensureNotFenced();
      active().sync();
    } finally {
      appendLock.unlock();
    }
  }

  /** First readable offset; equals {@link #endOffset()} when the log is empty. */
  public long startOffset() {
    return segments.get(0).baseOffset();
  }

  /** The offset the next appended message gets. */
  public long endOffset() {
    return endOffset;
  }

  /** Bytes of valid records in all segments. */
  public long sizeBytes() {
    long total = 0;
    for (LogSegment s : segments) total += s.validBytes();
    return total;
  }

  /** Segments, the active (possibly empty) one included. */
  public int segmentCount() {
    return segments.size();
  }

  /** Newest append timestamp of any record in the log, -1 if it never held one. */
  public long lastAppendTimestampMs() {
    return lastAppendTimestampMs;
  }

  /** The current segments, oldest first; the last is the active one. For tests and diagnostics. */
  List<LogSegment> segments() {
    return segments;
  }

  public Path dir() {
    return dir;
  }

  public boolean isClosed() {
    return closed;
  }

  /** Seals the active segment (persisting its index) and releases all streams. Idempotent. */
  @Override
  public void close() {
    appendLock.lock();
    try {
      segmentsLock.writeLock().lock();
      try {
        if (closed) return;
        closed = true;
        if (fencedBy == null) {
          active().seal();
        } else {
          active().abortWriter(); // a fenced owner writes no file, not even an index
        }
        for (LogSegment s : segments) s.closeInput();
      } finally {
        segmentsLock.writeLock().unlock();
      }
    } finally {
      appendLock.unlock();
    }
  }

  /** Closes the log and deletes its directory with every segment (topic deletion). */
  public void deleteAll() throws IOException {
    appendLock.lock();
    try {
      segmentsLock.writeLock().lock();
      try {
        closed = true;
        for (LogSegment s : segments) {
          s.abortWriter();
          s.closeInput();
        }
      } finally {
        segmentsLock.writeLock().unlock();
      }
      if (fs.exists(dir) && !fs.delete(dir, true)) {
        throw new IOException("could not delete partition log directory " + dir);
      }
    } finally {
      appendLock.unlock();
    }
  }

  private void ensureOpen() throws IOException {
    if (closed) throw new IOException("partition log " + dir + " is closed");
  }

  @Override
  public String toString() {
    return "PartitionLog[" + dir + ", offsets [" + startOffset() + ", " + endOffset + "), " + segments.size()
        + " segments]";
  }
}
