package io.talos.server.storage;

import java.io.Closeable;
import java.io.IOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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
 * one write and makes it durable with an hflush ({@link Durability#FLUSH}) or hsync ({@link
 * Durability#SYNC}; on RawLocalFileSystem 3.4.1 that is {@code FileDescriptor.sync()}, i.e.
 * fsync) started after the write, and only then publishes the new end offset.
 *
 * <p><b>Pipeline.</b> {@link #appendPutsAsync} returns after the write; the log's flusher (at most
 * one per log, on {@link #flushThreads}) flushes without the append lock while the next appends
 * are written behind, then publishes and completes, in offset order, every pending append the
 * flush covered, and flushes again if more was written meanwhile:
 *
 * <pre>
 *   writer:   write g1 | write g2 | write g3 |            | write g4 ...
 *   flusher:  hflush (covers g1) -------------| publish+ack g1 | hflush (covers g2, g3) ...
 * </pre>
 *
 * On a local file system with {@link Durability#FLUSH} a flush is one write(2) of the stream's
 * buffer into the page cache, cheaper than waking a flush thread: there the writer that finds no
 * flush in flight flushes its own append itself ({@code flushInline}), exactly as {@link
 * #appendPuts} does, and hands the flusher to {@link #flushThreads} only if another writer's
 * appends arrived meanwhile. A lone put is then written, flushed and acknowledged on one thread.
 *
 * Offsets are handed out at write time ({@code writeOffset}, ahead of {@code endOffset} by the
 * pending appends). A roll, sync, close or retention roll first waits until nothing is pending.
 * A failed flush fails every pending append (none acknowledged) and {@code writeOffset} falls
 * back to the end offset; a failed write marks the stream failed and the flusher fails what its
 * flush in flight did not cover. If the write or the flush fails, the end
 * offset is not advanced and the bytes that may have reached the file are never read: the
 * segment's writer is dropped and a new active segment is started at the unchanged end offset
 * (replacing the failed one if it held no acknowledged record). If that fails too, the next append
 * tries again first. A failed append may still have reached the disk; after a crash such a record
 * can appear on recovery (at-least-once: the producer got an error and may send it again).
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
 * {@link NextOffsetStore} (the metadata store), which it raises when it opens, rolls (without
 * waiting for the store: {@link NextOffsetStore#raiseNextOffsetSoon}) and closes:
 * a log whose files are gone fails to open with {@link PartitionDataMissingException} until an
 * operator resets it ({@link #open(FileSystem, Path, LogConfig, Clock, TailCache, NextOffsetStore,
 * String, int, boolean) reset}), and it then continues at the recorded offset.
 *
 * <p><b>Idempotent produce.</b> {@link #appendPuts} checks each put that carries a producer id
 * against the log's {@link ProducerState} under the append lock: a repeat of a stored put is
 * answered with its stored offsets and not written, an out-of-order one is refused. Such puts are
 * written as record format version 2 (producer id and sequence in every record), and opening the
 * log rebuilds the state from them.
 *
 * <p><b>Thread-safety.</b> Appends, rolls, retention and close are serialized by an append lock;
 * the flusher takes it to pick what to flush and to publish, never during the flush itself.
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
  /** The writer starting the flusher flushes its own append (local file system, FLUSH: see the class comment). */
  private final boolean flushInline;

  private final ReentrantLock appendLock = new ReentrantLock();
  private final ReentrantReadWriteLock segmentsLock = new ReentrantReadWriteLock();
  /** Ascending base offsets, never empty; the last one is the active segment. Immutable lists. */
  private volatile List<LogSegment> segments;
  private volatile long endOffset;
  private volatile long lastAppendTimestampMs;
  private volatile boolean closed;
  /** Idempotent produce: the recent puts of each producer. Guarded by the append lock. */
  private ProducerState producers;

  // The append pipeline, guarded by the append lock (see the class comment).
  /** Signalled when the flusher stops because nothing is pending. */
  private final java.util.concurrent.locks.Condition drained = appendLock.newCondition();
  /** Written, not yet durable appends, in offset order; all in the active segment. */
  private final java.util.ArrayDeque<Group> pending = new java.util.ArrayDeque<>();
  /** Idempotent puts of the pending appends, per producer in sequence order. */
  private final Map<Long, java.util.ArrayDeque<PendingPut>> pendingProducers = new HashMap<>();
  /** A flusher runs; true whenever {@code pending} is not empty. */
  private boolean flushing;
  /** The offset the next written message gets: {@code endOffset} plus the pending appends. */
  private long writeOffset;
  /** A write into the active segment failed while a flush was in flight: the flusher fails the rest. */
  private Throwable writeFailure;
  /** What the appends failed by the last failPipeline fail with. */
  private Throwable failOutcome;

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
    this.flushInline = config.durability() == Durability.FLUSH && fs instanceof org.apache.hadoop.fs.RawLocalFileSystem;
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
    log.producers = ProducerState.recover(log.segments, config.producerStateMaxProducers(),
        config.producerStateExpiryMs(), clock.millis());
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
    recordNextOffset(active().baseOffset(), true);
  }

  /** @param wait whether the store must hold it on return; a roll does not wait (it runs on a put's thread) */
  private void recordNextOffset(long offset, boolean wait) {
    try {
      if (wait) {
        nextOffsets.raiseNextOffset(topicResourceName, partitionId, offset);
      } else {
        nextOffsets.raiseNextOffsetSoon(topicResourceName, partitionId, offset);
      }
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
    Objects.requireNonNull(blocks, "blocks");
    if (blocks.isEmpty()) throw new IllegalArgumentException("no blocks to append");
    return appendPuts(List.of(new Put(blocks, NO_PRODUCER, -1)), appendTimestampMs)[0].firstOffset();
  }

  /** {@link Put#producerId()} of a put that is not idempotent. */
  public static final long NO_PRODUCER = -1;

  /**
   * One put of an {@link #appendPuts appendPuts}: its blocks and, for an idempotent put, its
   * producer id ({@code > 0}) and sequence ({@code >= 0}); {@link #NO_PRODUCER} and any sequence
   * otherwise.
   */
  public record Put(List<BlockToAppend> blocks, long producerId, int sequence) {
    public boolean idempotent() {
      return producerId != NO_PRODUCER;
    }
  }

  /**
   * What became of one put of an {@link #appendPuts appendPuts}.
   *
   * @param firstOffset offset of the put's first message: where it was appended now, or for a
   *     duplicate where it was appended the first time; -1 if refused
   * @param duplicate the put repeated a stored one: nothing was written for it
   * @param outOfOrder why the put was refused (its sequence is out of order), or null
   */
  public record PutResult(long firstOffset, boolean duplicate, String outOfOrder) {}

  /**
   * Appends several puts with one write and one flush (group commit), in order. An idempotent put
   * is first checked against the partition's {@link ProducerState}: a repeat of a stored put is
   * not written and answered with the stored offsets, an out-of-order one is refused (the others
   * still go on). The state learns the new puts only once their append is durable.
   *
   * @return one result per put, in order
   * @throws IllegalArgumentException as {@code append}, for any put; nothing is written
   * @throws PartitionFencedException if another server took the partition over; nothing was appended
   * @throws IOException if writing failed; nothing was appended (no put may be acknowledged, the
   *     duplicates included) and the log stays writable
   */
  public PutResult[] appendPuts(List<Put> puts, long appendTimestampMs) throws IOException {
    Group g = write(puts, appendTimestampMs);
    if (g.runFlusher) flushLoop(g);
    try {
      return g.future.join();
    } catch (java.util.concurrent.CompletionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof IOException io) throw io;
      if (cause instanceof RuntimeException re) throw re;
      if (cause instanceof Error err) throw err;
      throw new IOException(cause);
    }
  }

  /**
   * As {@link #appendPuts}, pipelined: writes the puts (one write, no flush) and returns at once
   * with a future of their results, completed once a flush that covers them has returned and every
   * earlier append of this log has completed (futures complete in append order, on the log's
   * flusher thread). Meanwhile the caller may append the next puts: they go into the same stream
   * behind these while the flush is in flight, and the next flush covers them all. Offsets are
   * handed out at write time, in order, never twice. On a local file system with {@link
   * Durability#FLUSH}, a call that finds no flush in flight flushes on the calling thread and
   * returns a completed future (see the class comment).
   *
   * <p>If a flush (or a write) fails, the future of every append not yet completed fails with the
   * {@link IOException} (or {@link PartitionFencedException}): none of them is acknowledged, none
   * becomes readable, and the log continues in a new segment at the end offset of the last
   * completed append, exactly as after a failed {@link #appendPuts}.
   *
   * @throws IllegalArgumentException as {@link #appendPuts}; nothing is written
   * @throws PartitionFencedException if another server took the partition over; nothing was written
   * @throws IOException if writing failed at once; nothing of this call is acknowledged
   */
  public java.util.concurrent.CompletableFuture<PutResult[]> appendPutsAsync(List<Put> puts, long appendTimestampMs)
      throws IOException {
    Group g = write(puts, appendTimestampMs);
    if (g.runFlusher) {
      if (flushInline) {
        flushLoop(g);
      } else {
        flushThreads.execute(() -> flushLoop(null));
      }
    }
    return g.future;
  }

  /**
   * Where this log's flushes run, at most one per log at a time, so a slow DataNode holds no writer
   * and no pool worker. A server's {@link PartitionLogs} sets its own bounded pool ({@code
   * storage.flush.threads}) before it hands the log out; a log opened directly (tools, tests) uses
   * {@link #DEFAULT_FLUSH_THREADS}. A bounded pool is enough: a flush task waits only for I/O,
   * never for another log's flush, and each log queues at most one.
   */
  private volatile java.util.concurrent.Executor flushThreads = DEFAULT_FLUSH_THREADS;

  /** The flush pool of logs opened outside a {@link PartitionLogs}. */
  private static final java.util.concurrent.ExecutorService DEFAULT_FLUSH_THREADS = daemonPool(64, "talos-log-flush-");

  /** A pool of at most {@code threads} daemon threads (idle ones end after a minute): log flushes, seals. */
  static java.util.concurrent.ThreadPoolExecutor daemonPool(int threads, String namePrefix) {
    java.util.concurrent.atomic.AtomicInteger n = new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.ThreadPoolExecutor pool = new java.util.concurrent.ThreadPoolExecutor(threads, threads,
        60, java.util.concurrent.TimeUnit.SECONDS, new java.util.concurrent.LinkedBlockingQueue<>(), r -> {
          Thread t = new Thread(r, namePrefix + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }

  /** Runs this log's flushes on {@code pool}; called by the owner before the log is shared. */
  void flushOn(java.util.concurrent.Executor pool) {
    this.flushThreads = Objects.requireNonNull(pool, "pool");
  }

  /**
   * Where a rolled segment's writer is closed and its index files written (see {@link
   * LogSegment#sealOn}), so that a roll does not make the put that triggered it wait for them.
   */
  private volatile java.util.concurrent.Executor sealThreads = DEFAULT_SEAL_THREADS;

  /** The seal thread of logs opened outside a {@link PartitionLogs}. */
  private static final java.util.concurrent.ExecutorService DEFAULT_SEAL_THREADS = daemonPool(1, "talos-log-seal-");

  /** Seals this log's rolled segments on {@code pool}; called by the owner before the log is shared. */
  void sealOn(java.util.concurrent.Executor pool) {
    this.sealThreads = Objects.requireNonNull(pool, "pool");
  }

  /**
   * Waits until every rolled segment's writer is closed and its index files are written (a tool
   * that abandons a log to imitate a crash calls it first: a crash stops the seal thread too).
   */
  public void awaitSeals() {
    for (LogSegment s : segments) s.awaitSealed();
  }

  /**
   * One append in the pipeline: written, waiting for a flush. {@code batch} is null for an append
   * that wrote nothing (only repeats and refusals): it completes in order with the others.
   */
  private static final class Group {
    final LogSegment seg;
    final byte[] batch;
    final long[] offsets;
    final int[] positions;
    /** The segment's written bytes after this batch: a flush that started later covers it. */
    final long endBytes;
    final long nextOffset;
    final long appendTimestampMs;
    final PutResult[] results;
    final List<Put> puts;
    final long[] putFirst;
    final boolean[] written;
    final java.util.concurrent.CompletableFuture<PutResult[]> future = new java.util.concurrent.CompletableFuture<>();
    /** The caller must run the flusher (it was idle). */
    boolean runFlusher;

    Group(LogSegment seg, byte[] batch, long[] offsets, int[] positions, long endBytes, long nextOffset,
        long appendTimestampMs, PutResult[] results, List<Put> puts, long[] putFirst, boolean[] written) {
      this.seg = seg;
      this.batch = batch;
      this.offsets = offsets;
      this.positions = positions;
      this.endBytes = endBytes;
      this.nextOffset = nextOffset;
      this.appendTimestampMs = appendTimestampMs;
      this.results = results;
      this.puts = puts;
      this.putFirst = putFirst;
      this.written = written;
    }
  }

  /** An idempotent put written but not yet durable (or accepted earlier in the same call). */
  private record PendingPut(int sequence, long firstOffset, long nextOffset) {}

  /**
   * Validates, decides and encodes the puts and writes them behind the pending appends, without
   * flushing. Returns the pipeline entry; its {@code runFlusher} tells the caller to start the
   * flusher. A call that writes nothing and finds the pipeline empty returns a completed entry.
   */
  private Group write(List<Put> puts, long appendTimestampMs) throws IOException {
    Objects.requireNonNull(puts, "puts");
    if (puts.isEmpty()) throw new IllegalArgumentException("no puts to append");
    int blockCount = 0;
    long maxBytes = 0;
    for (int p = 0; p < puts.size(); p++) {
      Put put = puts.get(p);
      if (put == null || put.blocks() == null || put.blocks().isEmpty()) {
        throw new IllegalArgumentException("put " + p + " is null or has no blocks");
      }
      if (put.idempotent() && (put.producerId() <= 0 || put.sequence() < 0)) {
        throw new IllegalArgumentException("put " + p + " has producerId=" + put.producerId() + " and sequence="
            + put.sequence() + "; an idempotent put needs producerId > 0 and sequence >= 0");
      }
      for (int i = 0; i < put.blocks().size(); i++) {
        BlockToAppend b = put.blocks().get(i);
        if (b == null || b.payload() == null) {
          throw new IllegalArgumentException("block " + blockCount + " or its payload is null");
        }
        if (b.messageCount() < 1) {
          throw new IllegalArgumentException("block " + blockCount + " has messageCount=" + b.messageCount()
              + "; must be >= 1");
        }
        if (b.payloadLength() > config.maxBlockBytes()) {
          throw new IllegalArgumentException("block " + blockCount + " payload is " + b.payloadLength()
              + " bytes; maxBlockBytes=" + config.maxBlockBytes());
        }
        maxBytes += RecordFormat.recordLength(b.payload().length, put.idempotent());
        blockCount++;
      }
    }
    if (maxBytes > Integer.MAX_VALUE - 16) {
      throw new IllegalArgumentException("blocks total " + maxBytes + " bytes; one append holds at most "
          + (Integer.MAX_VALUE - 16));
    }

    appendLock.lock();
    try {
      long nowMs = clock.millis();
      // before deciding: a roll waits for the pipeline to drain, which changes what is pending
      LogSegment seg = segmentForAppend((int) maxBytes, nowMs);
      producers.expire(appendTimestampMs);
      PutResult[] results = new PutResult[puts.size()];
      boolean[] write = new boolean[puts.size()];
      List<Long> tentative = new ArrayList<>(); // producers given a pending put by this call
      long batchBytes = 0;
      long next = writeOffset;
      long[] putFirst = new long[puts.size()];
      for (int p = 0; p < puts.size(); p++) {
        Put put = puts.get(p);
        if (put.idempotent()) {
          ProducerState.Decision d = decide(put);
          if (d instanceof ProducerState.Duplicate dup) {
            results[p] = new PutResult(dup.stored().firstOffset(), true, null);
            continue;
          }
          if (d instanceof ProducerState.OutOfOrder ooo) {
            results[p] = new PutResult(-1, false, ooo.message());
            continue;
          }
        }
        write[p] = true;
        putFirst[p] = next;
        for (BlockToAppend b : put.blocks()) {
          batchBytes += RecordFormat.recordLength(b.payloadLength(), put.idempotent());
          next = Math.addExact(next, b.messageCount());
        }
        if (put.idempotent()) {
          pendingProducers.computeIfAbsent(put.producerId(), k -> new java.util.ArrayDeque<>())
              .addLast(new PendingPut(put.sequence(), putFirst[p], next));
          tentative.add(put.producerId());
        }
      }
      if (batchBytes == 0) { // nothing new: only duplicates and refusals
        Group g = new Group(seg, null, null, null, seg.writtenBytes(), writeOffset, appendTimestampMs, results, puts,
            putFirst, write);
        if (pending.isEmpty()) {
          g.future.complete(results);
        } else {
          pending.addLast(g); // answered once the appends it may repeat are durable
        }
        return g;
      }

      long first = writeOffset;
      byte[] batch = new byte[(int) batchBytes];
      int records = 0;
      for (int p = 0; p < puts.size(); p++) {
        if (write[p]) records += puts.get(p).blocks().size();
      }
      long[] offsets = new long[records];
      int[] positions = new int[records];
      int record = 0;
      next = first;
      int pos = 0;
      for (int p = 0; p < puts.size(); p++) {
        if (!write[p]) continue;
        Put put = puts.get(p);
        int n = put.blocks().size();
        for (int i = 0; i < n; i++) {
          BlockToAppend b = put.blocks().get(i);
          RecordFormat.ProducerTag tag = put.idempotent()
              ? new RecordFormat.ProducerTag(put.producerId(), put.sequence(), n - 1 - i) : null;
          offsets[record] = next;
          positions[record++] = pos;
          pos += RecordFormat.encode(batch, pos, next, appendTimestampMs, b, tag);
          next = Math.addExact(next, b.messageCount());
        }
      }
      try {
        seg.write(batch, nowMs);
      } catch (IOException | RuntimeException | Error e) {
        for (int i = tentative.size() - 1; i >= 0; i--) {
          java.util.ArrayDeque<PendingPut> q = pendingProducers.get(tentative.get(i));
          q.pollLast();
          if (q.isEmpty()) pendingProducers.remove(tentative.get(i));
        }
        if (!flushing) throw appendFailed(seg, first, e);
        // the flusher fails the appends before this one that are not durable yet, then replaces
        // the segment; appends wait for that in segmentForAppend
        writeFailure = e;
        if (e instanceof IOException io) throw io;
        throw new IOException("append to " + seg.path() + " at offset " + first + " failed", e);
      }
      writeOffset = next;
      Group g = new Group(seg, batch, offsets, positions, seg.writtenBytes(), next, appendTimestampMs, results, puts,
          putFirst, write);
      pending.addLast(g);
      if (!flushing) {
        flushing = true;
        g.runFlusher = true;
      }
      return g;
    } finally {
      appendLock.unlock();
    }
  }

  /**
   * The flusher of this log: while appends are pending, flushes the active segment and completes,
   * in order, every append the flush covered; on a failure fails every pending append and starts a
   * new segment. At most one runs per log ({@code flushing}). Run inline by a synchronous {@link
   * #appendPuts} for its own append ({@code mine}; it hands the rest to {@link #flushThreads}) or
   * on {@link #flushThreads}.
   */
  private void flushLoop(Group mine) {
    while (true) {
      LogSegment seg;
      long target;
      List<Group> failed = null;
      Throwable failure = null;
      appendLock.lock();
      try {
        if (writeFailure != null) {
          failed = failPipeline(active(), writeFailure);
          failure = failOutcome;
        } else if (pending.isEmpty()) {
          flushing = false;
          drained.signalAll();
          return;
        } else if (mine != null && mine.future.isDone()) {
          flushThreads.execute(() -> flushLoop(null)); // still flushing: the pool thread continues
          return;
        }
        seg = pending.isEmpty() ? null : pending.peekFirst().seg;
        target = seg == null ? 0 : seg.writtenBytes();
      } finally {
        appendLock.unlock();
      }
      if (failed != null) {
        completeFailed(failed, failure);
        continue;
      }
      try {
        seg.flush();
      } catch (IOException | RuntimeException | Error e) {
        failure = e;
      }
      List<Group> done = new ArrayList<>();
      appendLock.lock();
      try {
        if (failure == null) {
          while (!pending.isEmpty() && pending.peekFirst().endBytes <= target && pending.peekFirst().seg == seg) {
            Group g = pending.pollFirst();
            publish(g);
            done.add(g);
          }
        } else {
          failed = failPipeline(seg, failure);
          failure = failOutcome;
        }
      } finally {
        appendLock.unlock();
      }
      for (Group g : done) g.future.complete(g.results);
      if (failed != null) completeFailed(failed, failure);
    }
  }

  /** Publishes a durable append to readers and the producer state, in append order. Append lock held. */
  private void publish(Group g) {
    if (g.batch != null) {
      g.seg.publish(g.batch, g.offsets, g.positions, g.nextOffset, g.appendTimestampMs);
      lastAppendTimestampMs = Math.max(lastAppendTimestampMs, g.appendTimestampMs);
      endOffset = g.nextOffset;
    }
    for (int p = 0; p < g.puts.size(); p++) {
      if (!g.written[p]) continue;
      Put put = g.puts.get(p);
      long putNext = g.putFirst[p];
      for (BlockToAppend b : put.blocks()) putNext += b.messageCount();
      if (put.idempotent()) {
        producers.record(put.producerId(), put.sequence(), g.putFirst[p], putNext, g.appendTimestampMs);
        java.util.ArrayDeque<PendingPut> q = pendingProducers.get(put.producerId());
        if (q != null) {
          q.pollFirst();
          if (q.isEmpty()) pendingProducers.remove(put.producerId());
        }
      }
      g.results[p] = new PutResult(g.putFirst[p], false, null);
    }
  }

  /**
   * After a failed flush or write: every pending append fails (none was acknowledged), offsets
   * continue at the end offset of the last completed append, and a new segment starts there.
   * Append lock held; returns the appends to fail (outside the lock) and sets what they fail with.
   */
  private List<Group> failPipeline(LogSegment seg, Throwable failure) {
    List<Group> failed = new ArrayList<>(pending);
    pending.clear();
    pendingProducers.clear();
    writeOffset = endOffset;
    writeFailure = null;
    Throwable outcome;
    try {
      outcome = active() == seg ? appendFailed(seg, endOffset, failure) : failure;
    } catch (RuntimeException | Error e) {
      outcome = e;
    }
    failOutcome = outcome;
    return failed;
  }

  private static void completeFailed(List<Group> failed, Throwable outcome) {
    for (Group g : failed) g.future.completeExceptionally(outcome);
  }

  /**
   * The decision for an idempotent put, counting the puts of the pipeline (written, not yet durable)
   * and of this call accepted before it as if they were stored. Append lock held.
   */
  private ProducerState.Decision decide(Put put) {
    java.util.ArrayDeque<PendingPut> earlier = pendingProducers.get(put.producerId());
    if (earlier == null || earlier.isEmpty()) return producers.check(put.producerId(), put.sequence());
    int last = earlier.peekLast().sequence();
    if (put.sequence() == last + 1) return new ProducerState.Append();
    for (PendingPut e : earlier) {
      if (e.sequence() == put.sequence()) {
        return new ProducerState.Duplicate(new ProducerState.StoredPut(put.sequence(), e.firstOffset(),
            e.nextOffset()));
      }
    }
    if (put.sequence() < earlier.peekFirst().sequence()) return producers.check(put.producerId(), put.sequence());
    return new ProducerState.OutOfOrder("producer " + put.producerId() + " sent sequence " + put.sequence()
        + " but the last one accepted is " + last + "; expected " + (last + 1));
  }

  /** Producers whose idempotent-produce state this log holds (see {@link ProducerState}). */
  public int producersTracked() {
    appendLock.lock();
    try {
      return producers.size();
    } finally {
      appendLock.unlock();
    }
  }

  /**
   * The active segment, after rolling it by size or age or replacing it after a failure; checks
   * that the log is open and owned. A roll or a replacement first waits until the pipeline has
   * drained (no append pending, no flush in flight), so that a segment is sealed only with every
   * append in it completed. Append lock held (released while waiting).
   */
  private LogSegment segmentForAppend(int batchBytes, long nowMs) throws IOException {
    while (true) {
      ensureOpen();
      owner.ensureNotFenced();
      LogSegment a = active();
      boolean replace = !a.isWritable() || writeFailure != null;
      boolean full = !replace && a.writtenBytes() > 0 && a.writtenBytes() + batchBytes > config.segmentBytes();
      boolean old = !replace && a.writtenBytes() > 0 && nowMs - a.firstAppendClockMs() >= config.segmentMs();
      if (!replace && !full && !old) return a;
      if (flushing) {
        drained.awaitUninterruptibly();
        continue;
      }
      if (replace) {
        LOG.info("Starting a new segment of {} at offset {} (the last append or roll failed)", dir, endOffset);
      } else if (full) {
        LOG.debug("Rolling {} at offset {}: {} + {} bytes > segmentBytes={}", dir, endOffset, a.validBytes(),
            batchBytes, config.segmentBytes());
      } else {
        LOG.debug("Rolling {} at offset {}: first append {} ms ago >= segmentMs={}", dir, endOffset,
            nowMs - a.firstAppendClockMs(), config.segmentMs());
      }
      return startNewActiveSegment();
    }
  }

  /** Waits until no append is pending and no flush in flight. Append lock held (released while waiting). */
  private void drain() {
    while (flushing) drained.awaitUninterruptibly();
  }

  /**
   * Seals the active segment and starts a new, empty one at {@link #endOffset()}; an active segment
   * without records is replaced by a fresh file instead (created before the old one is deleted, so
   * the directory always names the end offset). Checks the ownership first. If creating the new
   * file fails, the old segment stays last without a writer and the next append calls this again.
   * Append lock held.
   */
  private LogSegment startNewActiveSegment() throws IOException {
    owner.check();
    LogSegment old = active();
    List<LogSegment> list = new ArrayList<>(segments);
    if (old.hasRecords()) {
      old.sealOn(sealThreads);
      LogSegment fresh = owner.createSegment(endOffset, config, cache);
      list.add(fresh);
      segments = List.copyOf(list);
      recordNextOffset(endOffset, false);
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
    return read(offset, maxMessages, maxBytes, null);
  }

  /**
   * As {@link #read(long, int, int)}; the blocks are read into buffers of {@code lease} (if not
   * null) while its pool has some to spare, and are valid only until it is released.
   */
  @Override
  public List<StoredBlock> read(long offset, int maxMessages, int maxBytes, ReadLease lease)
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
      return readBlocks(dir, segs, end, offset, maxMessages, maxBytes, lease);
    } finally {
      segmentsLock.readLock().unlock();
    }
  }

  @Override
  public long offsetForTimestamp(long timestampMs) throws IOException {
    segmentsLock.readLock().lock();
    try {
      ensureOpen();
      owner.ensureNotFenced();
      long end = endOffset;
      return offsetForTimestamp(segments, end, timestampMs);
    } finally {
      segmentsLock.readLock().unlock();
    }
  }

  /**
   * {@link #offsetForTimestamp(long)} over {@code segs} below {@code end}, shared with the read-only
   * {@link PartitionReader}: the first segment whose newest append timestamp reaches the time holds
   * the answer (every message of the segments before it is older).
   */
  static long offsetForTimestamp(List<LogSegment> segs, long end, long timestampMs) throws IOException {
    for (LogSegment seg : segs) {
      if (!seg.hasRecords() || seg.baseOffset() >= end || seg.maxAppendTimestampMs() < timestampMs) continue;
      long offset = seg.offsetForTimestamp(timestampMs, end);
      if (offset >= 0) return offset;
    }
    return end;
  }

  /**
   * The read of {@link #read} over {@code segs} (ascending, covering {@code offset}) below {@code
   * end}, shared with the read-only {@link PartitionReader}; the caller checked the range and
   * keeps the segments' inputs open meanwhile. {@code lease}: see {@link #read(long, int, int,
   * ReadLease)}; may be null.
   */
  /** Read ahead beyond twice the bytes an answer may still take: see {@link #readBlocks}. */
  private static final long READ_AHEAD_SLACK_BYTES = 64 * 1024;

  static List<StoredBlock> readBlocks(Path dir, List<LogSegment> segs, long end, long offset, int maxMessages,
      int maxBytes, ReadLease lease) throws IOException {
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
      long limit = seg.validBytes();
      long from = Math.min(seg.readStart(target), limit);
      // read ahead about what the answer may take: its payload bytes, room for the records' headers
      // and for the records before the target that the cursor skips
      long wantedEnd = from + Math.min(Long.MAX_VALUE / 4, 2L * (maxBytes - bytes) + READ_AHEAD_SLACK_BYTES);
      LogSegment.RecordCursor c = seg.cursor(from, limit, wantedEnd, lease);
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
      if (!flushing && SegmentRetention.activeExpired(segs, expired, cutoffMs)) {
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
      drain();
      ensureOpen();
      owner.ensureNotFenced();
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
      if (closed) return;
      closed = true; // no new appends; the pending ones complete (or fail) first
      drain();
      segmentsLock.writeLock().lock();
      try {
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
          recordNextOffset(endOffset, true);
        } else {
          active().abortWriter(); // a fenced owner writes no file, not even an index
        }
        for (LogSegment s : segments) {
          s.awaitSealed(); // a rolled segment's index is on disk when close returns
          s.closeInput();
        }
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
      closed = true;
      drain();
      segmentsLock.writeLock().lock();
      try {
        for (LogSegment s : segments) {
          s.awaitSealed(); // its index write would recreate the directory
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

  private void ensureOpen() throws PartitionLogClosedException {
    if (closed) throw new PartitionLogClosedException("partition log " + dir + " is closed");
  }

  @Override
  public String toString() {
    return "PartitionLog[" + dir + ", offsets [" + startOffset() + ", " + endOffset + "), " + segments.size()
        + " segments]";
  }
}
