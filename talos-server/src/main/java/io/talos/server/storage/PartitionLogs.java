package io.talos.server.storage;

import java.io.Closeable;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LeaseRecoverable;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * All partition logs of a server under one root directory, opened lazily:
 *
 * <pre>
 * &lt;root&gt;/
 *   &lt;encoded topic resource name&gt;/     e.g. CL123.23orders.23a1b2 for CL123#orders#a1b2
 *     0/                                a {@link PartitionLog} directory per partition id
 *     1/
 * </pre>
 *
 * <p>Directory names encode a topic resource name reversibly ({@link #encodeDirName}): each UTF-8
 * byte of {@code [A-Za-z0-9_-]} stays as it is, every other byte (such as {@code '#'}, {@code '.'}
 * or {@code '/'}) becomes {@code '.'} followed by two upper-case hex digits. The result is a
 * single safe path element on every file system (no {@code '%'}, {@code ':'} or {@code '/'},
 * never {@code "."} or {@code ".."}).
 *
 * <p>Thread-safe. Each partition is opened (recovered) at most once, by the first caller of
 * {@link #log}; concurrent callers for the same partition wait for it, callers for other
 * partitions do not. Callers must not use a topic while {@link #deleteTopic deleting} it: a log
 * opened concurrently with its deletion may be recreated (the retention pass is
 * safe: it skips partitions deleted meanwhile). The file system is not owned: {@link
 * #close} leaves it open.
 *
 * <p>All logs share one {@link TailCache} of recent appends. On hdfs, opening a log takes the
 * partition over from any other server (see {@link PartitionLog}); a log that another server took
 * over later stays here {@link PartitionLog#isFenced() fenced}, failing every append and read,
 * until this server restarts.
 *
 * <p><b>Reads never take a partition over.</b> {@link #readable} hands out the writer's log when
 * this server has it open (or is opening it), else a read-only {@link PartitionReader} of the
 * directory, which claims no owner epoch, recovers no lease and writes no file, so a read on
 * this server never fences the partition's writer on another. Only {@link #log} (appends,
 * retention, reset) opens a log for writing; once it has, the partition's read-only view is
 * closed and reads use the log.
 *
 * <p><b>Bounded resources.</b> Open logs hold file descriptors (an input stream per segment read
 * and the active segment's output stream), so at most {@link Limits#maxOpenLogs} logs and about
 * {@link Limits#maxOpenFiles} files (counted as segments + 1 per open log) stay open, read-only
 * views counted alike (a view as an open log, its segments as files): opening one more closes the
 * least recently used others, and {@link #runEvictionOnce} (run periodically by
 * the server, directly by tests) also closes logs unused for {@link Limits#idleCloseMs} and
 * fenced ones, and views unused as long. A closed log reopens on its next use (recovery starts a new segment if its newest
 * one held records). A caller still holding a log closed meanwhile gets an IOException saying it
 * is closed (nothing of that call was stored) and fetches it again from here. A fenced partition
 * stays refused ({@link PartitionFencedException}) until restart, as before, without holding
 * files. Offsets of partitions not open are answered by {@link #offsets} without opening them.
 *
 * <p><b>Opens off the request threads.</b> With {@link Limits#openThreads} &gt; 0, opens (and so
 * hdfs lease recovery, which may take {@code leaseRecoveryTimeoutMs}) run on a dedicated bounded
 * executor; a caller waits at most until its deadline and then gets a {@link
 * StorageDeadlineException} while the open goes on and serves the next request. With 0, the caller
 * opens on its own thread (tests that step by hand).
 */
public final class PartitionLogs implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(PartitionLogs.class);
  private static final char[] HEX = "0123456789ABCDEF".toCharArray();

  private record TopicPartition(String topicResourceName, int partitionId) {}

  /**
   * Bounds of the open logs; see the class comment.
   *
   * @param maxOpenLogs most logs open at once
   * @param maxOpenFiles most files held by open logs (segments + 1 per log), approximately
   * @param idleCloseMs a log unused this long is closed by {@link #runEvictionOnce}; 0 never
   * @param openThreads threads opening logs; 0 opens on the caller's thread
   * @param maxPendingOpens opens waiting for an open thread; beyond it an open is refused at once
   * @param defaultDeadlineMs how long a caller without a deadline waits for an open
   */
  public record Limits(int maxOpenLogs, int maxOpenFiles, long idleCloseMs, int openThreads, int maxPendingOpens,
      long defaultDeadlineMs, int flushThreads) {
    public static final int DEFAULT_FLUSH_THREADS = 64;
    public static final Limits UNBOUNDED = new Limits(Integer.MAX_VALUE, Integer.MAX_VALUE, 0, 0, 0, Long.MAX_VALUE);

    public Limits {
      if (maxOpenLogs < 1 || maxOpenFiles < 1 || idleCloseMs < 0 || openThreads < 0 || maxPendingOpens < 0
          || defaultDeadlineMs < 1 || flushThreads < 1) {
        throw new IllegalArgumentException("invalid limits " + this);
      }
    }

    /** Limits with {@link #DEFAULT_FLUSH_THREADS} flush threads. */
    public Limits(int maxOpenLogs, int maxOpenFiles, long idleCloseMs, int openThreads, int maxPendingOpens,
        long defaultDeadlineMs) {
      this(maxOpenLogs, maxOpenFiles, idleCloseMs, openThreads, maxPendingOpens, defaultDeadlineMs,
          DEFAULT_FLUSH_THREADS);
    }
  }

  private final FileSystem fs;
  private final Path root;
  private final LogConfig config;
  private final Clock clock;
  private final TailCache tailCache;
  private final NextOffsetStore nextOffsets;
  /** The logs' view of the given next-offset store: rolls raise it without waiting; null for NONE. */
  private final DeferredNextOffsets deferredNextOffsets;
  private final Map<TopicPartition, CompletableFuture<PartitionLog>> logs = new ConcurrentHashMap<>();
  /** Read-only views of partitions this server reads but has no log open for. */
  private final Map<TopicPartition, CompletableFuture<PartitionReader>> readers = new ConcurrentHashMap<>();
  private final AtomicInteger readersOpenedCount = new AtomicInteger();
  /** Exclusive for {@link #deleteTopic}; shared by retention, so it never reopens a topic being deleted. */
  private final ReentrantReadWriteLock deletion = new ReentrantReadWriteLock();
  /**
   * Resource names deleted by this instance. A request that resolved its topic just before the
   * deletion must not recreate the partition afterwards (and be acknowledged into a directory
   * that the next start deletes as an orphan). Names are never reused, so entries never expire.
   */
  private final Set<String> deletedTopics = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;
  private final Limits limits;
  /** When each open (or opening) log or view was last handed out, on {@link #clock}. */
  private final Map<TopicPartition, Long> lastUseMs = new ConcurrentHashMap<>();
  /** Offsets of partitions not open: kept when a log is closed, or read from the listing. */
  private final Map<TopicPartition, PartitionOffsets> closedOffsets = new ConcurrentHashMap<>();
  /** Partitions another server took over, evicted: refused until restart, as if still fenced. */
  private final Map<TopicPartition, String> fenced = new ConcurrentHashMap<>();
  /** Null when opens run on the caller's thread. */
  private final ThreadPoolExecutor openExecutor;
  /** Where the open logs' flushes run ({@link Limits#flushThreads}); shut down after the logs closed. */
  private final ThreadPoolExecutor flushExecutor;
  /** Closes rolled segments' writers and writes their index files, off the puts' threads. */
  private final ThreadPoolExecutor sealExecutor;
  private final AtomicInteger opensCount = new AtomicInteger();
  private final AtomicInteger evictionsCount = new AtomicInteger();
  /** Asked before every write use of a log; see {@link PartitionWriteGate}. */
  private volatile PartitionWriteGate writeGate = PartitionWriteGate.ALWAYS;

  /**
   * @param fs where the logs live; a checksummed {@link org.apache.hadoop.fs.LocalFileSystem} is
   *     replaced by its raw file system (see {@link #fileSystemFor})
   */
  public PartitionLogs(FileSystem fs, Path root, LogConfig config, Clock clock) {
    this(fs, root, config, clock, 0);
  }

  /**
   * @param tailCacheBytes bound of the {@link TailCache} of recent appends shared by all logs of
   *     this server; 0 disables it
   */
  public PartitionLogs(FileSystem fs, Path root, LogConfig config, Clock clock, long tailCacheBytes) {
    this(fs, root, config, clock, tailCacheBytes, Limits.UNBOUNDED, NextOffsetStore.NONE);
  }

  /** @param limits bounds of the open logs and how they are opened (see the class comment) */
  public PartitionLogs(FileSystem fs, Path root, LogConfig config, Clock clock, long tailCacheBytes, Limits limits) {
    this(fs, root, config, clock, tailCacheBytes, limits, NextOffsetStore.NONE);
  }

  /**
   * @param nextOffsets where each partition's next offset is recorded (the metadata store): a log
   *     never opens below it (see {@link PartitionDataMissingException})
   */
  public PartitionLogs(FileSystem fs, Path root, LogConfig config, Clock clock, long tailCacheBytes,
      NextOffsetStore nextOffsets) {
    this(fs, root, config, clock, tailCacheBytes, Limits.UNBOUNDED, nextOffsets);
  }

  /**
   * @param limits bounds of the open logs and how they are opened (see the class comment)
   * @param nextOffsets where each partition's next offset is recorded (the metadata store): a log
   *     never opens below it (see {@link PartitionDataMissingException})
   */
  public PartitionLogs(FileSystem fs, Path root, LogConfig config, Clock clock, long tailCacheBytes, Limits limits,
      NextOffsetStore nextOffsets) {
    this.limits = Objects.requireNonNull(limits, "limits");
    Objects.requireNonNull(nextOffsets, "nextOffsets");
    this.deferredNextOffsets = nextOffsets == NextOffsetStore.NONE ? null
        : new DeferredNextOffsets(nextOffsets).start("talos-next-offsets");
    this.nextOffsets = deferredNextOffsets == null ? nextOffsets : deferredNextOffsets;
    this.flushExecutor = PartitionLog.daemonPool(limits.flushThreads(), "talos-log-flush-");
    this.sealExecutor = PartitionLog.daemonPool(1, "talos-log-seal-");
    if (limits.openThreads() > 0) {
      AtomicInteger n = new AtomicInteger();
      this.openExecutor = new ThreadPoolExecutor(limits.openThreads(), limits.openThreads(), 60, TimeUnit.SECONDS,
          new LinkedBlockingQueue<>(Math.max(1, limits.maxPendingOpens())), r -> {
            Thread t = new Thread(r, "talos-log-open-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
          });
      openExecutor.allowCoreThreadTimeOut(true);
    } else {
      this.openExecutor = null;
    }
    this.fs = PartitionLog.rawIfLocal(Objects.requireNonNull(fs, "fs"));
    this.root = Objects.requireNonNull(root, "root");
    this.config = Objects.requireNonNull(config, "config");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.tailCache = tailCacheBytes == 0 ? TailCache.DISABLED : new TailCache(tailCacheBytes);
  }

  /**
   * Sets who decides which partitions this server may write (a cluster node: the ones it owns).
   * Set before the first request; {@link PartitionWriteGate#ALWAYS} by default.
   */
  public void writeGate(PartitionWriteGate gate) {
    this.writeGate = Objects.requireNonNull(gate, "gate");
  }

  /**
   * Gives a partition up (a cluster node that no longer owns it): closes its log, sealing the
   * active segment unless another server took it over already (waiting for the append under way,
   * if any), and forgets its fenced state and kept offsets, so that a later {@link #log} (after
   * the node claims it again) opens it afresh with recovery. Read-only views stay. Thread-safe.
   *
   * @return whether a log was open
   */
  public boolean release(String topicResourceName, int partitionId) {
    TopicPartition key = new TopicPartition(topicResourceName, partitionId);
    fenced.remove(key);
    closedOffsets.remove(key);
    CompletableFuture<PartitionLog> f = logs.get(key);
    if (f == null) return false;
    if (!f.isDone()) {
      try {
        f.get(limits.defaultDeadlineMs() == Long.MAX_VALUE ? 60_000 : limits.defaultDeadlineMs(),
            TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      } catch (ExecutionException | TimeoutException e) {
        logs.remove(key, f); // failed open, or still recovering: the next claim opens again
        return false;
      }
    }
    if (f.isCompletedExceptionally()) {
      logs.remove(key, f);
      return false;
    }
    deletion.readLock().lock();
    try {
      if (!logs.remove(key, f)) return false;
      lastUseMs.remove(key);
      f.join().close();
      fenced.remove(key);
      LOG.info("Released partition {} of {}: closed its log", partitionId, topicResourceName);
      return true;
    } finally {
      deletion.readLock().unlock();
    }
  }

  /**
   * Whether this server's log of the partition was taken over by another server (open and fenced,
   * or evicted as fenced) and stays refused until {@link #release}d.
   */
  public boolean isFenced(String topicResourceName, int partitionId) {
    TopicPartition key = new TopicPartition(topicResourceName, partitionId);
    if (fenced.containsKey(key)) return true;
    CompletableFuture<PartitionLog> f = logs.get(key);
    return f != null && f.isDone() && !f.isCompletedExceptionally() && f.join().isFenced();
  }

  /** The cache of recent appends shared by this server's logs. */
  public TailCache tailCache() {
    return tailCache;
  }

  /** The file system the logs live on (not owned). */
  public FileSystem fileSystem() {
    return fs;
  }

  /**
   * A new (uncached) file system for the data root; the caller owns and closes it. {@code file:}
   * URIs and URIs without a scheme get a {@link RawLocalFileSystem}: no {@code .crc} side files,
   * and its streams map hflush to {@code flush} and hsync to {@code flush} + {@code fsync} (checked
   * in hadoop-common 3.4.1: {@code FSDataOutputStream -> BufferedIOStatisticsOutputStream ->
   * LocalFSFileOutputStream.hsync -> FileDescriptor.sync}), creating files 0600 and directories
   * 0700 ({@link OwnerOnlyLocalFileSystem}). Other schemes go to {@link
   * FileSystem#newInstance(URI, Configuration)}.
   */
  public static FileSystem fileSystemFor(URI root, Configuration conf) throws IOException {
    return fileSystemFor(root, conf, 0, false);
  }

  /**
   * As {@link #fileSystemFor(URI, Configuration)}, and on the local file system with a {@link
   * PageCacheDropBehind} keeping {@code pageCacheWindowBytes} behind the end of each file in the
   * page cache; 0, or a machine where the native calls are unavailable (logged once), leaves the
   * page cache to the kernel. With {@code pinExtentTrees}, each new segment file gets its {@link
   * ExtentTreePin anchors}. Both ignored for other schemes.
   */
  public static FileSystem fileSystemFor(URI root, Configuration conf, long pageCacheWindowBytes,
      boolean pinExtentTrees) throws IOException {
    if (root.getScheme() == null || "file".equals(root.getScheme())) {
      PageCacheDropBehind dropBehind = null;
      if (pageCacheWindowBytes > 0) {
        String why = PageCacheDropBehind.unavailableReason();
        if (why == null) {
          dropBehind = new PageCacheDropBehind(pageCacheWindowBytes, true);
        } else {
          LOG.warn("Page-cache drop-behind is unavailable, the page cache is left to the kernel: {}", why);
        }
      }
      RawLocalFileSystem raw = new OwnerOnlyLocalFileSystem(dropBehind, pinExtentTrees);
      try {
        raw.initialize(URI.create("file:///"), conf);
      } catch (IOException | RuntimeException e) {
        if (dropBehind != null) dropBehind.close(); // its thread would outlive the failed start
        throw e;
      }
      return raw;
    }
    return FileSystem.newInstance(root, conf);
  }

  /**
   * The log of one partition, opening (and recovering, or creating) it on first use; a caller
   * without a deadline waits at most {@link Limits#defaultDeadlineMs} for the open.
   */
  public PartitionLog log(String topicResourceName, int partitionId) throws IOException {
    return log(topicResourceName, partitionId, saturatedAdd(clock.millis(), limits.defaultDeadlineMs()));
  }

  /**
   * The log of one partition, opening it on first use, waiting for the open at most until {@code
   * deadlineMs} (on this instance's clock).
   *
   * @throws StorageDeadlineException the open did not finish by the deadline (it goes on)
   * @throws PartitionFencedException another server took the partition over
   * @throws TopicDeletedException the topic was deleted by this instance
   */
  public PartitionLog log(String topicResourceName, int partitionId, long deadlineMs) throws IOException {
    ensureOpen();
    TopicPartition key = new TopicPartition(Objects.requireNonNull(topicResourceName, "topicResourceName"),
        partitionId);
    if (partitionId < 0) throw new IllegalArgumentException("partitionId=" + partitionId + " must be >= 0");
    writeGate.checkWritable(topicResourceName, partitionId);
    String fencedBy = fenced.get(key);
    if (fencedBy != null) throw new PartitionFencedException(fencedBy);
    CompletableFuture<PartitionLog> existing = logs.get(key);
    if (existing != null) lastUseMs.put(key, clock.millis());
    if (existing == null) {
      // Under the deletion read lock: either deleteTopic has run (and the name is in
      // deletedTopics) or it will find (and wait for) the log opened here.
      CompletableFuture<PartitionLog> f;
      deletion.readLock().lock();
      try {
        if (deletedTopics.contains(topicResourceName)) throw new TopicDeletedException(topicResourceName);
        lastUseMs.put(key, clock.millis());
        f = openOrGet(key, false);
      } finally {
        deletion.readLock().unlock();
      }
      return await(f, key, deadlineMs);
    }
    return await(existing, key, deadlineMs);
  }

  /** The future of the key's log, starting its open if none is under way. */
  private CompletableFuture<PartitionLog> openOrGet(TopicPartition key, boolean reset) throws IOException {
    CompletableFuture<PartitionLog> existing = logs.get(key);
    if (existing != null) return existing;
    CompletableFuture<PartitionLog> mine = new CompletableFuture<>();
    existing = logs.putIfAbsent(key, mine);
    if (existing != null) return existing;
    if (openExecutor == null) {
      doOpen(key, mine, reset);
    } else {
      try {
        openExecutor.execute(() -> doOpen(key, mine, reset));
      } catch (RejectedExecutionException e) {
        logs.remove(key, mine);
        IOException busy = new IOException("too many partitions are being opened (" + limits.maxPendingOpens()
            + " waiting, storage.open.pending.max); retry later");
        mine.completeExceptionally(busy);
        throw busy;
      }
    }
    return mine;
  }

  private void doOpen(TopicPartition key, CompletableFuture<PartitionLog> mine, boolean reset) {
    PartitionLog log;
    try {
      log = PartitionLog.open(fs, partitionDir(key.topicResourceName(), key.partitionId()), config, clock, tailCache,
          nextOffsets, key.topicResourceName(), key.partitionId(), reset);
      log.flushOn(flushExecutor);
      log.sealOn(sealExecutor);
    } catch (IOException | RuntimeException | Error e) {
      logs.remove(key, mine);
      mine.completeExceptionally(e);
      return;
    }
    opensCount.incrementAndGet();
    closedOffsets.remove(key); // the open log answers now; its close stores fresh ones
    lastUseMs.putIfAbsent(key, clock.millis());
    mine.complete(log);
    CompletableFuture<PartitionReader> view = readers.remove(key); // reads use the log from now on
    if (view != null) view.thenAccept(PartitionReader::close);
    if (closed) { // close() ran while this log was opening and may not have seen it
      logs.remove(key, mine);
      log.close();
      return;
    }
    evictOverLimits(key);
  }

  private <T> T await(CompletableFuture<T> f, TopicPartition key, long deadlineMs) throws IOException {
    try {
      if (f.isDone()) return f.get();
      long waitMs = deadlineMs - clock.millis();
      if (waitMs <= 0) throw new TimeoutException();
      return f.get(waitMs, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while waiting for " + key + " to open");
    } catch (TimeoutException e) {
      throw new StorageDeadlineException("partition " + key.partitionId() + " of " + key.topicResourceName()
          + " is still being opened (recovering) and the request's deadline has passed; retry");
    } catch (ExecutionException e) {
      if (e.getCause() instanceof PartitionFencedException pf) throw new PartitionFencedException(pf.getMessage());
      if (e.getCause() instanceof PartitionDataMissingException missing) {
        throw new PartitionDataMissingException(missing.getMessage());
      }
      throw new IOException("could not open the log of " + key + ": " + e.getCause().getMessage(), e.getCause());
    }
  }

  /** Waits without a deadline: for deletion and close, which must see the open's outcome. */
  private static <T> T awaitDone(CompletableFuture<T> f, TopicPartition key) throws IOException {
    try {
      return f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while waiting for " + key + " to open");
    } catch (ExecutionException e) {
      if (e.getCause() instanceof PartitionDataMissingException missing) {
        throw new PartitionDataMissingException(missing.getMessage());
      }
      throw new IOException("could not open the log of " + key + ": " + e.getCause().getMessage(), e.getCause());
    }
  }

  /**
   * What a read of one partition uses: the partition's log if this server has it open (or is
   * opening it), else its read-only {@link PartitionReader}, opened on first use (off the request
   * thread like a log, see the class comment) and never claiming the partition. Waits at most
   * until {@code deadlineMs} (on this instance's clock).
   *
   * @throws StorageDeadlineException the open did not finish by the deadline (it goes on)
   * @throws PartitionFencedException this server's log of the partition was taken over (refused
   *     until restart, reads included, as before)
   * @throws PartitionDataMissingException the partition ends below its recorded next offset
   * @throws TopicDeletedException the topic was deleted by this instance
   */
  public ReadablePartition readable(String topicResourceName, int partitionId, long deadlineMs) throws IOException {
    ensureOpen();
    TopicPartition key = new TopicPartition(Objects.requireNonNull(topicResourceName, "topicResourceName"),
        partitionId);
    if (partitionId < 0) throw new IllegalArgumentException("partitionId=" + partitionId + " must be >= 0");
    String fencedBy = fenced.get(key);
    if (fencedBy != null) throw new PartitionFencedException(fencedBy);
    CompletableFuture<PartitionLog> log = logs.get(key);
    if (log != null) {
      lastUseMs.put(key, clock.millis());
      return await(log, key, deadlineMs);
    }
    CompletableFuture<PartitionReader> f = readers.get(key);
    if (f == null) {
      deletion.readLock().lock();
      try {
        if (deletedTopics.contains(topicResourceName)) throw new TopicDeletedException(topicResourceName);
        f = openReaderOrGet(key);
      } finally {
        deletion.readLock().unlock();
      }
    }
    lastUseMs.put(key, clock.millis());
    return await(f, key, deadlineMs);
  }

  /** As {@link #readable(String, int, long)} with the default deadline. */
  public ReadablePartition readable(String topicResourceName, int partitionId) throws IOException {
    return readable(topicResourceName, partitionId, saturatedAdd(clock.millis(), limits.defaultDeadlineMs()));
  }

  /** The future of the key's read-only view, starting its open if none is under way. */
  private CompletableFuture<PartitionReader> openReaderOrGet(TopicPartition key) throws IOException {
    CompletableFuture<PartitionReader> existing = readers.get(key);
    if (existing != null) return existing;
    CompletableFuture<PartitionReader> mine = new CompletableFuture<>();
    existing = readers.putIfAbsent(key, mine);
    if (existing != null) return existing;
    if (openExecutor == null) {
      doOpenReader(key, mine);
    } else {
      try {
        openExecutor.execute(() -> doOpenReader(key, mine));
      } catch (RejectedExecutionException e) {
        readers.remove(key, mine);
        IOException busy = new IOException("too many partitions are being opened (" + limits.maxPendingOpens()
            + " waiting, storage.open.pending.max); retry later");
        mine.completeExceptionally(busy);
        throw busy;
      }
    }
    return mine;
  }

  private void doOpenReader(TopicPartition key, CompletableFuture<PartitionReader> mine) {
    PartitionReader reader;
    try {
      reader = PartitionReader.open(fs, partitionDir(key.topicResourceName(), key.partitionId()), config, clock,
          config.readerRefreshMs(), nextOffsets, key.topicResourceName(), key.partitionId());
    } catch (IOException | RuntimeException | Error e) {
      readers.remove(key, mine);
      mine.completeExceptionally(e);
      return;
    }
    readersOpenedCount.incrementAndGet();
    lastUseMs.putIfAbsent(key, clock.millis());
    mine.complete(reader);
    if (closed) {
      readers.remove(key, mine);
      reader.close();
      return;
    }
    evictOverLimits(key);
  }

  /**
   * Operator reset of a partition whose data is missing ({@link PartitionDataMissingException}):
   * opens it accepting that the offsets below its recorded next offset are lost, so that it
   * continues at the recorded next offset (never below it). A partition that opens without loss
   * is opened normally and left unchanged. Waits for the open without a deadline (an admin call).
   *
   * @return the partition's log after the reset
   */
  public PartitionLog resetPartition(String topicResourceName, int partitionId) throws IOException {
    ensureOpen();
    TopicPartition key = new TopicPartition(Objects.requireNonNull(topicResourceName, "topicResourceName"),
        partitionId);
    if (partitionId < 0) throw new IllegalArgumentException("partitionId=" + partitionId + " must be >= 0");
    writeGate.checkWritable(topicResourceName, partitionId);
    CompletableFuture<PartitionLog> f;
    deletion.readLock().lock();
    try {
      if (deletedTopics.contains(topicResourceName)) throw new TopicDeletedException(topicResourceName);
      closedOffsets.remove(key);
      lastUseMs.put(key, clock.millis());
      f = openOrGet(key, true);
    } finally {
      deletion.readLock().unlock();
    }
    return awaitDone(f, key);
  }

  private static long saturatedAdd(long a, long b) {
    long sum = a + b;
    return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE : sum;
  }

  /**
   * The offsets of a partition without opening it: from its log if open, else from what was kept
   * when it was closed, else from its directory listing and newest index ({@link
   * PartitionOffsets#read}); only when the listing cannot tell (the newest segment was not sealed:
   * after a crash, or written by another server) is the partition's read-only view ({@link
   * #readable}) opened, with the default deadline: it never takes the partition over.
   */
  public PartitionOffsets offsets(String topicResourceName, int partitionId) throws IOException {
    ensureOpen();
    if (deletedTopics.contains(topicResourceName)) throw new TopicDeletedException(topicResourceName);
    TopicPartition key = new TopicPartition(topicResourceName, partitionId);
    String fencedBy = fenced.get(key);
    if (fencedBy != null) throw new PartitionFencedException(fencedBy);
    CompletableFuture<PartitionLog> f = logs.get(key);
    if (f != null && f.isDone() && !f.isCompletedExceptionally()) {
      PartitionLog log = f.join();
      if (!log.isClosed()) return PartitionOffsets.of(log);
    }
    PartitionOffsets kept = closedOffsets.get(key);
    if (kept != null) return kept;
    PartitionOffsets read = f != null ? null
        : PartitionOffsets.read(fs, partitionDir(topicResourceName, partitionId), config.indexIntervalBytes());
    if (read != null && read.endOffset() < nextOffsets.nextOffset(topicResourceName, partitionId)) {
      // Below the recorded next offset: data is missing; the open refuses with the reason.
      read = null;
    }
    if (read != null) {
      // Keep it only while the partition is still not open (an open meanwhile answers itself).
      if (!logs.containsKey(key)) closedOffsets.put(key, read);
      return read;
    }
    return PartitionOffsets.of(readable(topicResourceName, partitionId)); // read-only: never takes it over
  }

  /** Whether this server has the partition's log open (or opening) for writing. */
  public boolean isOpen(String topicResourceName, int partitionId) {
    return logs.containsKey(new TopicPartition(topicResourceName, partitionId));
  }

  /** Logs and read-only views open now (opening ones included). */
  public int openLogCount() {
    return logs.size() + readers.size();
  }

  /** Read-only views open now (opening ones included). */
  public int openReaderCount() {
    return readers.size();
  }

  /** Read-only views opened by this instance so far. */
  public int openedReaders() {
    return readersOpenedCount.get();
  }

  /**
   * Files held by the open logs and views, counted as segments + 1 (the active writer; a view's
   * listing) per log or view.
   */
  public int openFileCount() {
    int files = 0;
    for (CompletableFuture<PartitionLog> f : logs.values()) {
      if (f.isDone() && !f.isCompletedExceptionally()) files += f.join().segmentCount() + 1;
    }
    for (CompletableFuture<PartitionReader> f : readers.values()) {
      if (f.isDone() && !f.isCompletedExceptionally()) files += f.join().segmentCount() + 1;
    }
    return files;
  }

  /** Logs opened by this instance so far (each recovery counts). */
  public int openedLogs() {
    return opensCount.get();
  }

  /** Logs closed by the limits, idleness or fencing so far. */
  public int evictedLogs() {
    return evictionsCount.get();
  }

  public Limits limits() {
    return limits;
  }

  /**
   * One sweep: closes fenced logs and logs unused for {@link Limits#idleCloseMs}, then the least
   * recently used ones while over {@link Limits#maxOpenLogs} or {@link Limits#maxOpenFiles}. Meant
   * for one scheduler thread; tests call it after moving their clock.
   *
   * @return the number of logs closed
   */
  public int runEvictionOnce() {
    if (closed) return 0;
    int closedNow = 0;
    long now = clock.millis();
    for (Map.Entry<TopicPartition, CompletableFuture<PartitionLog>> e : new ArrayList<>(logs.entrySet())) {
      CompletableFuture<PartitionLog> f = e.getValue();
      if (!f.isDone() || f.isCompletedExceptionally()) continue;
      PartitionLog log = f.join();
      Long used = lastUseMs.get(e.getKey());
      boolean idle = limits.idleCloseMs() > 0 && (used == null || now - used >= limits.idleCloseMs());
      if ((log.isFenced() || log.isClosed() || idle) && evict(e.getKey(), f)) closedNow++;
    }
    for (Map.Entry<TopicPartition, CompletableFuture<PartitionReader>> e : new ArrayList<>(readers.entrySet())) {
      CompletableFuture<PartitionReader> f = e.getValue();
      if (!f.isDone() || f.isCompletedExceptionally()) continue;
      Long used = lastUseMs.get(e.getKey());
      boolean idle = limits.idleCloseMs() > 0 && (used == null || now - used >= limits.idleCloseMs());
      if ((f.join().isClosed() || idle) && evictReader(e.getKey(), f)) closedNow++;
    }
    // left by opens that failed
    lastUseMs.keySet().removeIf(k -> !logs.containsKey(k) && !readers.containsKey(k));
    return closedNow + evictOverLimits(null);
  }

  /** An open log or read-only view, as the limits see it. */
  private record Held(TopicPartition key, CompletableFuture<PartitionLog> log,
      CompletableFuture<PartitionReader> reader) {
    int files() {
      return (log != null ? log.join().segmentCount() : reader.join().segmentCount()) + 1;
    }
  }

  /** Closes least recently used logs and views (never {@code keep}'s) until within the limits. */
  private int evictOverLimits(TopicPartition keep) {
    if (openLogCount() <= limits.maxOpenLogs() && (limits.maxOpenFiles() == Integer.MAX_VALUE
        || openFileCount() <= limits.maxOpenFiles())) {
      return 0;
    }
    synchronized (lastUseMs) { // one evicting thread at a time: they would pick the same victims
      List<Held> open = new ArrayList<>();
      for (Map.Entry<TopicPartition, CompletableFuture<PartitionLog>> e : logs.entrySet()) {
        if (e.getValue().isDone() && !e.getValue().isCompletedExceptionally() && !e.getKey().equals(keep)) {
          open.add(new Held(e.getKey(), e.getValue(), null));
        }
      }
      for (Map.Entry<TopicPartition, CompletableFuture<PartitionReader>> e : readers.entrySet()) {
        if (e.getValue().isDone() && !e.getValue().isCompletedExceptionally() && !e.getKey().equals(keep)) {
          open.add(new Held(e.getKey(), null, e.getValue()));
        }
      }
      open.sort(java.util.Comparator.comparingLong(h -> lastUseMs.getOrDefault(h.key(), Long.MIN_VALUE)));
      int files = openFileCount();
      int evicted = 0;
      for (Held h : open) {
        if (openLogCount() <= limits.maxOpenLogs() && files <= limits.maxOpenFiles()) break;
        int held = h.files();
        if (h.log() != null ? evict(h.key(), h.log()) : evictReader(h.key(), h.reader())) {
          files -= held;
          evicted++;
        }
      }
      return evicted;
    }
  }

  /** Closes one read-only view and forgets it. */
  private boolean evictReader(TopicPartition key, CompletableFuture<PartitionReader> f) {
    if (!readers.remove(key, f)) return false;
    if (!logs.containsKey(key)) lastUseMs.remove(key);
    f.join().close();
    evictionsCount.incrementAndGet();
    LOG.debug("Closed the read-only view of partition {} of {} (idle or over the open limits)", key.partitionId(),
        key.topicResourceName());
    return true;
  }

  /**
   * Closes one open log and forgets it, keeping its offsets (or, if fenced, the refusal). Under
   * the deletion read lock, so it never seals a segment into a topic directory being deleted.
   */
  private boolean evict(TopicPartition key, CompletableFuture<PartitionLog> f) {
    deletion.readLock().lock();
    try {
      PartitionLog log = f.join();
      if (log.isFenced()) {
        fenced.put(key, "partition " + key.partitionId() + " of " + key.topicResourceName()
            + " was taken over by another server");
      }
      if (!logs.remove(key, f)) return false;
      lastUseMs.remove(key);
      if (!log.isFenced() && !log.isClosed()) closedOffsets.put(key, PartitionOffsets.of(log));
      log.close();
      evictionsCount.incrementAndGet();
      LOG.debug("Closed the log of partition {} of {} (idle, fenced or over the open limits)",
          key.partitionId(), key.topicResourceName());
      return true;
    } finally {
      deletion.readLock().unlock();
    }
  }

  public Path topicDir(String topicResourceName) {
    return new Path(root, encodeDirName(topicResourceName));
  }

  public Path partitionDir(String topicResourceName, int partitionId) {
    return new Path(topicDir(topicResourceName), Integer.toString(partitionId));
  }

  /** Resource names of the topics that have a directory under the root, opened or not. */
  public List<String> topicResourceNames() throws IOException {
    List<String> names = new ArrayList<>();
    if (!fs.exists(root)) return names;
    for (FileStatus st : fs.listStatus(root)) {
      String name = st.isDirectory() ? decodeDirName(st.getPath().getName()) : null;
      if (name != null) names.add(name);
    }
    return names;
  }

  /** Closes the topic's open partition logs and deletes its directory with every partition. */
  public void deleteTopic(String topicResourceName) throws IOException {
    ensureOpen();
    deletion.writeLock().lock();
    try {
      deleteTopicLocked(topicResourceName);
    } finally {
      deletion.writeLock().unlock();
    }
  }

  private void deleteTopicLocked(String topicResourceName) throws IOException {
    deletedTopics.add(topicResourceName);
    for (TopicPartition key : new ArrayList<>(logs.keySet())) {
      if (!key.topicResourceName().equals(topicResourceName)) continue;
      CompletableFuture<PartitionLog> f = logs.remove(key);
      if (f == null) continue;
      PartitionLog log;
      try {
        log = awaitDone(f, key);
      } catch (IOException e) {
        continue; // never opened: the directory delete below removes it
      }
      log.deleteAll();
    }
    for (TopicPartition key : new ArrayList<>(readers.keySet())) {
      if (!key.topicResourceName().equals(topicResourceName)) continue;
      CompletableFuture<PartitionReader> f = readers.remove(key);
      if (f == null) continue;
      try {
        awaitDone(f, key).close();
      } catch (IOException e) {
        LOG.debug("{} never opened", key, e);
      }
    }
    closedOffsets.keySet().removeIf(k -> k.topicResourceName().equals(topicResourceName));
    if (deferredNextOffsets != null) deferredNextOffsets.forget(topicResourceName);
    lastUseMs.keySet().removeIf(k -> k.topicResourceName().equals(topicResourceName));
    Path dir = topicDir(topicResourceName);
    if (fs.exists(dir) && !fs.delete(dir, true)) {
      throw new IOException("could not delete topic directory " + dir);
    }
    LOG.info("Deleted the logs of topic {} ({})", topicResourceName, dir);
  }

  /**
   * One retention pass over every partition on disk (opening those not open yet): deletes the
   * expired segments of each (see {@link PartitionLog#deleteExpiredSegments}). Meant to be called
   * periodically by one scheduler thread, and directly by tests. A failure in one partition is
   * logged and does not stop the pass. On a file system with leases (hdfs, possibly shared by
   * several servers) only the partitions this server has open are processed: opening one would
   * take it over from the server that owns it.
   *
   * @param retentionMsByTopicResourceName retention of a topic; null (topic unknown, e.g. being
   *     deleted) or negative (keep forever) skips the topic
   * @return the number of segments deleted
   */
  public int runRetentionOnce(Function<String, Long> retentionMsByTopicResourceName) {
    if (closed) return 0;
    int deleted = 0;
    List<String> topics;
    try {
      topics = topicResourceNames();
    } catch (IOException e) {
      LOG.warn("Retention pass could not list {}", root, e);
      return 0;
    }
    for (String topic : topics) {
      Long retentionMs = retentionMsByTopicResourceName.apply(topic);
      if (retentionMs == null || retentionMs < 0) continue;
      FileStatus[] partitions;
      try {
        partitions = fs.listStatus(topicDir(topic));
      } catch (FileNotFoundException e) {
        continue; // deleted meanwhile
      } catch (IOException e) {
        LOG.warn("Retention pass could not list {}", topicDir(topic), e);
        continue;
      }
      for (FileStatus p : partitions) {
        int partitionId = parsePartitionId(p);
        if (partitionId < 0) continue;
        deletion.readLock().lock();
        try {
          PartitionLog log = null;
          if (fs instanceof LeaseRecoverable) {
            CompletableFuture<PartitionLog> f = logs.get(new TopicPartition(topic, partitionId));
            if (f != null && f.isDone() && !f.isCompletedExceptionally()) log = f.join();
          } else if (fs.exists(p.getPath())) { // else the topic was deleted meanwhile: do not recreate it
            TopicPartition key = new TopicPartition(topic, partitionId);
            boolean wasOpen = logs.containsKey(key);
            // A partition not open is opened only if its oldest segment may have expired: a pass
            // must not open (and so keep open) every partition on disk.
            if (wasOpen || mayHaveExpired(p.getPath(), retentionMs)) {
              Long used = lastUseMs.get(key);
              log = log(topic, partitionId);
              // Retention is no use: it must not keep an idle log from being closed.
              if (used == null) lastUseMs.remove(key); else lastUseMs.put(key, used);
            }
          }
          if (log != null) deleted += log.deleteExpiredSegments(retentionMs);
        } catch (IOException | RuntimeException e) {
          LOG.warn("Retention failed for partition {} of {}", partitionId, topic, e);
        } finally {
          deletion.readLock().unlock();
        }
      }
    }
    return deleted;
  }

  /**
   * Whether the oldest segment in {@code dir} may be past {@code retentionMs}: false only when its
   * index (sealed segment) shows a newer append, or it is the only segment and empty.
   */
  private boolean mayHaveExpired(Path dir, long retentionMs) throws IOException {
    FileStatus oldest = null;
    int segments = 0;
    for (FileStatus st : fs.listStatus(dir)) {
      String name = st.getPath().getName();
      if (!st.isFile() || !name.endsWith(LogSegment.LOG_SUFFIX)) continue;
      segments++;
      if (oldest == null || name.compareTo(oldest.getPath().getName()) < 0) oldest = st;
    }
    if (oldest == null) return false;
    if (segments == 1 && oldest.getLen() == 0) return false;
    String stem = oldest.getPath().getName();
    stem = stem.substring(0, stem.length() - LogSegment.LOG_SUFFIX.length());
    Path index = new Path(dir, stem + LogSegment.INDEX_SUFFIX);
    long base;
    try {
      base = Long.parseLong(stem.split("-")[0]);
    } catch (NumberFormatException e) {
      return true;
    }
    OffsetIndex.Persisted persisted = OffsetIndex.read(fs, index, base, config.indexIntervalBytes());
    return persisted == null || persisted.seal().maxAppendTimestampMs() < clock.millis() - retentionMs;
  }

  private static int parsePartitionId(FileStatus st) {
    String name = st.getPath().getName();
    if (!st.isDirectory() || name.isEmpty() || name.length() > 9 || !name.chars().allMatch(Character::isDigit)) {
      return -1;
    }
    return Integer.parseInt(name);
  }

  /** Closes every open log (sealing its active segment). Further {@link #log} calls fail. */
  @Override
  public void close() {
    closed = true;
    if (openExecutor != null) openExecutor.shutdown(); // opens under way finish and close themselves
    for (TopicPartition key : new ArrayList<>(logs.keySet())) {
      CompletableFuture<PartitionLog> f = logs.remove(key);
      if (f == null) continue;
      try {
        awaitDone(f, key).close();
      } catch (IOException e) {
        LOG.debug("{} never opened", key, e);
      }
    }
    for (TopicPartition key : new ArrayList<>(readers.keySet())) {
      CompletableFuture<PartitionReader> f = readers.remove(key);
      if (f == null) continue;
      try {
        awaitDone(f, key).close();
      } catch (IOException e) {
        LOG.debug("{} never opened", key, e);
      }
    }
    flushExecutor.shutdown(); // the closed logs have nothing in flight
    sealExecutor.shutdown(); // each closed log waited for its seals
    if (deferredNextOffsets != null) deferredNextOffsets.close(); // the rolls' raises, before the store closes
  }

  /** Where the logs record their next offsets: the given store, as the logs see it (raises pending included). */
  NextOffsetStore nextOffsets() {
    return nextOffsets;
  }

  /** Stores the pending next-offset raises now, on the caller's thread (tests step it). */
  void storeNextOffsetRaises() {
    if (deferredNextOffsets != null) deferredNextOffsets.runOnce();
  }

  /** Next-offset raises of rolled segments not stored yet (0 when no store was given). */
  public int nextOffsetRaisesPending() {
    return deferredNextOffsets == null ? 0 : deferredNextOffsets.pendingCount();
  }

  /** Next-offset raises whose store failed (each is tried again; 0 when no store was given). */
  public long nextOffsetRaiseFailures() {
    return deferredNextOffsets == null ? 0 : deferredNextOffsets.failureCount();
  }

  private void ensureOpen() throws IOException {
    if (closed) throw new IOException("partition logs under " + root + " are closed");
  }

  /** See the class comment: {@code [A-Za-z0-9_-]} kept, any other UTF-8 byte as {@code .XX}. */
  public static String encodeDirName(String topicResourceName) {
    if (topicResourceName == null || topicResourceName.isEmpty()) {
      throw new IllegalArgumentException("topic resource name is empty");
    }
    StringBuilder sb = new StringBuilder(topicResourceName.length() + 8);
    for (byte b : topicResourceName.getBytes(StandardCharsets.UTF_8)) {
      char c = (char) (b & 0xff);
      if (isPlain(c)) {
        sb.append(c);
      } else {
        sb.append('.').append(HEX[(b >> 4) & 0xf]).append(HEX[b & 0xf]);
      }
    }
    return sb.toString();
  }

  /** Inverse of {@link #encodeDirName}; null if {@code dirName} is not an encoding it produces. */
  public static String decodeDirName(String dirName) {
    if (dirName == null || dirName.isEmpty()) return null;
    ByteBuffer bytes = ByteBuffer.allocate(dirName.length());
    for (int i = 0; i < dirName.length(); i++) {
      char c = dirName.charAt(i);
      if (isPlain(c)) {
        bytes.put((byte) c);
      } else if (c == '.' && i + 2 < dirName.length() && hexValue(dirName.charAt(i + 1)) >= 0
          && hexValue(dirName.charAt(i + 2)) >= 0) {
        bytes.put((byte) (hexValue(dirName.charAt(i + 1)) << 4 | hexValue(dirName.charAt(i + 2))));
        i += 2;
      } else {
        return null;
      }
    }
    bytes.flip();
    String name;
    try {
      name = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT).decode(bytes).toString();
    } catch (CharacterCodingException e) {
      return null;
    }
    return encodeDirName(name).equals(dirName) ? name : null; // only the canonical form
  }

  private static boolean isPlain(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  }

  private static int hexValue(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
}
