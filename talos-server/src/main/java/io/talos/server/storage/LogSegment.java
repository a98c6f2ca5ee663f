package io.talos.server.storage;

import java.io.EOFException;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FSError;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LeaseRecoverable;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.hdfs.BlockMissingException;
import org.apache.hadoop.hdfs.client.HdfsDataInputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One segment of a partition log: the file {@code <20-digit zero-padded baseOffset>.log} (or
 * {@code <baseOffset>-<20-digit owner epoch>.log} when written under an owner epoch, see {@link
 * PartitionOwnership}), holding {@link RecordFormat records} for offsets {@code [baseOffset, nextOffset)}
 * back to back from position 0, and its sparse {@link OffsetIndex} (same name with {@code .index},
 * once sealed).
 *
 * <p>Only the first {@link #validBytes()} bytes of the file are part of the log. The file may be
 * longer after a failed append or a crash (a torn tail): those bytes are never read, and since
 * files are never appended to again once a write failed (the log starts a new segment instead),
 * they stay until the segment is deleted. Whoever opens the segment learns {@code validBytes} from
 * the sealed index or by scanning (see {@link #openSealed} and {@link #recover}).
 *
 * <p>Life cycle: the active segment has a writer ({@link #isWritable()}); {@link #seal} closes
 * it and persists the index; a segment whose write failed is {@link #abortWriter() aborted}
 * instead and is sealed or replaced by the log. Files are never appended to after they were
 * closed, so the layout also works where {@code FileSystem.append} is unavailable.
 *
 * <p>Thread-safety: the writer methods ({@link #append}, {@link #write}, {@link #publish}, {@link
 * #seal}, {@link #sealOn}, {@link #abortWriter}, {@link #deleteFiles}) are called by one thread at a
 * time (the log's append lock); {@link #sealOn} hands the closing of the writer and the index
 * writes to another thread, which touches nothing a reader or a later writer call uses. {@link
 * #flush} is the exception: the log's flusher calls it without the lock, while
 * the writer may {@link #write} the next batches into the same stream (the stream allows it: a
 * flush makes durable at least what was written before it started), never concurrently with
 * {@link #seal} or {@link #abortWriter} (the log drains its flushes first). Readers call
 * {@link #cursor}, {@link #index()} and the getters concurrently with them: the writer publishes
 * index entries, then {@code nextOffset}, then {@code validBytes} (volatile) only after the bytes
 * are flushed, so a reader that sees a size can read every record below it. Positioned reads
 * share one lazily opened input stream ({@code PositionedReadable} reads are thread-safe); it is
 * reopened when it hits end-of-file below {@code validBytes}, which happens on hdfs where a stream
 * only sees the length the file had when it was opened. Reads are first offered to the server's
 * {@link TailCache}, which holds the newest appended batches.
 *
 * <p>On file systems with leases (hdfs), a writer dropped after a failure may leave the file open
 * with its last block not finalized (a DataNode that restarted holds it as "waiting to be
 * recovered", which no reader can read); the next read that misses the cache recovers the lease
 * first and fails with a retriable {@link IOException} until the recovery has finished.
 */
final class LogSegment {
  private static final Logger LOG = LoggerFactory.getLogger(LogSegment.class);

  static final String LOG_SUFFIX = ".log";
  static final String INDEX_SUFFIX = ".index";
  static final int READ_CHUNK_BYTES = 64 * 1024;

  private final FileSystem fs;
  private final Path logPath;
  private final Path indexPath;
  private final long baseOffset;
  private final long epoch;
  private final TailCache cache;
  private final OffsetIndex index;
  /**
   * The last {@value #RECENT_BATCHES} published batches (slot = batch number modulo the length),
   * each immutable: where every record of the tail starts, which the sparse index knows only every
   * {@code indexIntervalBytes}. A consumer at the tail asks for the offset after its last read,
   * the first record of one of these; from the index it read (and allocated a buffer for) up to an
   * interval of records before it only to skip them. Written by the publishing thread, read by any
   * reader; published records never change (see the class comment), so a slot is valid for good.
   */
  private final java.util.concurrent.atomic.AtomicReferenceArray<PublishedBatch> recent =
      new java.util.concurrent.atomic.AtomicReferenceArray<>(RECENT_BATCHES);
  private long publishedBatches;
  private final Durability durability;
  /** Why records between nextOffset and the next segment's base could not be read; else null. */
  private final String lostTail;

  private volatile long validBytes;
  private volatile long nextOffset;
  private volatile long maxAppendTimestampMs;

  // writer state: append-lock holder only, except that flush() reads out and writtenBytes
  // without the lock (see the class comment)
  private volatile FSDataOutputStream out;
  /** Bytes handed to the writer: validBytes plus the written batches not yet flushed and published. */
  private volatile long writtenBytes;
  private long firstAppendClockMs = -1;
  private boolean sealed;
  /** Set by {@link #sealOn}: completes once the writer is closed and the index files are written. */
  private volatile CompletableFuture<Void> sealing;
  /** Read-only views only, see {@link #isComplete()}; written by the view's refresh. */
  private volatile boolean complete;

  private final ReentrantReadWriteLock inputLock = new ReentrantReadWriteLock();
  private FSDataInputStream in;
  private boolean inputClosed;
  /** Set when the writer was dropped on a file system with leases; cleared once the file is closed. */
  private volatile boolean leaseRecoveryNeeded;

  /** Records per time-index entry: one entry per this many bytes of segment. */
  static final int TIME_INDEX_INTERVAL_BYTES = 16 * 1024;
  private final Path timeIndexPath;
  /** Built while appending (segments this server created) or on the first lookup; see {@link TimeIndex}. */
  private volatile TimeIndex timeIndex;
  /** One scan extends the time index at a time. */
  private final Object timeIndexScan = new Object();
  /** Opened by {@link #openReadOnly}: never writes a file, not even a time index. */
  private boolean readOnlyView;

  private LogSegment(FileSystem fs, Path dir, long baseOffset, long epoch, TailCache cache, OffsetIndex index,
      Durability durability, long validBytes, long nextOffset, long maxAppendTimestampMs, String lostTail) {
    this.fs = fs;
    this.logPath = logPath(dir, baseOffset, epoch);
    this.indexPath = indexPath(dir, baseOffset, epoch);
    this.timeIndexPath = timeIndexPath(dir, baseOffset, epoch);
    this.baseOffset = baseOffset;
    this.epoch = epoch;
    this.cache = cache;
    this.index = index;
    this.durability = durability;
    this.validBytes = validBytes;
    this.writtenBytes = validBytes;
    this.nextOffset = nextOffset;
    this.maxAppendTimestampMs = maxAppendTimestampMs;
    this.lostTail = lostTail;
  }

  /** {@code <20-digit baseOffset><suffix>} for epoch 0, else {@code <baseOffset>-<20-digit epoch><suffix>}. */
  static String fileName(long baseOffset, long epoch, String suffix) {
    return epoch == 0 ? String.format("%020d%s", baseOffset, suffix)
        : String.format("%020d-%020d%s", baseOffset, epoch, suffix);
  }

  static String fileName(long baseOffset, String suffix) {
    return fileName(baseOffset, 0, suffix);
  }

  static Path logPath(Path dir, long baseOffset) {
    return logPath(dir, baseOffset, 0);
  }

  static Path indexPath(Path dir, long baseOffset) {
    return indexPath(dir, baseOffset, 0);
  }

  static Path timeIndexPath(Path dir, long baseOffset, long epoch) {
    return new Path(dir, fileName(baseOffset, epoch, TimeIndex.SUFFIX));
  }

  static Path logPath(Path dir, long baseOffset, long epoch) {
    return new Path(dir, fileName(baseOffset, epoch, LOG_SUFFIX));
  }

  static Path indexPath(Path dir, long baseOffset, long epoch) {
    return new Path(dir, fileName(baseOffset, epoch, INDEX_SUFFIX));
  }

  /**
   * Creates an empty active segment, replacing any file of the same name: the log only creates a
   * segment at its end offset, where no acknowledged record can be, so such a file is the remains
   * of a failed creation or an empty segment being replaced. With {@link Durability#SYNC} on the
   * local file system the directory is fsynced too, so the new file survives a machine crash.
   */
  static LogSegment create(FileSystem fs, Path dir, long baseOffset, long epoch, LogConfig config, TailCache cache)
      throws IOException {
    Path index = indexPath(dir, baseOffset, epoch);
    deleteFile(fs, index); // a stale index of a replaced segment must not describe the new file
    deleteFile(fs, timeIndexPath(dir, baseOffset, epoch));
    Path log = logPath(dir, baseOffset, epoch);
    FSDataOutputStream out = fs.create(log, true);
    if (fs instanceof OwnerOnlyLocalFileSystem local) {
      local.pinExtentTree(log, config.segmentBytes() + config.maxBlockBytes());
    }
    try {
      if (config.durability() == Durability.SYNC) syncDirectory(fs, dir);
    } catch (IOException e) {
      closeQuietly(out);
      throw e;
    }
    LogSegment s = new LogSegment(fs, dir, baseOffset, epoch, cache,
        new OffsetIndex(baseOffset, config.indexIntervalBytes()), config.durability(), 0, baseOffset, -1, null);
    s.out = out;
    s.timeIndex = new TimeIndex(baseOffset, TIME_INDEX_INTERVAL_BYTES);
    return s;
  }

  /**
   * Opens a segment that is not the newest one. Its index file is trusted when it is valid, its
   * {@code validBytes} fit in the file and it ends exactly at {@code nextBaseOffset}; otherwise the
   * file is scanned up to {@code nextBaseOffset} and the index rewritten. A segment whose records
   * stop before {@code nextBaseOffset} lost acknowledged data: that is logged as an error and reads
   * of the missing offsets fail with {@link CorruptRecordException}.
   */
  static LogSegment openSealed(FileSystem fs, Path dir, long baseOffset, long epoch, long fileBytes,
      long nextBaseOffset, LogConfig config, TailCache cache) throws IOException {
    Path logPath = logPath(dir, baseOffset, epoch);
    OffsetIndex.Persisted p = OffsetIndex.read(fs, indexPath(dir, baseOffset, epoch), baseOffset,
        config.indexIntervalBytes());
    if (p != null && p.seal().validBytes() <= fileBytes && p.seal().nextOffset() == nextBaseOffset) {
      LogSegment s = new LogSegment(fs, dir, baseOffset, epoch, cache, p.index(), config.durability(),
          p.seal().validBytes(), p.seal().nextOffset(), p.seal().maxAppendTimestampMs(), null);
      s.sealed = true;
      return s;
    }
    if (p != null) {
      LOG.warn("Index of {} does not match the segment (validBytes {} of a {}-byte file, nextOffset {} but the next"
          + " segment starts at {}); scanning it", logPath, p.seal().validBytes(), fileBytes,
          p.seal().nextOffset(), nextBaseOffset);
    }
    Scan scan = scan(fs, dir, baseOffset, epoch, fileBytes, nextBaseOffset, config);
    String lost = null;
    if (scan.nextOffset < nextBaseOffset) {
      lost = "records stop at offset " + scan.nextOffset + " (position " + scan.validBytes + " of "
          + logPath + ": " + scan.stopReason + ") but the next segment starts at " + nextBaseOffset;
      LOG.error("DATA LOSS in sealed segment {}: {}; offsets [{}, {}) cannot be read", logPath,
          lost, scan.nextOffset, nextBaseOffset);
    }
    LogSegment s = new LogSegment(fs, dir, baseOffset, epoch, cache, scan.index, config.durability(),
        scan.validBytes, scan.nextOffset, scan.maxAppendTimestampMs, lost);
    s.sealed = true;
    if (lost == null) s.writeIndexQuietly();
    return s;
  }

  /**
   * Opens the newest segment after a restart or crash by scanning all of it: the records are kept
   * up to the first one that is incomplete, fails its CRC or does not continue the offsets; the
   * bytes from there on are a torn tail and are ignored. The result has no writer: the log seals
   * it (or replaces it when it holds no record) and starts a new segment, since files are never
   * reopened for append.
   */
  static LogSegment recover(FileSystem fs, Path dir, long baseOffset, long epoch, long fileBytes, LogConfig config,
      TailCache cache) throws IOException {
    Scan scan = scan(fs, dir, baseOffset, epoch, fileBytes, Long.MAX_VALUE, config);
    Path path = logPath(dir, baseOffset, epoch);
    if (scan.validBytes < fileBytes) {
      if (scan.handedOutUpTo > scan.nextOffset) {
        LOG.error("DATA LOSS in {}: the record at position {} (offset {}) is corrupt ({}) but valid records follow"
            + " it, up to offset {}: those offsets were handed out", path, scan.validBytes, scan.nextOffset,
            scan.stopReason, scan.handedOutUpTo);
      } else {
        LOG.warn("Cutting back the torn tail of {}: {} of {} bytes hold whole records up to offset {}; ignoring {} bytes"
            + " after them ({})", path, scan.validBytes, fileBytes, scan.nextOffset, fileBytes - scan.validBytes,
            scan.stopReason);
      }
    }
    LogSegment segment = new LogSegment(fs, dir, baseOffset, epoch, cache, scan.index, config.durability(),
        scan.validBytes, scan.nextOffset, scan.maxAppendTimestampMs, null);
    if (scan.handedOutUpTo > scan.nextOffset) {
      segment.damage = new Damage(scan.nextOffset, scan.validBytes, scan.stopReason, scan.handedOutUpTo);
    }
    return segment;
  }

  /**
   * Opens a segment for a read-only view ({@link PartitionReader}): never writes, renames or
   * deletes a file and never touches a lease. A valid index whose {@code validBytes} fit in the
   * listed length is trusted (the segment was sealed and never grows); otherwise the segment is
   * scanned from position 0 up to the length readers can see now ({@link #reopenVisibleLength}),
   * stopping at the first record that is incomplete or invalid or would reach {@code limitOffset},
   * and can be {@link #extendVisible extended} later. The result has no writer and never seals.
   */
  static LogSegment openReadOnly(FileSystem fs, Path dir, long baseOffset, long epoch, long listedBytes,
      long limitOffset, LogConfig config) throws IOException {
    OffsetIndex.Persisted p = OffsetIndex.read(fs, indexPath(dir, baseOffset, epoch), baseOffset,
        config.indexIntervalBytes());
    if (p != null && p.seal().validBytes() <= listedBytes && p.seal().nextOffset() <= limitOffset) {
      LogSegment s = new LogSegment(fs, dir, baseOffset, epoch, TailCache.DISABLED, p.index(), config.durability(),
          p.seal().validBytes(), p.seal().nextOffset(), p.seal().maxAppendTimestampMs(), null);
      s.sealed = true;
      s.complete = true;
      s.readOnlyView = true;
      return s;
    }
    LogSegment s = new LogSegment(fs, dir, baseOffset, epoch, TailCache.DISABLED,
        new OffsetIndex(baseOffset, config.indexIntervalBytes()), config.durability(), 0, baseOffset, -1, null);
    s.sealed = true; // nothing to seal: never writes an index
    s.readOnlyView = true;
    try {
      s.extendVisible(s.reopenVisibleLength(), limitOffset);
    } catch (IOException | RuntimeException e) {
      s.closeInput();
      throw e;
    }
    return s;
  }

  /**
   * Read-only views: whether the segment's records are all known (it had a valid index, or was
   * scanned up to the next segment's base offset); else it may still grow.
   */
  boolean isComplete() {
    return complete;
  }

  /**
   * Read-only views: reopens the shared input stream and returns the length it sees. On hdfs that
   * is the visible length ({@link HdfsDataInputStream#getVisibleLength()}: every hflushed byte of
   * a file still being written, which the NameNode's listing does not report), elsewhere the
   * file's length. The new stream replaces the shared one, so reads see that length too.
   */
  long reopenVisibleLength() throws IOException {
    FSDataInputStream fresh = fs.open(logPath);
    long len;
    try {
      len = fresh instanceof HdfsDataInputStream hdfs ? hdfs.getVisibleLength() : fs.getFileStatus(logPath).getLen();
    } catch (IOException | RuntimeException e) {
      closeQuietly(fresh);
      throw e;
    }
    inputLock.writeLock().lock();
    try {
      if (inputClosed) {
        closeQuietly(fresh);
        throw new IOException("segment " + logPath + " is closed");
      }
      if (in != null) closeQuietly(in);
      in = fresh;
    } finally {
      inputLock.writeLock().unlock();
    }
    return len;
  }

  /**
   * Read-only views: scans the records after {@link #validBytes()} up to {@code fileBytes} and
   * publishes them to readers (index entries, then {@code nextOffset}, then {@code validBytes}, as
   * an append does). Stops quietly at a record that is incomplete or invalid (a writer may be in
   * the middle of it) or that would reach past {@code limitOffset}; reaching {@code limitOffset}
   * (the next segment's base offset) makes the segment {@link #isComplete() complete}. One caller at
   * a time (the view's refresh).
   *
   * @return whether records were added
   */
  boolean extendVisible(long fileBytes, long limitOffset) throws IOException {
    long start = validBytes;
    long next = nextOffset;
    long maxTs = maxAppendTimestampMs;
    if (next >= limitOffset) complete = true;
    if (complete || fileBytes <= start) return false;
    RecordCursor c = cursor(start, fileBytes);
    while (next < limitOffset && c.position() < fileBytes) {
      RecordFormat.Header h;
      try {
        h = c.next();
        if (h.startOffset() != next || h.nextOffset() > limitOffset) break;
        c.verify(h);
      } catch (CorruptRecordException | EOFException e) {
        break; // not (yet) a whole record: the writer may still be writing it
      }
      index.maybeAppend(h.startOffset(), c.position());
      maxTs = Math.max(maxTs, h.appendTimestampMs());
      next = h.nextOffset();
      c.advance(h);
    }
    if (next >= limitOffset) complete = true;
    if (c.position() == start) return false;
    maxAppendTimestampMs = maxTs;
    nextOffset = next;
    validBytes = c.position();
    return true;
  }

  /**
   * Corruption found by {@link #recover} in the middle of the newest segment: the record at
   * {@code offset} (file position {@code position}) is bad, but valid records after it prove that
   * offsets up to {@code handedOutUpTo} (exclusive) were handed out. Not a torn tail.
   */
  record Damage(long offset, long position, String reason, long handedOutUpTo) {}

  /** Set by {@link #recover} only; null when the scan ended in a torn tail or at the end. */
  private Damage damage;

  /** Corruption in the middle of this (recovered, newest) segment, or null. */
  Damage damage() {
    return damage;
  }

  /**
   * @param handedOutUpTo when the scan stopped at a corrupt record followed by valid ones: the
   *     offset after the last of those valid records, else -1
   */
  private record Scan(long validBytes, long nextOffset, long maxAppendTimestampMs, OffsetIndex index,
      String stopReason, long handedOutUpTo) {}

  /** Reads records from position 0 while they are whole, valid and continue the offsets. */
  private static Scan scan(FileSystem fs, Path dir, long baseOffset, long epoch, long fileBytes, long limitOffset,
      LogConfig config) throws IOException {
    LogSegment reader = new LogSegment(fs, dir, baseOffset, epoch, TailCache.DISABLED, null, config.durability(),
        fileBytes, baseOffset, -1, null);
    OffsetIndex index = new OffsetIndex(baseOffset, config.indexIntervalBytes());
    long next = baseOffset;
    long maxTs = -1;
    String stopReason = null;
    long handedOutUpTo = -1;
    RecordCursor c = reader.cursor(0, fileBytes);
    try {
      while (next < limitOffset && c.position() < fileBytes) {
        RecordFormat.Header h;
        try {
          h = c.next();
          if (h.startOffset() != next) {
            throw new CorruptRecordException("record starts at offset " + h.startOffset() + ", expected " + next);
          }
          if (h.nextOffset() > limitOffset) {
            throw new CorruptRecordException("record [" + h.startOffset() + ", " + h.nextOffset()
                + ") overlaps the next segment at " + limitOffset);
          }
          c.verify(h);
        } catch (CorruptRecordException e) {
          stopReason = e.getMessage();
          handedOutUpTo = c.endOfValidRecordsAfterCurrent();
          break;
        }
        index.maybeAppend(h.startOffset(), c.position());
        maxTs = Math.max(maxTs, h.appendTimestampMs());
        next = h.nextOffset();
        c.advance(h);
      }
    } finally {
      reader.closeInput();
    }
    if (stopReason == null && c.position() < fileBytes) {
      stopReason = "the next segment starts at offset " + limitOffset;
    }
    return new Scan(c.position(), next, maxTs, index, stopReason, handedOutUpTo);
  }

  long baseOffset() {
    return baseOffset;
  }

  /** Owner epoch the segment was created under (0: written without fencing). */
  long epoch() {
    return epoch;
  }

  /** Offset after the last record; {@link #baseOffset()} when empty. */
  long nextOffset() {
    return nextOffset;
  }

  long validBytes() {
    return validBytes;
  }

  /** Newest append timestamp of the segment's records, -1 when it has none. */
  long maxAppendTimestampMs() {
    return maxAppendTimestampMs;
  }

  boolean hasRecords() {
    return nextOffset > baseOffset;
  }

  /** Clock time of the first append to this segment, -1 before it; append-lock holder only. */
  long firstAppendClockMs() {
    return firstAppendClockMs;
  }

  boolean isWritable() {
    return out != null;
  }

  /** Non-null when opening found that records after {@link #nextOffset()} were lost. */
  String lostTail() {
    return lostTail;
  }

  OffsetIndex index() {
    return index;
  }

  Path path() {
    return logPath;
  }

  /**
   * Writes one batch of encoded records in one write and makes it durable per the configured
   * {@link Durability} (hflush or hsync), then publishes it to readers. If this throws, nothing is
   * published, the file may hold part of the batch, and the caller must {@link #abortWriter()}.
   *
   * @param batch records for offsets {@code [nextOffset(), batchNextOffset)}, back to back
   * @param recordOffsets start offset of each record in the batch
   * @param recordPositions position of each record within the batch
   */
  void append(byte[] batch, long[] recordOffsets, int[] recordPositions, long batchNextOffset,
      long appendTimestampMs, long nowMs) throws IOException {
    write(batch, nowMs);
    flush();
    publish(batch, recordOffsets, recordPositions, batchNextOffset, appendTimestampMs);
  }

  /**
   * Hands one batch of encoded records to the writer, without flushing or publishing it: it
   * follows the batches written before, at position {@link #writtenBytes()}. If this throws, the
   * stream may hold part of the batch and must not be written again (the log drops the writer).
   */
  void write(byte[] batch, long nowMs) throws IOException {
    FSDataOutputStream o = out;
    if (o == null) throw new IllegalStateException("segment " + logPath + " has no open writer");
    o.write(batch, 0, batch.length);
    writtenBytes += batch.length;
    if (firstAppendClockMs < 0) firstAppendClockMs = nowMs;
  }

  /**
   * Makes durable per the configured {@link Durability} (hflush or hsync) at least every byte
   * written before this call; read {@link #writtenBytes()} before calling to know which. May run
   * concurrently with {@link #write} (see the class comment).
   */
  void flush() throws IOException {
    FSDataOutputStream o = out;
    if (o == null) throw new IOException("segment " + logPath + " has no open writer (dropped after a failure)");
    if (durability == Durability.SYNC) {
      o.hsync();
    } else {
      o.hflush();
    }
  }

  /** Bytes written to the segment, flushed or not; {@code >= validBytes()}. */
  long writtenBytes() {
    return writtenBytes;
  }

  /**
   * Publishes to readers the next written batch, once it is durable: the batches are published in
   * the order they were written, each exactly once.
   */
  void publish(byte[] batch, long[] recordOffsets, int[] recordPositions, long batchNextOffset,
      long appendTimestampMs) {
    long start = validBytes;
    if (recordOffsets.length > 0) {
      recent.set((int) (publishedBatches++ % RECENT_BATCHES), new PublishedBatch(start, recordOffsets, recordPositions));
    }
    cache.put(this, start, batch);
    for (int i = 0; i < recordOffsets.length; i++) {
      index.maybeAppend(recordOffsets[i], start + recordPositions[i]);
    }
    TimeIndex times = timeIndex;
    if (times != null) {
      times.addBatch(start, recordOffsets, recordPositions, start + batch.length, batchNextOffset, appendTimestampMs);
    }
    maxAppendTimestampMs = Math.max(maxAppendTimestampMs, appendTimestampMs);
    nextOffset = batchNextOffset;
    validBytes = start + batch.length;
  }

  /** hsyncs the writer, whatever the durability; no-op without one. */
  void sync() throws IOException {
    if (out != null) out.hsync();
  }

  /**
   * Closes the writer and persists the index. A failing close is logged, not thrown: every
   * acknowledged record was flushed before, and the index records how many bytes are valid. A
   * failing index write is logged too: the index is rebuilt by scanning the next time the log is
   * opened. Idempotent.
   */
  void seal() {
    Runnable rest = startSeal();
    if (rest != null) rest.run();
  }

  /**
   * Seals like {@link #seal}, but closes the writer and writes the index files on {@code
   * executor} (on the caller's thread if it refuses): a roll runs on a put's thread, and closing
   * a file and writing two more costs milliseconds on a busy machine (on hdfs, a round trip to
   * the NameNode and DataNodes). Reads are unaffected: they use the input stream and the index in
   * memory. Whoever deletes the files or closes the log waits for it first ({@link
   * #awaitSealed}). A crash before the index is written leaves the segment to be scanned when the
   * log is opened, as after any failed index write.
   */
  void sealOn(Executor executor) {
    Runnable rest = startSeal();
    if (rest == null) return;
    try {
      sealing = CompletableFuture.runAsync(rest, executor);
    } catch (RejectedExecutionException e) { // shut down: the log is closing anyway
      rest.run();
    }
  }

  /**
   * Marks the segment sealed and detaches its writer; returns what completes the seal (closing
   * the writer, writing the index files), or null if it was sealed already.
   */
  private Runnable startSeal() {
    if (sealed) return null; // a sealed segment has no writer either
    FSDataOutputStream o = out;
    out = null;
    sealed = true;
    return () -> {
      if (o != null) closeWriter(o);
      writeIndexQuietly();
    };
  }

  /** Waits until a seal handed to another thread by {@link #sealOn} is done; at once if none. */
  void awaitSealed() {
    CompletableFuture<Void> s = sealing;
    if (s != null) s.join(); // its work catches its own failures
  }

  private void closeWriter(FSDataOutputStream o) {
    try {
      o.close();
    } catch (IOException | RuntimeException | FSError e) {
      LOG.warn("Closing {} failed; its {} acknowledged bytes were already flushed", logPath, validBytes, e);
    }
  }

  /**
   * Drops the writer after a failed write, ignoring errors from closing it. On a file system with
   * leases the file may stay open (its close failed); reads then recover its lease first.
   */
  void abortWriter() {
    if (out != null) {
      closeQuietly(out);
      out = null;
      if (fs instanceof LeaseRecoverable) leaseRecoveryNeeded = true;
    }
  }

  private void writeIndexQuietly() {
    try {
      index.write(fs, indexPath, new OffsetIndex.Seal(baseOffset, nextOffset, validBytes, maxAppendTimestampMs));
    } catch (IOException | RuntimeException e) {
      LOG.warn("Could not write {}; it will be rebuilt by scanning {} when the log is opened", indexPath, logPath, e);
    }
    writeTimeIndexQuietly();
  }

  /** Persists the time index if it covers the whole (sealed) segment; else it is rebuilt when needed. */
  private void writeTimeIndexQuietly() {
    TimeIndex times = timeIndex;
    if (times == null || readOnlyView || times.coveredBytes() != validBytes) return;
    try {
      times.write(fs, timeIndexPath, nextOffset, validBytes);
    } catch (IOException | RuntimeException e) {
      LOG.warn("Could not write {}; it will be rebuilt by scanning {} when needed", timeIndexPath, logPath, e);
    }
  }

  /**
   * The offset of the first record (its first message) of this segment appended at or after
   * {@code timestampMs} and below {@code limitOffset}, or -1 if there is none. Loads the persisted
   * time index or builds it by scanning record headers (only the part not covered yet), then scans
   * from the index's start position. Thread-safe (reads only; a sealed writer's segment may write
   * its time index file once it is complete).
   */
  long offsetForTimestamp(long timestampMs, long limitOffset) throws IOException {
    long valid = validBytes; // read before nextOffset: see the class comment
    long next = nextOffset;
    TimeIndex times = timeIndex;
    boolean persistAfterScan = false;
    synchronized (timeIndexScan) {
      if (times == null) {
        times = sealed && !readOnlyView && out == null
            ? TimeIndex.read(fs, timeIndexPath, baseOffset, next, valid, TIME_INDEX_INTERVAL_BYTES) : null;
        if (times == null) {
          times = new TimeIndex(baseOffset, TIME_INDEX_INTERVAL_BYTES);
          persistAfterScan = sealed && !readOnlyView && out == null;
        }
        timeIndex = times;
      }
      long covered = times.coveredBytes();
      if (covered < valid) {
        RecordCursor c = cursor(covered, valid);
        RecordFormat.Header h;
        while ((h = c.next()) != null) {
          if (!times.addRecord(c.position(), h.startOffset(), h.nextOffset(), h.appendTimestampMs(), h.recordLength())) {
            break; // an append extended it meanwhile
          }
          c.advance(h);
        }
      }
      if (persistAfterScan && times.coveredBytes() == valid) writeTimeIndexQuietly();
    }
    RecordCursor c = cursor(times.startPosition(timestampMs), valid);
    RecordFormat.Header h;
    while ((h = c.next()) != null) {
      if (h.startOffset() >= limitOffset) return -1;
      if (h.appendTimestampMs() >= timestampMs) return h.startOffset();
      c.advance(h);
    }
    return -1;
  }

  /** Deletes the index, then the log file (an index without its log is cleaned up on open). */
  void deleteFiles() throws IOException {
    abortWriter();
    closeInput();
    deleteFilesKeepingInput();
  }

  /**
   * Deletes the index, then the log file, leaving the input stream to the caller (retention closes
   * it once the segment is out of the log).
   *
   * @throws IOException if a file is still there afterwards (a {@code delete} that returned false)
   */
  void deleteFilesKeepingInput() throws IOException {
    awaitSealed(); // else its index could be written after the delete
    abortWriter();
    deleteFile(fs, timeIndexPath);
    deleteFile(fs, indexPath);
    deleteFile(fs, logPath);
  }

  /**
   * Deletes one file. {@code FileSystem.delete} reports some failures only by returning false:
   * that is an error here unless the file is gone anyway.
   *
   * @throws IOException if the file still exists afterwards
   */
  static void deleteFile(FileSystem fs, Path path) throws IOException {
    if (!fs.delete(path, false) && fs.exists(path)) {
      throw new IOException("could not delete " + path + " (the file system refused; check its permissions)");
    }
  }

  /** Closes the shared input stream; reads afterwards fail. */
  void closeInput() {
    cache.remove(this);
    inputLock.writeLock().lock();
    try {
      inputClosed = true;
      if (in != null) closeQuietly(in);
      in = null;
    } finally {
      inputLock.writeLock().unlock();
    }
  }

  /**
   * As {@link #readFully(long, byte[], int, int)}, into {@code buf[0, len)}: a heap buffer's
   * array, or a direct buffer, which the input stream reads into itself when it can ({@code
   * ByteBufferPositionedReadable}: the local file system's {@link LocalFileInputStream} and hdfs
   * do), so that no copy is made on the way. Ignores and keeps {@code buf}'s position and limit.
   */
  void readFully(long position, ByteBuffer buf, int len) throws IOException {
    if (buf.hasArray()) {
      readFully(position, buf.array(), buf.arrayOffset(), len);
      return;
    }
    if (cache.read(this, position, buf, len)) return;
    readFromInput(s -> readFully(s, position, buf, len), position, len);
  }

  /**
   * Reads exactly {@code len} bytes at {@code position}, which the caller knows are in the file.
   * Reopens the shared stream if it ends early (it was opened when the file was shorter), or, on
   * HDFS, if it lost its block: a stream opened while the segment's last block was being written
   * can find no replica of it in the moment the segment's writer closes the file (the DataNode
   * finalizing the replica answers "not valid"); with one DataNode the client then gives up on
   * the block, while a new stream locates the finished block.
   */
  void readFully(long position, byte[] buf, int off, int len) throws IOException {
    if (cache.read(this, position, buf, off, len)) return;
    readFromInput(s -> s.readFully(position, buf, off, len), position, len);
  }

  /** One positioned read from the shared input stream. */
  private interface InputRead {
    void readFrom(FSDataInputStream s) throws IOException;
  }

  /** Runs {@code read} on the shared stream, opened or reopened as the class comment says. */
  private void readFromInput(InputRead read, long position, int len) throws IOException {
    if (leaseRecoveryNeeded) finishLeaseRecovery();
    FSDataInputStream stale = null;
    for (int attempt = 0; attempt < 3; attempt++) {
      FSDataInputStream s;
      inputLock.readLock().lock();
      try {
        if (inputClosed) throw new IOException("segment " + logPath + " is closed");
        s = in;
        if (s != null && s != stale) {
          try {
            read.readFrom(s);
            return;
          } catch (EOFException | BlockMissingException e) {
            if (attempt == 2) throw e;
          }
        }
      } finally {
        inputLock.readLock().unlock();
      }
      reopenInput(s);
      stale = s;
    }
    throw new EOFException("could not read " + len + " bytes at position " + position + " of " + logPath);
  }

  private static void readFully(FSDataInputStream s, long position, ByteBuffer buf, int len) throws IOException {
    if (s.hasCapability(StreamCapabilities.PREADBYTEBUFFER)) {
      s.readFully(position, buf.duplicate().clear().limit(len));
    } else { // a file system without byte-buffer reads: through an array
      byte[] bytes = new byte[len];
      s.readFully(position, bytes, 0, len);
      buf.duplicate().clear().put(0, bytes);
    }
  }

  /** Opens the shared input again unless another reader did since {@code s} was read (null: never opened). */
  private void reopenInput(FSDataInputStream s) throws IOException {
    inputLock.writeLock().lock();
    try {
      if (inputClosed) throw new IOException("segment " + logPath + " is closed");
      if (in == s) {
        if (in != null) closeQuietly(in);
        in = fs.open(logPath);
      }
    } finally {
      inputLock.writeLock().unlock();
    }
  }

  /**
   * Recovers the lease of a file whose writer was dropped, so that its last block is finalized
   * and readable. Does not wait: while the recovery runs (on hdfs it needs a live DataNode holding
   * the block), throws a retriable IOException.
   */
  private void finishLeaseRecovery() throws IOException {
    LeaseRecoverable leases = (LeaseRecoverable) fs;
    if (leases.isFileClosed(logPath) || leases.recoverLease(logPath)) {
      leaseRecoveryNeeded = false;
      inputLock.writeLock().lock();
      try {
        if (in != null) closeQuietly(in); // opened before the recovery: may not read the last block
        in = null;
      } finally {
        inputLock.writeLock().unlock();
      }
      return;
    }
    throw new IOException("the lease of " + logPath + " (left open by a failed write) is being recovered;"
        + " its last block cannot be read until then, retry");
  }

  static final int RECENT_BATCHES = 4;

  /** A published batch: its position in the file and its records' start offsets and positions within it. */
  private record PublishedBatch(long start, long[] recordOffsets, int[] recordPositions) {}

  /**
   * Where to start reading for {@code offset}: the position of the last record starting at or
   * before it, from the recent batches when one holds it, else from the sparse index (a record
   * boundary at or before it either way).
   */
  long readStart(long offset) {
    long fromIndex = index.lookup(offset);
    for (int i = 0; i < RECENT_BATCHES; i++) {
      PublishedBatch b = recent.get(i);
      if (b == null || offset < b.recordOffsets()[0]) continue;
      int r = java.util.Arrays.binarySearch(b.recordOffsets(), offset);
      if (r < 0) r = -r - 2; // the last record starting before offset
      long position = b.start() + b.recordPositions()[r];
      if (position > fromIndex) fromIndex = position;
    }
    return fromIndex;
  }

  /** A cursor over the records from {@code position} (a record boundary) to {@code limit} bytes. */
  RecordCursor cursor(long position, long limit) {
    return new RecordCursor(position, limit, Long.MAX_VALUE, null);
  }

  /**
   * As {@link #cursor(long, long)}, for a reader that expects to need about the bytes up to
   * {@code wantedEnd} (a read of a few kilobytes does not read a whole buffer ahead; more is read
   * if a record needs it). The blocks it hands out are read into buffers of {@code lease} (valid
   * until it is released; may be null) while its pool has some to spare, else into heap arrays.
   */
  RecordCursor cursor(long position, long limit, long wantedEnd, ReadLease lease) {
    return new RecordCursor(position, limit, wantedEnd, lease);
  }

  /**
   * Reads records one by one through a buffer of positioned reads. Not thread-safe; one per read.
   * {@link #next} parses a header without the CRC so that a reader can skip records cheaply;
   * {@link #block} and {@link #verify} check the CRC.
   */
  final class RecordCursor {
    private final long limit;
    /** Reads ahead at most up to here (unless a record needs more). */
    private final long wantedEnd;
    private final ReadLease lease;
    private long position;
    /** The bytes [bufStart, bufStart + bufLen) of the file at indexes [0, bufLen); null before the first read. */
    private ByteBuffer buf;
    private long bufStart;
    private int bufLen;
    /** Whether a block handed out refers to {@code buf}: the next refill then needs a new buffer. */
    private boolean bufHandedOut;

    private RecordCursor(long position, long limit, long wantedEnd, ReadLease lease) {
      this.position = position;
      this.limit = limit;
      this.wantedEnd = wantedEnd;
      this.lease = lease;
    }

    long position() {
      return position;
    }

    /** @return the header of the record at the cursor, or null at the limit */
    RecordFormat.Header next() throws IOException {
      if (position >= limit) return null;
      long available = limit - position;
      int off = fill(position, (int) Math.min(RecordFormat.LENGTH_PREFIX_BYTES, available));
      int length = RecordFormat.readLength(buf, off, available);
      off = fill(position, RecordFormat.headerBytes(buf.get(off)));
      return RecordFormat.parseHeader(buf, off, length);
    }

    StoredBlock block(RecordFormat.Header h) throws IOException {
      int off = fill(position, h.recordLength());
      RecordFormat.verifyCrc(buf, off, h.recordLength());
      bufHandedOut = true;
      return RecordFormat.toStoredBlock(buf, off, h);
    }

    void verify(RecordFormat.Header h) throws IOException {
      int off = fill(position, h.recordLength());
      RecordFormat.verifyCrc(buf, off, h.recordLength());
    }

    void advance(RecordFormat.Header h) {
      position += h.recordLength();
    }

    /**
     * After the record at the cursor proved corrupt: does its length field point at a record that
     * is valid? If so the corruption is in the middle of the data, not a torn tail, and this
     * returns the offset after the last of the valid records that follow one another from there
     * (they prove those offsets were handed out); else -1.
     */
    long endOfValidRecordsAfterCurrent() {
      long end = -1;
      try {
        long available = limit - position;
        int off = fill(position, (int) Math.min(RecordFormat.LENGTH_PREFIX_BYTES, available));
        int length = RecordFormat.readLength(buf, off, available);
        long nextPos = position + length;
        RecordCursor probe = new RecordCursor(nextPos, limit, Long.MAX_VALUE, null);
        while (probe.position() < limit) {
          RecordFormat.Header h = probe.next();
          probe.verify(h);
          if (end >= 0 && h.startOffset() != end) break;
          end = h.nextOffset();
          probe.advance(h);
        }
      } catch (IOException e) {
        // the valid records end here
      }
      return end;
    }

    /** Makes {@code [pos, pos + n)} available in the buffer; returns its index in the buffer. */
    private int fill(long pos, int n) throws IOException {
      if (buf != null && pos >= bufStart && pos + n <= bufStart + bufLen) return (int) (pos - bufStart);
      // what to read: the n bytes asked for, and ahead up to the reader's wanted end
      long wanted = Math.max(n, Math.min(limit, Math.max(wantedEnd, pos)) - pos);
      if (buf == null || bufHandedOut || n > buf.capacity()) {
        // blocks handed out are slices of the old buffer: read into another one
        buf = newBuffer(n, wanted);
        bufHandedOut = false;
      }
      long readable = Math.min(buf.capacity(), limit - pos);
      if (readable < n) throw new EOFException("need " + n + " bytes at " + pos + ", only " + readable + " readable");
      int toRead = (int) Math.min(readable, wanted);
      bufLen = 0; // the buffer's old content is gone whether or not the read succeeds
      readFully(pos, buf, toRead);
      bufStart = pos;
      bufLen = toRead;
      return 0;
    }

    /**
     * A buffer of the lease for a read of {@code n} bytes and ahead, when it fits one and the pool
     * has one to spare; else a heap array sized for what is wanted up to a chunk, or for the
     * record if it is larger.
     */
    private ByteBuffer newBuffer(int n, long wanted) {
      if (lease != null && n <= ReadBufferPool.BUFFER_BYTES) {
        ByteBuffer pooled = lease.tryTake();
        if (pooled != null) return pooled;
      }
      return ByteBuffer.wrap(new byte[(int) Math.max(n, Math.min(READ_CHUNK_BYTES, wanted))]);
    }
  }

  /**
   * fsyncs a directory of the local file system so that entries created in it survive a machine
   * crash (fsync of a file does not persist its directory entry). No-op on other file systems:
   * hdfs persists namespace changes in the NameNode's edit log.
   */
  static void syncDirectory(FileSystem fs, Path dir) throws IOException {
    if (fs instanceof RawLocalFileSystem raw) {
      File f = raw.pathToFile(dir);
      try (FileChannel ch = FileChannel.open(f.toPath(), StandardOpenOption.READ)) {
        ch.force(true);
      }
    }
  }

  private static void closeQuietly(java.io.Closeable c) {
    try {
      c.close();
    } catch (IOException | RuntimeException | FSError e) {
      LOG.debug("ignoring error while closing {}", c, e);
    }
  }

  @Override
  public String toString() {
    return "LogSegment[" + logPath + ", offsets [" + baseOffset + ", " + nextOffset + "), " + validBytes + " bytes]";
  }
}
