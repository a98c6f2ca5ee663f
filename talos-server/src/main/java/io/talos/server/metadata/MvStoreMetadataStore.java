package io.talos.server.metadata;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.h2.mvstore.Cursor;
import org.h2.mvstore.DataUtils;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;
import org.h2.mvstore.MVStoreException;
import org.h2.mvstore.type.StringDataType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link MetadataStore} in one local file on H2's MVStore (a copy-on-write B-tree store, used
 * here directly, without SQL). For a single server; a cluster shares metadata in HBase.
 *
 * <h2>File</h2>
 * {@value #FILE_NAME} in the directory given to {@link #open}, created on first open. MVStore
 * holds an exclusive OS file lock on it while open, so a second open, from this or another
 * process, fails with a {@link MetadataException} saying the file is locked. The file is opened
 * through H2's {@code async:} file system (an {@code AsynchronousFileChannel}): a plain {@code
 * FileChannel} is closed for good when a thread doing I/O on it is interrupted, which would break
 * the store for every caller; with {@code async:} an interrupted caller still completes its
 * operation and keeps its interrupt status.
 *
 * <h2>Maps and key layout</h2>
 * All keys and values are strings. Composite keys join components with {@code '/'}, after
 * escaping {@code '%'} as {@code %25} and {@code '/'} as {@code %2F} in each component, so any
 * string is a valid component and a prefix of whole components never matches a longer
 * component. Partition ids are written as 10 zero-padded digits so they sort numerically.
 * <pre>
 * map           key                                       value (see {@link MetadataCodec})
 * meta          "schemaVersion"                           "1" (decimal text)
 * topics        name                                      topic JSON
 * workers       resourceName/group/workerId               {"v":1,"lastRegisterMs":..}
 * locks         resourceName/group/0000000007             {"v":1,"workerId":..,"lastRenewMs":..,"token":..}
 * lockTokens    resourceName/group/0000000007             {"v":1,"token":..}  (last fencing token issued)
 * offsets       resourceName/group/0000000007             {"v":1,"offset":..}
 * nextOffsets   resourceName/0000000007                   {"v":1,"offset":..}  (a partition log's next offset)
 * credentials   secretKeyId                               credential JSON
 * tombstones    resourceName                              {"v":1,"requestedMs":..}
 * </pre>
 * Consumer state is keyed topic first: {@code resourceName/group/} is the prefix that {@link
 * #workers} and {@link #partitionLocks} scan, and {@code resourceName/} the prefix {@link
 * #deleteTopic} removes, across all groups, without a full scan. Topics sort by name because the
 * map is ordered by key ({@link String#compareTo}).
 *
 * <p>{@code schemaVersion} is the layout version of the maps and keys above; {@link #open}
 * refuses a file of a newer version and is the place to migrate older ones when the layout
 * changes. Values carry their own format version ({@link MetadataCodec}).
 *
 * <h2>Atomicity and durability</h2>
 * The MVStore runs with auto-commit disabled: nothing reaches the file except through {@link
 * MVStore#commit()}, which writes all changes since the previous commit, across all maps, as one
 * chunk. A chunk is valid as a whole or ignored when the file is opened after a crash, so a
 * commit is all-or-nothing. Each mutating method, holding the store's monitor:
 * <ol>
 *   <li>checks its condition and applies its changes to the maps in memory;
 *   <li>if that threw, {@link MVStore#rollback()} reverts every map to the last commit, so a
 *   failed call leaves no change, not even in memory;
 *   <li>commits, then {@link MVStore#sync()}s ({@code force(true)} on the file), and only then
 *   returns. {@code commit()} alone leaves the chunk in the OS page cache: enough for a process
 *   crash, not for a machine crash.
 * </ol>
 * A failed write or sync leaves the chunk state unknown, so the store then closes its MVStore
 * at once (fail-stop, as MVStore itself does on a write error): that call throws a {@link
 * MetadataException}. The next call (or {@link #probe()}) reopens the file, which recovers it
 * as after a crash: the failed call's change is either wholly there or wholly absent. Until a
 * reopen succeeds every call throws a MetadataException saying so (retriable: the server
 * answers HBASE_OPERATION_FAILED) and {@link #probe()} reports the store unhealthy; a reopen is
 * tried at most once per {@value #REOPEN_INTERVAL_MS} ms. Calls that change nothing write
 * nothing.
 *
 * <h2>Permissions</h2>
 * The file holds the credentials' secret keys in plain text (the Galaxy HMAC signature needs the
 * secret itself, so it cannot be stored hashed): {@link #open} creates it owner-only (0600) and
 * narrows an existing file to 0600 where the file system has POSIX permissions. The directory
 * is the caller's to protect (the server creates it 0700).
 *
 * <p>Space: every commit writes a new chunk (about 12 KB: whole 4 KB blocks) and the space of
 * chunks it frees is reused only after MVStore's retention time (45 s, kept at its safe default).
 * With no background writer there is no background compaction either, so under a steady rate
 * the file levels off at about rate &times; 45 s &times; 12 KB (measured: 200 commits/s levels
 * off near 140 MB), and {@link #close()} compacts it (3,000 commits: 36 MB to 1 MB).
 *
 * <h2>Threads</h2>
 * Thread-safe. Every method, reads included, runs under one monitor: reads never see a change
 * that is not yet durable (or that a failed call will roll back), and mutations are linearized in
 * monitor order. A write holds the monitor for one fsync (about a millisecond on local disk);
 * metadata traffic is far below what that serializes.
 */
public final class MvStoreMetadataStore implements MetadataStore {
  /** The store's file inside the directory given to {@link #open}. */
  public static final String FILE_NAME = "metadata.mv.db";

  /** Layout version of the maps and keys; see the class comment. */
  static final int SCHEMA_VERSION = 1;

  static final String MAP_META = "meta";
  static final String MAP_TOPICS = "topics";
  static final String MAP_WORKERS = "workers";
  static final String MAP_LOCKS = "locks";
  static final String MAP_LOCK_TOKENS = "lockTokens";
  static final String MAP_OFFSETS = "offsets";
  static final String MAP_CREDENTIALS = "credentials";
  /** Added without a schema version change: a file without it simply has no next offsets yet. */
  static final String MAP_NEXT_OFFSETS = "nextOffsets";
  /** Added without a schema version change, like nextOffsets. */
  static final String MAP_TOMBSTONES = "tombstones";
  /** Added without a schema version change, like nextOffsets. */
  static final String MAP_USER_QUOTAS = "userQuotas";
  static final String KEY_SCHEMA_VERSION = "schemaVersion";

  /** Time {@link #close()} may spend compacting the file, as H2's own database does on close. */
  private static final int CLOSE_COMPACT_MS = 200;

  /** Least time between two attempts to reopen the file after a failure. */
  static final long REOPEN_INTERVAL_MS = 1_000;

  /** How the file is opened in production; see the class comment on {@code async:}. */
  static final String FILE_PREFIX = "async:";

  private static final Logger LOG = LoggerFactory.getLogger(MvStoreMetadataStore.class);

  private final Path file;
  /** H2 file path prefix the file is opened with ({@value #FILE_PREFIX}; tests wrap it). */
  private final String filePrefix;
  // The MVStore and its maps: replaced when the file is reopened after a failure.
  private MVStore store;
  private MVMap<String, String> topics;
  private MVMap<String, String> workers;
  private MVMap<String, String> locks;
  private MVMap<String, String> lockTokens;
  private MVMap<String, String> offsets;
  private MVMap<String, String> credentials;
  private MVMap<String, String> nextOffsets;
  private MVMap<String, String> tombstones;
  private MVMap<String, String> userQuotas;

  /** Guards everything below and every access to the MVStore and its maps. */
  private final Object monitor = new Object();
  private boolean closed;
  /** Why the MVStore was closed after a failure and not yet reopened; see the class comment. */
  private RuntimeException failure;
  /** When the last reopen after a failure was tried (System.nanoTime), to space attempts. */
  private long lastReopenNanos;
  /** Time source of the reopen spacing; tests step it. */
  private LongSupplier nanoTime = System::nanoTime;
  /**
   * The store's time ({@link #timeMs}): this process's clock, the only one that judges an embedded
   * store's locks. Tests step it.
   */
  private LongSupplier wallMs = System::currentTimeMillis;
  /** The last {@link #timeMs} answer, so it never goes backwards. */
  private final java.util.concurrent.atomic.AtomicLong lastTimeMs = new java.util.concurrent.atomic.AtomicLong();

  private MvStoreMetadataStore(Path file, String filePrefix, MVStore store) {
    this.file = file;
    this.filePrefix = filePrefix;
    attach(store);
  }

  /** Makes {@code mvStore} the one in use. Caller holds the monitor (or is the constructor). */
  private void attach(MVStore mvStore) {
    this.store = mvStore;
    this.topics = openMap(mvStore, MAP_TOPICS);
    this.workers = openMap(mvStore, MAP_WORKERS);
    this.locks = openMap(mvStore, MAP_LOCKS);
    this.lockTokens = openMap(mvStore, MAP_LOCK_TOKENS);
    this.offsets = openMap(mvStore, MAP_OFFSETS);
    this.credentials = openMap(mvStore, MAP_CREDENTIALS);
    this.nextOffsets = openMap(mvStore, MAP_NEXT_OFFSETS);
    this.tombstones = openMap(mvStore, MAP_TOMBSTONES);
    this.userQuotas = openMap(mvStore, MAP_USER_QUOTAS);
  }

  /**
   * Opens the store in {@code dir}/{@value #FILE_NAME}, creating the directory and an empty store
   * if needed.
   *
   * @throws MetadataException if the file is locked (already open in this or another process),
   *     unreadable, or of a newer schema version
   */
  public static MvStoreMetadataStore open(Path dir) {
    return open(dir, FILE_PREFIX);
  }

  /** As {@link #open(Path)}, the file opened through H2 file path {@code filePrefix}. */
  static MvStoreMetadataStore open(Path dir, String filePrefix) {
    Path file = dir.resolve(FILE_NAME).toAbsolutePath();
    boolean created;
    try {
      Files.createDirectories(file.getParent());
      created = ownerOnlyFile(file);
    } catch (IOException e) {
      throw new MetadataException("cannot create metadata directory " + file.getParent()
          + " or file " + file + ": " + e, e);
    }
    MVStore store = openMvStore(filePrefix, file);
    try {
      MvStoreMetadataStore metadata = new MvStoreMetadataStore(file, filePrefix, store);
      int schemaVersion = metadata.initSchema();
      if (store.hasUnsavedChanges()) {
        store.commit();
        store.sync();
      }
      if (created) {
        syncDirectory(file.getParent());
      }
      LOG.info("Opened metadata store {} (schema version {}, {} topics)", file, schemaVersion,
          metadata.topics.size());
      return metadata;
    } catch (RuntimeException e) {
      store.closeImmediately();
      throw e instanceof MetadataException ? e
          : new MetadataException("cannot open metadata store " + file + ": " + e.getMessage(), e);
    }
  }

  /**
   * Creates {@code file} empty and owner-only (MVStore initialises an empty file as a new store),
   * or narrows an existing one to owner-only; see the class comment.
   *
   * @return whether the file was created
   */
  private static boolean ownerOnlyFile(Path file) throws IOException {
    Set<PosixFilePermission> ownerOnly = PosixFilePermissions.fromString("rw-------");
    boolean posix = Files.getFileStore(file.getParent()).supportsFileAttributeView("posix");
    if (!Files.exists(file)) {
      if (posix) {
        Files.createFile(file, PosixFilePermissions.asFileAttribute(ownerOnly));
      }
      return true;
    }
    if (posix && !Files.getPosixFilePermissions(file).equals(ownerOnly)) {
      LOG.warn("Metadata store {} holds secret keys but had permissions {}; setting them to {}",
          file, PosixFilePermissions.toString(Files.getPosixFilePermissions(file)),
          PosixFilePermissions.toString(ownerOnly));
      Files.setPosixFilePermissions(file, ownerOnly);
    }
    return false;
  }

  private static MVStore openMvStore(String filePrefix, Path file) {
    try {
      return new MVStore.Builder()
          .fileName(filePrefix + file)
          .autoCommitDisabled()
          .open();
    } catch (MVStoreException e) {
      if (e.getErrorCode() == DataUtils.ERROR_FILE_LOCKED) {
        throw new MetadataException("metadata store " + file + " is already open (its file is"
            + " locked by this or another process); only one MvStoreMetadataStore may use it at a"
            + " time: close the other one first", e);
      }
      throw new MetadataException("cannot open metadata store " + file + ": " + e.getMessage(), e);
    }
  }

  /** Writes the schema version into a new store, checks it in an existing one. */
  private int initSchema() {
    MVMap<String, String> meta = openMap(store, MAP_META);
    String stored = meta.get(KEY_SCHEMA_VERSION);
    if (stored == null) {
      boolean empty = topics.isEmpty() && workers.isEmpty() && locks.isEmpty()
          && offsets.isEmpty() && credentials.isEmpty() && nextOffsets.isEmpty()
          && tombstones.isEmpty() && userQuotas.isEmpty();
      if (!empty) {
        throw new MetadataException("metadata store " + file + " holds data but no "
            + KEY_SCHEMA_VERSION + " entry; it was not written by Talos", null);
      }
      meta.put(KEY_SCHEMA_VERSION, Integer.toString(SCHEMA_VERSION));
      return SCHEMA_VERSION;
    }
    int version;
    try {
      version = Integer.parseInt(stored);
    } catch (NumberFormatException e) {
      throw new MetadataException("metadata store " + file + " has a malformed "
          + KEY_SCHEMA_VERSION + " '" + stored + "'", e);
    }
    if (version != SCHEMA_VERSION) {
      // Version 1 is the first layout: there is nothing older to migrate from yet.
      throw new MetadataException("metadata store " + file + " has schema version " + version
          + "; this Talos reads only version " + SCHEMA_VERSION
          + (version > SCHEMA_VERSION ? " (the file was written by a newer Talos)" : ""), null);
    }
    return version;
  }

  private static MVMap<String, String> openMap(MVStore store, String name) {
    return store.openMap(name, new MVMap.Builder<String, String>()
        .keyType(StringDataType.INSTANCE)
        .valueType(StringDataType.INSTANCE));
  }

  /** Makes a newly created file's directory entry durable; see {@link FileChannel#force}. */
  private static void syncDirectory(Path dir) {
    try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
      channel.force(true);
    } catch (IOException e) {
      // Some platforms (Windows) cannot open a directory; there the file's own sync is all.
      LOG.debug("Cannot sync directory {}: {}", dir, e.toString());
    }
  }

  // ---- topics -------------------------------------------------------------------------------

  @Override
  public boolean createTopic(TopicRecord topic) {
    requireTopic(topic);
    String value = MetadataCodec.encodeTopic(topic);
    return write("createTopic " + topic.name(),
        () -> topics.putIfAbsent(topic.name(), value) == null);
  }

  @Override
  public Optional<TopicRecord> topic(String name) {
    Objects.requireNonNull(name, "name");
    return read("topic " + name, () -> Optional.ofNullable(topics.get(name)).map(
        v -> MetadataCodec.decodeTopic("topic " + name, v)));
  }

  @Override
  public List<TopicRecord> topics() {
    return read("topics", () -> {
      List<TopicRecord> result = new ArrayList<>(topics.size());
      for (Map.Entry<String, String> e : topics.entrySet()) {
        result.add(MetadataCodec.decodeTopic("topic " + e.getKey(), e.getValue()));
      }
      return Collections.unmodifiableList(result);
    });
  }

  @Override
  public boolean replaceTopic(TopicRecord expected, TopicRecord updated) {
    requireTopic(expected);
    requireTopic(updated);
    if (!expected.name().equals(updated.name())
        || !expected.resourceName().equals(updated.resourceName())) {
      throw new IllegalArgumentException("replaceTopic cannot change a topic's name or resource"
          + " name: expected " + expected.resourceName() + ", updated " + updated.resourceName());
    }
    String name = expected.name();
    TopicRecord next = new TopicRecord(name, updated.resourceName(), updated.ownerId(),
        updated.partitionCount(), updated.retentionSecs(), updated.attributes(),
        updated.createTimestampMs(), expected.version() + 1, updated.acl(), updated.quota());
    String value = MetadataCodec.encodeTopic(next);
    return write("replaceTopic " + name, () -> {
      String stored = topics.get(name);
      if (stored == null) {
        return false;
      }
      TopicRecord current = MetadataCodec.decodeTopic("topic " + name, stored);
      if (current.version() != expected.version()
          || !current.resourceName().equals(expected.resourceName())) {
        return false;
      }
      topics.put(name, value);
      return true;
    });
  }

  @Override
  public boolean deleteTopic(String name, String resourceName) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(resourceName, "resourceName");
    return write("deleteTopic " + resourceName, () -> {
      String stored = topics.get(name);
      if (stored == null || !resourceName.equals(
          MetadataCodec.decodeTopic("topic " + name, stored).resourceName())) {
        return false;
      }
      topics.remove(name);
      String prefix = topicPrefix(resourceName);
      removeWithPrefix(workers, prefix);
      removeWithPrefix(locks, prefix);
      removeWithPrefix(lockTokens, prefix);
      removeWithPrefix(offsets, prefix);
      removeWithPrefix(nextOffsets, prefix);
      return true;
    });
  }

  // ---- consumer groups ----------------------------------------------------------------------

  @Override
  public void registerWorker(String group, String topicResourceName, String workerId, long nowMs) {
    String key = workerKey(group, topicResourceName, workerId);
    String value = MetadataCodec.encodeWorker(nowMs);
    write("registerWorker " + key, () -> workers.put(key, value));
  }

  @Override
  public boolean removeWorker(String group, String topicResourceName, String workerId) {
    String key = workerKey(group, topicResourceName, workerId);
    return write("removeWorker " + key, () -> workers.remove(key) != null);
  }

  /** A prefix scan of {@code resourceName/} in the workers, locks and offsets maps. */
  @Override
  public java.util.SortedSet<String> consumerGroups(String topicResourceName) {
    String prefix = topicPrefix(topicResourceName);
    return read("consumerGroups " + prefix, () -> {
      java.util.TreeSet<String> groups = new java.util.TreeSet<>();
      for (MVMap<String, String> map : List.of(workers, locks, offsets)) {
        scan(map, prefix, (key, value) -> {
          int end = key.indexOf('/', prefix.length());
          if (end > prefix.length()) groups.add(unescape(key.substring(prefix.length(), end)));
        });
      }
      return Collections.unmodifiableSortedSet(groups);
    });
  }

  @Override
  public Map<String, Long> workers(String group, String topicResourceName) {
    String prefix = consumerPrefix(group, topicResourceName);
    return read("workers " + prefix, () -> {
      Map<String, Long> result = new TreeMap<>();
      scan(workers, prefix, (key, value) -> result.put(unescape(key.substring(prefix.length())),
          MetadataCodec.decodeWorker("worker " + key, value)));
      return Collections.unmodifiableMap(result);
    });
  }

  @Override
  public long timeMs() {
    long now = wallMs.getAsLong();
    return lastTimeMs.accumulateAndGet(now, Math::max);
  }

  void wallClockForTest(LongSupplier wallMs) {
    this.wallMs = wallMs;
  }

  /**
   * The lock and, when the worker acquires it anew, the partition's next fencing token (in {@code
   * lockTokens}, kept across releases), in one commit.
   */
  @Override
  public boolean lockPartition(String group, String topicResourceName, int partitionId,
      String workerId, long nowMs, long ttlMs) {
    Objects.requireNonNull(workerId, "workerId");
    String key = partitionKey(group, topicResourceName, partitionId);
    return write("lockPartition " + key, () -> {
      PartitionLock current = storedLock(key, partitionId);
      if (current != null && !current.workerId().equals(workerId)
          && !current.expired(nowMs, ttlMs)) {
        return false;
      }
      long token;
      if (current != null && current.workerId().equals(workerId)) {
        token = current.fencingToken();
      } else {
        String last = lockTokens.get(key);
        long previous = Math.max(current == null ? 0 : current.fencingToken(),
            last == null ? 0 : MetadataCodec.decodeLockToken("lock token " + key, last));
        token = previous + 1;
        lockTokens.put(key, MetadataCodec.encodeLockToken(token));
      }
      locks.put(key, MetadataCodec.encodeLock(workerId, nowMs, token));
      return true;
    });
  }

  @Override
  public boolean unlockPartition(String group, String topicResourceName, int partitionId,
      String workerId) {
    Objects.requireNonNull(workerId, "workerId");
    String key = partitionKey(group, topicResourceName, partitionId);
    return write("unlockPartition " + key, () -> {
      PartitionLock current = storedLock(key, partitionId);
      if (current == null || !current.workerId().equals(workerId)) {
        return false;
      }
      locks.remove(key);
      return true;
    });
  }

  @Override
  public Map<Integer, PartitionLock> partitionLocks(String group, String topicResourceName) {
    String prefix = consumerPrefix(group, topicResourceName);
    return read("partitionLocks " + prefix, () -> {
      Map<Integer, PartitionLock> result = new TreeMap<>();
      scan(locks, prefix, (key, value) -> {
        int partitionId = partitionOf(key, prefix);
        result.put(partitionId, MetadataCodec.decodeLock("lock " + key, partitionId, value));
      });
      return Collections.unmodifiableMap(result);
    });
  }

  @Override
  public boolean commitOffset(String group, String topicResourceName, int partitionId,
      String workerId, long fencingToken, long offset, long nowMs, long ttlMs) {
    Objects.requireNonNull(workerId, "workerId");
    String key = partitionKey(group, topicResourceName, partitionId);
    String value = MetadataCodec.encodeOffset(offset);
    return write("commitOffset " + key, () -> {
      PartitionLock current = storedLock(key, partitionId);
      if (current == null || !current.workerId().equals(workerId)
          || current.fencingToken() != fencingToken || current.expired(nowMs, ttlMs)) {
        return false;
      }
      offsets.put(key, value);
      return true;
    });
  }

  @Override
  public void setOffset(String group, String topicResourceName, int partitionId, long offset) {
    String key = partitionKey(group, topicResourceName, partitionId);
    String value = MetadataCodec.encodeOffset(offset);
    write("setOffset " + key, () -> offsets.put(key, value));
  }

  @Override
  public OptionalLong committedOffset(String group, String topicResourceName, int partitionId) {
    String key = partitionKey(group, topicResourceName, partitionId);
    return read("committedOffset " + key, () -> {
      String value = offsets.get(key);
      return value == null ? OptionalLong.empty()
          : OptionalLong.of(MetadataCodec.decodeOffset("offset " + key, value));
    });
  }

  /** The lock stored under {@code key}, or null. Caller holds the monitor. */
  private PartitionLock storedLock(String key, int partitionId) {
    String value = locks.get(key);
    return value == null ? null : MetadataCodec.decodeLock("lock " + key, partitionId, value);
  }

  // ---- partition log next offsets (storage) ---------------------------------------------------

  @Override
  public void raisePartitionNextOffset(String topicResourceName, int partitionId, long nextOffset) {
    if (nextOffset < 0) throw new IllegalArgumentException("nextOffset must be >= 0, was " + nextOffset);
    String key = partitionLogKey(topicResourceName, partitionId);
    write("raisePartitionNextOffset " + key, () -> {
      String stored = nextOffsets.get(key);
      if (stored == null || MetadataCodec.decodeOffset("next offset " + key, stored) < nextOffset) {
        nextOffsets.put(key, MetadataCodec.encodeOffset(nextOffset));
      }
      return null;
    });
  }

  @Override
  public OptionalLong partitionNextOffset(String topicResourceName, int partitionId) {
    String key = partitionLogKey(topicResourceName, partitionId);
    return read("partitionNextOffset " + key, () -> {
      String stored = nextOffsets.get(key);
      return stored == null ? OptionalLong.empty()
          : OptionalLong.of(MetadataCodec.decodeOffset("next offset " + key, stored));
    });
  }

  // ---- credentials --------------------------------------------------------------------------

  @Override
  public boolean putCredentialIfAbsent(Credential credential) {
    Objects.requireNonNull(credential, "credential");
    Objects.requireNonNull(credential.secretKeyId(), "credential.secretKeyId");
    String value = MetadataCodec.encodeCredential(credential);
    return write("putCredentialIfAbsent " + credential.secretKeyId(),
        () -> credentials.putIfAbsent(credential.secretKeyId(), value) == null);
  }

  @Override
  public Optional<Credential> credential(String secretKeyId) {
    Objects.requireNonNull(secretKeyId, "secretKeyId");
    return read("credential " + secretKeyId, () -> Optional.ofNullable(credentials.get(secretKeyId))
        .map(v -> MetadataCodec.decodeCredential("credential " + secretKeyId, v)));
  }

  @Override
  public List<Credential> credentials() {
    return read("credentials", () -> {
      List<Credential> result = new ArrayList<>();
      for (Map.Entry<String, String> e : credentials.entrySet()) {
        result.add(MetadataCodec.decodeCredential("credential " + e.getKey(), e.getValue()));
      }
      return Collections.unmodifiableList(result);
    });
  }

  @Override
  public boolean replaceCredential(Credential expected, Credential updated) {
    Objects.requireNonNull(expected, "expected");
    Objects.requireNonNull(updated, "updated");
    checkSameCredential(expected, updated);
    String key = expected.secretKeyId();
    String value = MetadataCodec.encodeCredential(updated);
    return write("replaceCredential " + key, () -> {
      String stored = credentials.get(key);
      if (stored == null || !MetadataCodec.decodeCredential("credential " + key, stored).equals(expected)) {
        return false;
      }
      credentials.put(key, value);
      return true;
    });
  }

  static void checkSameCredential(Credential expected, Credential updated) {
    if (!expected.secretKeyId().equals(updated.secretKeyId())
        || !Objects.equals(expected.ownerId(), updated.ownerId())) {
      throw new IllegalArgumentException("a credential's key id and owner never change: " + expected
          + " cannot become " + updated);
    }
  }

  // ---- user quotas --------------------------------------------------------------------------

  @Override
  public Optional<RateQuota> userQuota(String accountId) {
    Objects.requireNonNull(accountId, "accountId");
    return read("userQuota " + accountId, () -> {
      String value = userQuotas.get(accountId);
      return value == null ? Optional.empty()
          : Optional.of(MetadataCodec.decodeQuota("user quota " + accountId, value));
    });
  }

  @Override
  public Map<String, RateQuota> userQuotas() {
    return read("userQuotas", () -> {
      Map<String, RateQuota> result = new TreeMap<>();
      for (Map.Entry<String, String> e : userQuotas.entrySet()) {
        result.put(e.getKey(), MetadataCodec.decodeQuota("user quota " + e.getKey(), e.getValue()));
      }
      return Collections.unmodifiableMap(result);
    });
  }

  @Override
  public void putUserQuota(String accountId, RateQuota quota) {
    Objects.requireNonNull(accountId, "accountId");
    String value = MetadataCodec.encodeQuota(quota);
    write("putUserQuota " + accountId, () -> userQuotas.put(accountId, value));
  }

  @Override
  public boolean deleteUserQuota(String accountId) {
    Objects.requireNonNull(accountId, "accountId");
    return write("deleteUserQuota " + accountId, () -> userQuotas.remove(accountId) != null);
  }

  // ---- topic deletion tombstones and health ------------------------------------------------

  @Override
  public void putTopicTombstone(String topicResourceName, long nowMs) {
    Objects.requireNonNull(topicResourceName, "topicResourceName");
    String value = MetadataCodec.encodeTombstone(nowMs);
    write("putTopicTombstone " + topicResourceName,
        () -> tombstones.putIfAbsent(topicResourceName, value));
  }

  @Override
  public Map<String, Long> topicTombstones() {
    return read("topicTombstones", () -> {
      Map<String, Long> result = new TreeMap<>();
      for (Map.Entry<String, String> e : tombstones.entrySet()) {
        result.put(e.getKey(), MetadataCodec.decodeTombstone("tombstone " + e.getKey(),
            e.getValue()));
      }
      return Collections.unmodifiableMap(result);
    });
  }

  @Override
  public boolean removeTopicTombstone(String topicResourceName) {
    Objects.requireNonNull(topicResourceName, "topicResourceName");
    return write("removeTopicTombstone " + topicResourceName,
        () -> tombstones.remove(topicResourceName) != null);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Here: after a failure, tries to reopen the file (at most once per {@value
   * #REOPEN_INTERVAL_MS} ms) and reports the store unhealthy until that succeeds.
   */
  @Override
  public Optional<String> probe() {
    synchronized (monitor) {
      if (closed) {
        return Optional.of("metadata store " + file + " is closed");
      }
      if (failure != null && !tryReopen()) {
        return Optional.of("metadata store " + file + " failed (" + failure
            + ") and could not be reopened yet");
      }
      return Optional.empty();
    }
  }

  // ---- lifecycle ----------------------------------------------------------------------------

  /** Closes the store, compacting its file for up to {@value #CLOSE_COMPACT_MS} ms. Idempotent. */
  @Override
  public void close() {
    synchronized (monitor) {
      if (closed) {
        return;
      }
      closed = true;
      if (failure != null) {
        return; // the MVStore was closed when it failed
      }
      try {
        store.close(CLOSE_COMPACT_MS);
      } catch (RuntimeException e) {
        // Every change was durable when its call returned; only compaction and the clean
        // shutdown mark are lost, and the next open recovers as after a crash.
        store.closeImmediately();
        throw new MetadataException("closing metadata store " + file + " failed (no change is"
            + " lost)", e);
      }
      LOG.info("Closed metadata store {}", file);
    }
  }

  /**
   * Releases the file at once, writing nothing more, as if the process had died: what the last
   * returned call made durable is all the next open sees. Used for fail-stop and by tests that
   * simulate a crash. Idempotent; {@link #close()} afterwards does nothing.
   */
  void closeImmediately() {
    synchronized (monitor) {
      closed = true;
      if (failure == null) {
        store.closeImmediately();
      }
    }
  }

  Path file() {
    return file;
  }

  /** Replaces the time source that spaces reopen attempts (tests). */
  void nanoTime(LongSupplier source) {
    synchronized (monitor) {
      this.nanoTime = source;
    }
  }

  @Override
  public String toString() {
    return "MvStoreMetadataStore[" + file + "]";
  }

  // ---- write and read discipline (see the class comment) -------------------------------------

  /** Runs {@code change} and makes what it did durable, all under the monitor. */
  private <T> T write(String what, Supplier<T> change) {
    synchronized (monitor) {
      checkUsable(what);
      T result;
      try {
        result = change.get();
      } catch (RuntimeException e) {
        discardUncommitted(what, e);
        throw e instanceof MetadataException ? e
            : new MetadataException(what + " failed on " + file + ": " + e, e);
      }
      if (store.hasUnsavedChanges()) {
        try {
          store.commit();
          store.sync();
        } catch (RuntimeException e) {
          failStop(e);
          throw new MetadataException(what + ": writing " + file + " failed; the store closed"
              + " itself and after reopening the change is either wholly there or absent", e);
        }
      }
      return result;
    }
  }

  private <T> T read(String what, Supplier<T> query) {
    synchronized (monitor) {
      checkUsable(what);
      try {
        return query.get();
      } catch (MetadataException e) {
        throw e;
      } catch (RuntimeException e) {
        throw new MetadataException(what + " failed reading " + file + ": " + e, e);
      }
    }
  }

  /** Reverts the maps to the last commit after a failed change; fail-stop if even that fails. */
  private void discardUncommitted(String what, RuntimeException cause) {
    try {
      store.rollback();
    } catch (RuntimeException e) {
      cause.addSuppressed(e);
      failStop(cause);
      LOG.error("{}: rolling back a failed change on {} failed; store closed", what, file, e);
    }
  }

  private void failStop(RuntimeException cause) {
    failure = cause;
    lastReopenNanos = 0;
    store.closeImmediately();
    LOG.error("Metadata store {} failed; closed its file and will reopen it on the next call",
        file, cause);
  }

  /**
   * Reopens the file after a failure, recovering it as after a crash. Caller holds the monitor.
   * The first attempt after a failure is immediate, later ones at most every {@value
   * #REOPEN_INTERVAL_MS} ms (each costs a file open).
   *
   * @return whether the store is usable again
   */
  private boolean tryReopen() {
    long now = nanoTime.getAsLong();
    if (lastReopenNanos != 0 && now - lastReopenNanos < REOPEN_INTERVAL_MS * 1_000_000) {
      return false;
    }
    lastReopenNanos = now == 0 ? 1 : now;
    try {
      attach(openMvStore(filePrefix, file));
    } catch (RuntimeException e) {
      LOG.warn("Reopening metadata store {} after a failure failed; will retry: {}", file,
          e.toString());
      return false;
    }
    LOG.info("Reopened metadata store {} after a failure ({})", file, failure.toString());
    failure = null;
    lastReopenNanos = 0;
    return true;
  }

  private void checkUsable(String what) {
    if (closed) {
      throw new IllegalStateException(what + ": metadata store " + file + " is closed");
    }
    if (failure != null && !tryReopen()) {
      throw new MetadataException(what + ": metadata store " + file + " failed (" + failure
          + ") and could not be reopened yet; nothing was done, retry later", failure);
    }
  }

  private static void requireTopic(TopicRecord topic) {
    Objects.requireNonNull(topic, "topic");
    Objects.requireNonNull(topic.name(), "topic.name");
    Objects.requireNonNull(topic.resourceName(), "topic.resourceName");
  }

  // ---- keys (see the class comment) ---------------------------------------------------------

  static String topicPrefix(String topicResourceName) {
    return escape(Objects.requireNonNull(topicResourceName, "topicResourceName")) + '/';
  }

  static String consumerPrefix(String group, String topicResourceName) {
    return topicPrefix(topicResourceName) + escape(Objects.requireNonNull(group, "group")) + '/';
  }

  static String workerKey(String group, String topicResourceName, String workerId) {
    return consumerPrefix(group, topicResourceName)
        + escape(Objects.requireNonNull(workerId, "workerId"));
  }

  static String partitionKey(String group, String topicResourceName, int partitionId) {
    if (partitionId < 0) {
      throw new IllegalArgumentException("partitionId must be >= 0, was " + partitionId);
    }
    return consumerPrefix(group, topicResourceName) + String.format("%010d", partitionId);
  }

  static String partitionLogKey(String topicResourceName, int partitionId) {
    if (partitionId < 0) {
      throw new IllegalArgumentException("partitionId must be >= 0, was " + partitionId);
    }
    return topicPrefix(topicResourceName) + String.format("%010d", partitionId);
  }

  private static int partitionOf(String key, String prefix) {
    return Integer.parseInt(key.substring(prefix.length()));
  }

  static String escape(String component) {
    if (component.indexOf('%') < 0 && component.indexOf('/') < 0) {
      return component;
    }
    StringBuilder sb = new StringBuilder(component.length() + 8);
    for (int i = 0; i < component.length(); i++) {
      char c = component.charAt(i);
      switch (c) {
        case '%' -> sb.append("%25");
        case '/' -> sb.append("%2F");
        default -> sb.append(c);
      }
    }
    return sb.toString();
  }

  static String unescape(String component) {
    if (component.indexOf('%') < 0) {
      return component;
    }
    StringBuilder sb = new StringBuilder(component.length());
    for (int i = 0; i < component.length(); i++) {
      char c = component.charAt(i);
      if (c != '%') {
        sb.append(c);
      } else if (component.startsWith("%25", i)) {
        sb.append('%');
        i += 2;
      } else if (component.startsWith("%2F", i)) {
        sb.append('/');
        i += 2;
      } else {
        throw new MetadataException("malformed key component '" + component + "'", null);
      }
    }
    return sb.toString();
  }

  private interface EntryConsumer {
    void accept(String key, String value);
  }

  /** Visits the entries whose key starts with {@code prefix}, in key order. */
  private static void scan(MVMap<String, String> map, String prefix, EntryConsumer each) {
    Cursor<String, String> cursor = map.cursor(prefix);
    while (cursor.hasNext()) {
      String key = cursor.next();
      if (!key.startsWith(prefix)) {
        return;
      }
      each.accept(key, cursor.getValue());
    }
  }

  private static void removeWithPrefix(MVMap<String, String> map, String prefix) {
    List<String> keys = new ArrayList<>();
    scan(map, prefix, (key, value) -> keys.add(key));
    keys.forEach(map::remove);
  }
}
