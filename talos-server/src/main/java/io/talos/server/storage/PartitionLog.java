package io.talos.server.storage;

import java.io.Closeable;
import java.io.IOException;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.apache.hadoop.fs.FSError;
import org.apache.hadoop.fs.FileSystem;
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
 * <p><b>Pipelined appends.</b> {@link #appendAsync} splits the append: the write happens under the
 * append lock, the flush outside it, by one flusher per log at a time, so the next groups are
 * written while a flush is in flight; a flush publishes and acknowledges, in write order, every
 * group written before it started. A failed flush fails every group not yet published, the ones
 * written after it included; the next append then recovers as above. {@link #append} takes the
 * same path and waits for its group (flushing it on its own thread when no flush is in flight).
 *
 * <p><b>Recovery</b> ({@link #open}) is {@link LogRecovery}'s: torn tails are cut back to the last
 * whole record, segments left open on hdfs have their lease recovered and their length read again
 * once closed, and each open of a log whose newest segment holds records starts a new segment.
 *
 * <p><b>Single writer (fencing)</b> is {@link PartitionOwnership}'s, which describes the protocol:
 * {@link #open} claims the partition; every change of existing files (roll, replacing a failed
 * segment, retention, close) is checked against the owner epoch first, and a fenced log does no
 * more work: appends, reads and sync throw {@link PartitionFencedException}, retention and close
 * touch no file, and {@link #isFenced()} tells the cache to evict it. Retention is {@link
 * SegmentRetention}'s.
 *
 * <p><b>Next offset.</b> The log never hands out an offset below the one recorded for it in a
 * {@link NextOffsetStore} (the metadata store), which it raises when it opens, rolls and closes:
 * a log whose files are gone fails to open with {@link PartitionDataMissingException} until an
 * operator resets it ({@link #open(FileSystem, Path, LogConfig, Clock, TailCache, NextOffsetStore,
 * String, int, boolean) reset}), and it then continues at the recorded offset.
 *
 * <p><b>Thread-safety.</b> Writes, rolls, retention and close are serialized by an append lock;
 * flushes and publishing are the flusher's (the {@code pipe} monitor hands groups over, never
 * held across I/O); rolls, retention, sync and close first wait for the flush in flight.
 * Reads take no part in it and run concurrently with appends: they see every record below the end
 * offset they read first (volatile), which is published after the records' bytes, index entries
 * and segment size. Removing segments (retention, close) takes a read-write lock exclusively, so a
 * segment is never closed under a running read.
 */
public final class PartitionLog implements Closeable, ReadablePartition {
  private static final Logger LOG = LoggerFactory.getLogger(PartitionLog.class);

  private final FileSystem fs;
  private final Path dir;
  private final LogConfig config;
  private final Clock clock;
  private final TailCache cache;
  private final PartitionOwnership owner;
  private final NextOffsetStore nextOffsets;
  private final String topicResourceName;
  private final int partitionId;

  private final ReentrantLock appendLock = new ReentrantLock();
  private final ReentrantReadWriteLock segmentsLock = new ReentrantReadWriteLock();
  /** Ascending base offsets, never empty; the last one is the active segment. Immutable lists. */
  private volatile List<LogSegment> segments;
  private volatile long endOffset;
  /** Offset the next written group starts at: {@code endOffset} plus groups in flight. Append lock. */
  private long writeOffset;
  private volatile long lastAppendTimestampMs;

  /**
   * Pipelined appends (see {@link #appendAsync}): groups written to the active segment and not yet
   * published, oldest first; whether a flusher runs; the failure of the last flush until an
   * appender handled it. Guarded by {@code pipe}, never held across I/O. Invariant: a group
   * waits only while a flusher runs.
   */
  private final Object pipe = new Object();
  private final ArrayDeque<Group> unflushed = new ArrayDeque<>();
  private boolean flushing;
  private Throwable flushFailure;
  private LogSegment failedSegment;

  /** Flush threads of pipelined appends: at most one per log at a time, idle ones end after 60 s. */
  private static final ExecutorService FLUSHERS = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "talos-log-flush");
    t.setDaemon(true);
    return t;
  });
  private volatile boolean closed;

  private PartitionLog(FileSystem fs, Path dir, LogConfig config, Clock clock, TailCache cache,
      PartitionOwnership owner, NextOffsetStore nextOffsets, String topicResourceName, int partitionId) {
    this.fs = fs;
    this.dir = dir;
    this.config = config;
    this.clock = clock;
    this.cache = cache;
    this.owner = owner;
    this.nextOffsets = nextOffsets;
    this.topicResourceName = topicResourceName;
    this.partitionId = partitionId;
  }

  /**
   * Opens the log in {@code dir}, creating the directory and a first segment at offset 0 if
   * needed, and recovers it (see the class comment). Afterwards every acknowledged record is
   * readable and the log is writable. Records no next offset anywhere.
   */
  public static PartitionLog open(FileSystem fs, Path dir, LogConfig config, Clock clock) throws IOException {
    return open(fs, dir, config, clock, TailCache.DISABLED);
  }

  /**
   * As {@link #open(FileSystem, Path, LogConfig, Clock)}, caching recent appends in {@code cache}
   * (shared by the logs of a server). On a file system with leases this takes the partition over
   * from any previous owner (see {@link PartitionOwnership}).
   *
   * @throws PartitionFencedException if yet another server claimed the partition while this one
   *     was opening it
   */
  public static PartitionLog open(FileSystem fs, Path dir, LogConfig config, Clock clock, TailCache cache)
      throws IOException {
    return open(fs, dir, config, clock, cache, NextOffsetStore.NONE, "", 0, false);
  }

  /**
   * As {@link #open(FileSystem, Path, LogConfig, Clock, TailCache)}, checking the log against the
   * next offset {@code nextOffsets} holds for the partition and raising it as the log grows.
   *
   * @param reset the operator accepted that the partition's data below the recorded next offset is
   *     lost: instead of failing, the log continues at the recorded next offset
   * @throws PartitionDataMissingException if the log ends below the recorded next offset and not
   *     {@code reset}; nothing was created
   */
  public static PartitionLog open(FileSystem fs, Path dir, LogConfig config, Clock clock, TailCache cache,
      NextOffsetStore nextOffsets, String topicResourceName, int partitionId, boolean reset) throws IOException {
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(clock, "clock");
    Objects.requireNonNull(cache, "cache");
    Objects.requireNonNull(nextOffsets, "nextOffsets");
    FileSystem raw = rawIfLocal(Objects.requireNonNull(fs, "fs"));
    long known = nextOffsets.nextOffset(topicResourceName, partitionId);
    long startNs = System.nanoTime();
    createDirectory(raw, dir, config, known, reset);
    PartitionOwnership owner = PartitionOwnership.claim(raw, dir);
    PartitionLog log = new PartitionLog(raw, dir, config, clock, cache, owner, nextOffsets, topicResourceName,
        partitionId);
    List<LogSegment> opened = LogRecovery.recover(raw, dir, config, cache, owner, known, reset);
    long maxTs = -1;
    for (LogSegment s : opened) maxTs = Math.max(maxTs, s.maxAppendTimestampMs());
    log.lastAppendTimestampMs = maxTs;
    log.segments = List.copyOf(opened);
    log.endOffset = log.active().baseOffset();
    log.writeOffset = log.endOffset;
    log.recordNextOffset();
    LOG.info("Opened partition log {}: offsets [{}, {}), {} segments, {} bytes, in {} ms", dir, log.startOffset(),
        log.endOffset, log.segments.size(), log.sizeBytes(),
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs));
    return log;
  }

  /** Creates a missing log directory, unless offsets were handed out from it (its data is then lost). */
  private static void createDirectory(FileSystem fs, Path dir, LogConfig config, long known, boolean reset)
      throws IOException {
    if (fs.exists(dir)) return;
    if (known > 0 && !reset) {
      throw new PartitionDataMissingException("partition log directory " + dir + " is missing, but offsets up to "
          + known + " were handed out (recorded in the metadata store): its data is missing. Restore the directory,"
          + " or accept the loss with 'bin/talos partition reset <topic> <partition>', which continues the"
          + " partition at offset " + known);
    }
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

  /**
   * Raises the recorded next offset to the active segment's base offset (the end offset the
   * directory itself names). A failure is logged: the record then lags, which only weakens the
   * check, never makes it wrong.
   */
  private void recordNextOffset() {
    recordNextOffset(active().baseOffset());
  }

  private void recordNextOffset(long offset) {
    try {
      nextOffsets.raiseNextOffset(topicResourceName, partitionId, offset);
    } catch (IOException | RuntimeException e) {
      LOG.warn("Could not record next offset {} of {} in the metadata store; the record lags", offset, dir, e);
    }
  }

  /** The checksummed local file system writes .crc files and cannot hflush/hsync: use its raw one. */
  static FileSystem rawIfLocal(FileSystem fs) {
    return fs instanceof LocalFileSystem local ? local.getRaw() : fs;
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
    Group g = write(blocks, appendTimestampMs);
    if (g.startsFlush) flushLoop(g); // no flush in flight: this thread flushes, without a hand-off
    try {
      return g.done.join();
    } catch (CompletionException e) {
      throw failedAppend(e.getCause());
    }
  }

  /**
   * Pipelined append: writes the blocks as {@link #append} does but returns once they are written,
   * before they are durable; the future completes with the first offset once the flush that
   * covers them returned, in append order. Meanwhile further appends write the next groups, so the
   * caller never waits idle for the storage. If a flush fails, the group it covered and every group
   * written after it fail too (none of them is acknowledged or readable); the next append leaves
   * the log writable again as after a failed {@link #append}.
   *
   * @throws IllegalArgumentException as {@link #append}
   * @throws PartitionFencedException as {@link #append}
   * @throws IOException if writing failed; nothing was appended
   */
  public CompletableFuture<Long> appendAsync(List<BlockToAppend> blocks, long appendTimestampMs) throws IOException {
    Group g = write(blocks, appendTimestampMs);
    if (g.startsFlush) FLUSHERS.execute(() -> flushLoop(null));
    return g.done;
  }

  /**
   * A sync append's failure as {@link #append} reports it: after a failed flush the log is first
   * left writable (a new segment) and a fenced owner is told as {@link PartitionFencedException}.
   */
  private IOException failedAppend(Throwable cause) throws IOException {
    appendLock.lock();
    try {
      settle();
    } catch (PartitionFencedException fenced) {
      return fenced;
    } finally {
      appendLock.unlock();
    }
    if (cause instanceof IOException io) return io;
    if (cause instanceof FSError) return new IOException("disk error appending to " + dir, cause);
    if (cause instanceof RuntimeException re) throw re;
    if (cause instanceof Error err) throw err;
    return new IOException(cause);
  }

  /** Validates, encodes and writes one group (not flushed); registers it for the flusher. */
  private Group write(List<BlockToAppend> blocks, long appendTimestampMs) throws IOException {
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
      owner.ensureNotFenced();
      boolean failed;
      synchronized (pipe) {
        failed = flushFailure != null;
      }
      if (failed) settle(); // an earlier flush failed: start over at the end offset first
      long nowMs = clock.millis();
      LogSegment seg = segmentForAppend((int) batchBytes, nowMs);
      long first = writeOffset;
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
      long start = seg.writtenBytes();
      try {
        seg.write(batch, nowMs);
      } catch (IOException | RuntimeException | Error e) {
        settle(); // the groups before this one: published if their flush succeeds
        writeOffset = endOffset;
        throw appendFailed(seg, first, e);
      }
      writeOffset = next;
      Group g = new Group(seg, start, batch, offsets, positions, first, next, appendTimestampMs);
      synchronized (pipe) {
        if (flushFailure != null) { // a flush failed since: this group is never acknowledged
          g.done.completeExceptionally(new IOException("an earlier append to " + dir + " failed before offset "
              + first + " was flushed; not acknowledged, retry", flushFailure));
        } else {
          unflushed.add(g);
          if (!flushing) {
            flushing = true;
            g.startsFlush = true;
          }
        }
      }
      return g;
    } finally {
      appendLock.unlock();
    }
  }

  /**
   * The flusher: flushes the active segment, publishes every group written before the flush
   * started (in order: end offset, cache, index) and completes their futures, while groups written
   * meanwhile wait for the next round. One flusher per log at a time ({@code flushing}). Run by a
   * sync appender for its own group (it hands the rest to a flush thread once that is done) or by
   * a flush thread until nothing is left. A failed flush fails every unpublished group and stops.
   */
  private void flushLoop(Group own) {
    while (true) {
      List<Group> round;
      synchronized (pipe) {
        if (unflushed.isEmpty()) {
          flushing = false;
          pipe.notifyAll();
          return;
        }
        if (own != null && own.done.isDone()) {
          FLUSHERS.execute(() -> flushLoop(null));
          return;
        }
        round = new ArrayList<>(unflushed);
      }
      LogSegment seg = round.get(0).seg;
      Throwable failure = null;
      try {
        seg.flush();
      } catch (IOException | RuntimeException | Error e) {
        failure = e;
      }
      if (failure == null) {
        for (Group g : round) {
          seg.publish(g.start, g.batch, g.offsets, g.positions, g.next, g.appendTimestampMs);
          lastAppendTimestampMs = Math.max(lastAppendTimestampMs, g.appendTimestampMs);
          endOffset = g.next;
        }
        synchronized (pipe) {
          for (int i = 0; i < round.size(); i++) unflushed.removeFirst();
        }
        for (Group g : round) g.done.complete(g.first);
      } else {
        List<Group> failed;
        synchronized (pipe) {
          failed = new ArrayList<>(unflushed);
          unflushed.clear();
          flushFailure = failure;
          failedSegment = seg;
          flushing = false;
          pipe.notifyAll();
        }
        LOG.warn("Flushing {} failed; {} groups from offset {} are not acknowledged", seg.path(), failed.size(),
            failed.get(0).first, failure);
        for (Group g : failed) g.done.completeExceptionally(failure);
        return;
      }
    }
  }

  /**
   * Waits until no flush is in flight (every written group is published or failed); if a flush
   * failed, leaves the log as a failed append does (drops the writer, starts a new segment at the
   * end offset). Append lock held.
   *
   * @return whether a failed flush was handled
   * @throws PartitionFencedException if that showed the partition was taken over
   */
  private boolean settle() throws PartitionFencedException {
    Throwable failure;
    LogSegment seg;
    synchronized (pipe) {
      boolean interrupted = false;
      while (flushing) {
        try {
          pipe.wait();
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      if (interrupted) Thread.currentThread().interrupt();
      failure = flushFailure;
      seg = failedSegment;
      flushFailure = null;
      failedSegment = null;
    }
    if (failure == null) return false;
    writeOffset = endOffset;
    try {
      IOException e = appendFailed(seg, endOffset, failure);
      if (e instanceof PartitionFencedException fenced) throw fenced;
    } catch (RuntimeException | Error e) {
      // the failure itself, rethrown: already reported to the groups it failed
    }
    return true;
  }

  /** One appended group, written and waiting for its flush. */
  private static final class Group {
    final LogSegment seg;
    final long start;
    final byte[] batch;
    final long[] offsets;
    final int[] positions;
    final long first;
    final long next;
    final long appendTimestampMs;
    final CompletableFuture<Long> done = new CompletableFuture<>();
    /** Set under the pipe lock: this group's appender must start the flusher. */
    boolean startsFlush;

    Group(LogSegment seg, long start, byte[] batch, long[] offsets, int[] positions, long first, long next,
        long appendTimestampMs) {
      this.seg = seg;
      this.start = start;
      this.batch = batch;
      this.offsets = offsets;
      this.positions = positions;
      this.first = first;
      this.next = next;
      this.appendTimestampMs = appendTimestampMs;
    }
  }

  /** The active segment, after rolling it by size or age or replacing it after a failure. */
  private LogSegment segmentForAppend(int batchBytes, long nowMs) throws IOException {
    LogSegment a = active();
    if (!a.isWritable()) {
      LOG.info("Starting a new segment of {} at offset {} (the last append or roll failed)", dir, endOffset);
      return startNewActiveSegment();
    }
    if (a.writtenBytes() > 0) {
      if (a.writtenBytes() + batchBytes > config.segmentBytes()) {
        LOG.debug("Rolling {} at offset {}: {} + {} bytes > segmentBytes={}", dir, writeOffset, a.writtenBytes(),
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
   * without records is replaced by a fresh file instead (created before the old one is deleted, so
   * the directory always names the end offset). Checks the ownership first. If creating the new
   * file fails, the old segment stays last without a writer and the next append calls this again.
   * Append lock held.
   */
  private LogSegment startNewActiveSegment() throws IOException {
    // the groups in flight go to the old segment: published (or failed) before it is sealed
    if (settle() && active().isWritable()) return active();
    owner.check();
    LogSegment old = active();
    List<LogSegment> list = new ArrayList<>(segments);
    if (old.hasRecords()) {
      old.seal();
      LogSegment fresh = owner.createSegment(endOffset, config, cache);
      list.add(fresh);
      segments = List.copyOf(list);
      recordNextOffset(endOffset);
      return fresh;
    }
    old.abortWriter();
    // same epoch: create() replaces the file in place; else the old file goes once the new exists
    LogSegment fresh = owner.createSegment(old.baseOffset(), config, cache);
    list.set(list.size() - 1, fresh);
    segmentsLock.writeLock().lock();
    try {
      segments = List.copyOf(list);
      old.closeInput();
    } finally {
      segmentsLock.writeLock().unlock();
    }
    if (old.epoch() != owner.epoch()) {
      try {
        old.deleteFiles();
      } catch (IOException e) { // an empty file under the new one's base offset: recovery drops it
        LOG.warn("Could not delete the replaced empty segment {}", old.path(), e);
      }
    }
    return fresh;
  }

  /** Leaves the log writable after a failed append and returns what to throw. Append lock held. */
  private IOException appendFailed(LogSegment seg, long offset, Throwable failure) {
    seg.abortWriter();
    if (failure instanceof PartitionFencedException fenced) return fenced;
    if (owner.fencing() && failure instanceof IOException) {
      try {
        owner.check();
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
  @Override
  public List<StoredBlock> read(long offset, int maxMessages, int maxBytes)
      throws OffsetOutOfRangeException, IOException {
    if (maxMessages < 1) throw new IllegalArgumentException("maxMessages=" + maxMessages + " must be >= 1");
    if (maxBytes < 0) throw new IllegalArgumentException("maxBytes=" + maxBytes + " must be >= 0");
    segmentsLock.readLock().lock();
    try {
      ensureOpen();
      owner.ensureNotFenced();
      long end = endOffset; // read before the segments: they are published before the end offset
      List<LogSegment> segs = segments;
      long start = segs.get(0).baseOffset();
      if (offset < start || offset > end) {
        throw new OffsetOutOfRangeException(dir.toString(), offset, start, end);
      }
      return readBlocks(dir, segs, end, offset, maxMessages, maxBytes);
    } finally {
      segmentsLock.readLock().unlock();
    }
  }

  /**
   * The read of {@link #read} over {@code segs} (ascending, covering {@code offset}) below {@code
   * end}, shared with the read-only {@link PartitionReader}; the caller checked the range and
   * keeps the segments' inputs open meanwhile.
   */
  static List<StoredBlock> readBlocks(Path dir, List<LogSegment> segs, long end, long offset, int maxMessages,
      int maxBytes) throws IOException {
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
   * retentionMs} by the log's clock (see {@link SegmentRetention}, which decides and deletes, oldest
   * first and owner-checked). When every segment has expired, the active one is sealed and a new
   * empty one started at {@link #endOffset()} so the old one can go too: an idle partition does not
   * keep its last segment forever, and the end offset survives a restart through the new segment's
   * file name. {@link #startOffset()} then equals {@link #endOffset()}. Readers of deleted offsets
   * get {@link OffsetOutOfRangeException}. A fenced log (or one this finds fenced) deletes nothing.
   *
   * @return the number of segments deleted
   * @throws IOException if deleting a file failed: that segment and the newer ones stay in the log
   *     (so offsets stay contiguous and the start offset never goes backwards) and the next pass
   *     tries again
   */
  public int deleteExpiredSegments(long retentionMs) throws IOException {
    if (retentionMs < 0) throw new IllegalArgumentException("retentionMs=" + retentionMs + " must be >= 0");
    appendLock.lock();
    try {
      ensureOpen();
      if (owner.isFenced()) return 0; // the new owner applies retention
      long cutoffMs = clock.millis() - retentionMs;
      List<LogSegment> segs = segments;
      int expired = SegmentRetention.expiredSealedSegments(segs, cutoffMs);
      if (SegmentRetention.activeExpired(segs, expired, cutoffMs)) {
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
      SegmentRetention.Result r;
      try {
        r = SegmentRetention.deleteOldestFirst(segs.subList(0, expired), owner);
      } catch (PartitionFencedException e) {
        return 0;
      }
      if (r.deleted() > 0) {
        List<LogSegment> doomed = segs.subList(0, r.deleted());
        segmentsLock.writeLock().lock();
        try {
          segments = List.copyOf(segs.subList(r.deleted(), segs.size()));
          for (LogSegment s : doomed) s.closeInput();
        } finally {
          segmentsLock.writeLock().unlock();
        }
        LOG.info("Retention deleted {} segments of {} older than {} ms; offsets now start at {}", r.deleted(), dir,
            retentionMs, startOffset());
      }
      if (r.failure() != null) throw r.failure();
      return r.deleted();
    } finally {
      appendLock.unlock();
    }
  }

  /** hsyncs the active segment whatever the {@link Durability}, e.g. before a planned shutdown. */
  public void sync() throws IOException {
    appendLock.lock();
    try {
      ensureOpen();
      owner.ensureNotFenced();
      settle();
      active().sync();
    } finally {
      appendLock.unlock();
    }
  }

  /** First readable offset; equals {@link #endOffset()} when the log is empty. */
  @Override
  public long startOffset() {
    return segments.get(0).baseOffset();
  }

  /** The offset the next appended message gets. */
  @Override
  public long endOffset() {
    return endOffset;
  }

  /** Bytes of valid records in all segments. */
  @Override
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

  /**
   * Whether another server took the partition over, as far as this log found out (every append,
   * read and sync then fails, and retention and close touch no file): the cache closes and evicts
   * such a log.
   */
  @Override
  public boolean isFenced() {
    return owner.isFenced();
  }

  /** This log's owner epoch (0 without fencing). For tests and diagnostics. */
  long ownerEpoch() {
    return owner.epoch();
  }

  @Override
  public boolean isClosed() {
    return closed;
  }

  /**
   * Seals the active segment (persisting its index), records the end offset as the partition's
   * next offset and releases all streams. Checks the ownership first: a log that is (or turns out
   * to be) fenced seals nothing and writes no file. Idempotent.
   */
  @Override
  public void close() {
    appendLock.lock();
    try {
      segmentsLock.writeLock().lock();
      try {
        if (closed) return;
        try {
          settle(); // acknowledges (or fails) the groups in flight before the segment is sealed
        } catch (PartitionFencedException e) {
          // the owner check below finds it too
        }
        closed = true;
        boolean owned;
        try {
          owner.check();
          owned = true;
        } catch (IOException e) { // fenced, or ownership unknown: leave the files to the owner's recovery
          owned = false;
          if (!owner.isFenced()) LOG.warn("Could not check the ownership of {}; not sealing it", dir, e);
        }
        if (owned) {
          active().seal();
          recordNextOffset(endOffset);
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
      try {
        settle();
      } catch (PartitionFencedException e) {
        // deleted anyway
      }
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
