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
 * over later is {@link PartitionLog#isFenced() fenced}, failing every append and read; the next
 * {@link #log} call for it closes and evicts it and opens the partition again (taking it back).
 */
public final class PartitionLogs implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(PartitionLogs.class);
  private static final char[] HEX = "0123456789ABCDEF".toCharArray();

  private record TopicPartition(String topicResourceName, int partitionId) {}

  private final FileSystem fs;
  private final Path root;
  private final LogConfig config;
  private final Clock clock;
  private final TailCache tailCache;
  private final NextOffsetStore nextOffsets;
  private final Map<TopicPartition, CompletableFuture<PartitionLog>> logs = new ConcurrentHashMap<>();
  /** Exclusive for {@link #deleteTopic}; shared by retention, so it never reopens a topic being deleted. */
  private final ReentrantReadWriteLock deletion = new ReentrantReadWriteLock();
  /**
   * Resource names deleted by this instance. A request that resolved its topic just before the
   * deletion must not recreate the partition afterwards (and be acknowledged into a directory
   * that the next start deletes as an orphan). Names are never reused, so entries never expire.
   */
  private final Set<String> deletedTopics = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

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
    this(fs, root, config, clock, tailCacheBytes, NextOffsetStore.NONE);
  }

  /**
   * @param nextOffsets where each partition's next offset is recorded (the metadata store): a log
   *     never opens below it (see {@link PartitionDataMissingException})
   */
  public PartitionLogs(FileSystem fs, Path root, LogConfig config, Clock clock, long tailCacheBytes,
      NextOffsetStore nextOffsets) {
    this.nextOffsets = Objects.requireNonNull(nextOffsets, "nextOffsets");
    this.fs = PartitionLog.rawIfLocal(Objects.requireNonNull(fs, "fs"));
    this.root = Objects.requireNonNull(root, "root");
    this.config = Objects.requireNonNull(config, "config");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.tailCache = tailCacheBytes == 0 ? TailCache.DISABLED : new TailCache(tailCacheBytes);
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
    if (root.getScheme() == null || "file".equals(root.getScheme())) {
      RawLocalFileSystem raw = new OwnerOnlyLocalFileSystem();
      raw.initialize(URI.create("file:///"), conf);
      return raw;
    }
    return FileSystem.newInstance(root, conf);
  }

  /** The log of one partition, opening (and recovering, or creating) it on first use. */
  public PartitionLog log(String topicResourceName, int partitionId) throws IOException {
    ensureOpen();
    TopicPartition key = new TopicPartition(Objects.requireNonNull(topicResourceName, "topicResourceName"),
        partitionId);
    if (partitionId < 0) throw new IllegalArgumentException("partitionId=" + partitionId + " must be >= 0");
    CompletableFuture<PartitionLog> existing = logs.get(key);
    if (existing != null && existing.isDone() && !existing.isCompletedExceptionally()
        && existing.join().isFenced() && logs.remove(key, existing)) {
      // another server took it over: close it (it writes nothing) and open it again, taking over
      LOG.info("Evicting the fenced log of partition {} of {}", partitionId, topicResourceName);
      existing.join().close();
      existing = null;
    }
    if (existing == null) {
      // Under the deletion read lock: either deleteTopic has run (and the name is in
      // deletedTopics) or it will find and delete the log opened here.
      deletion.readLock().lock();
      try {
        if (deletedTopics.contains(topicResourceName)) throw new TopicDeletedException(topicResourceName);
        return openOrAwait(key, false);
      } finally {
        deletion.readLock().unlock();
      }
    }
    return await(existing, key);
  }

  private PartitionLog openOrAwait(TopicPartition key, boolean reset) throws IOException {
    String topicResourceName = key.topicResourceName();
    int partitionId = key.partitionId();
    CompletableFuture<PartitionLog> existing = logs.get(key);
    if (existing == null) {
      CompletableFuture<PartitionLog> mine = new CompletableFuture<>();
      existing = logs.putIfAbsent(key, mine);
      if (existing == null) {
        PartitionLog log;
        try {
          log = PartitionLog.open(fs, partitionDir(topicResourceName, partitionId), config, clock, tailCache,
              nextOffsets, topicResourceName, partitionId, reset);
        } catch (IOException | RuntimeException | Error e) {
          logs.remove(key, mine);
          mine.completeExceptionally(e);
          throw e;
        }
        mine.complete(log);
        if (closed) { // close() ran while this log was opening and may not have seen it
          logs.remove(key, mine);
          log.close();
          ensureOpen();
        }
        return log;
      }
    }
    return await(existing, key);
  }

  private static PartitionLog await(CompletableFuture<PartitionLog> f, TopicPartition key) throws IOException {
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
   * Operator reset of a partition whose data is missing ({@link PartitionDataMissingException}):
   * opens it accepting that the offsets below its recorded next offset are lost, so that it
   * continues at the recorded next offset (never below it). A partition that opens without loss
   * is opened normally and left unchanged.
   *
   * @return the partition's log after the reset
   */
  public PartitionLog resetPartition(String topicResourceName, int partitionId) throws IOException {
    ensureOpen();
    TopicPartition key = new TopicPartition(Objects.requireNonNull(topicResourceName, "topicResourceName"),
        partitionId);
    if (partitionId < 0) throw new IllegalArgumentException("partitionId=" + partitionId + " must be >= 0");
    deletion.readLock().lock();
    try {
      if (deletedTopics.contains(topicResourceName)) throw new TopicDeletedException(topicResourceName);
      return openOrAwait(key, true);
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
        log = await(f, key);
      } catch (IOException e) {
        continue; // never opened: the directory delete below removes it
      }
      log.deleteAll();
    }
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
            log = log(topic, partitionId);
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
    for (TopicPartition key : new ArrayList<>(logs.keySet())) {
      CompletableFuture<PartitionLog> f = logs.remove(key);
      if (f == null) continue;
      try {
        await(f, key).close();
      } catch (IOException e) {
        LOG.debug("{} never opened", key, e);
      }
    }
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
