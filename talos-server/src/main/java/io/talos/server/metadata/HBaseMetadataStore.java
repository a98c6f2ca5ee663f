package io.talos.server.metadata;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.NamespaceDescriptor;
import org.apache.hadoop.hbase.NamespaceExistException;
import org.apache.hadoop.hbase.NamespaceNotFoundException;
import org.apache.hadoop.hbase.TableExistsException;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.CheckAndMutate;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Increment;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.filter.ColumnPrefixFilter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link MetadataStore} in HBase, shared by every node of a cluster. Values are the JSON of
 * {@link MetadataCodec}, as in the embedded store.
 *
 * <h2>Schema</h2>
 * Five tables in one namespace (default {@code talos}), each with one column family {@code m}
 * (one version kept, {@code NEW_VERSION_BEHAVIOR} on: a delete marker hides only older writes,
 * so a cell written right after a delete in the same millisecond is not masked). Row keys and
 * qualifiers are UTF-8.
 * <pre>
 * table         row key            qualifier                    value
 * meta          "schema"           "version"                    "1" (decimal text)
 * topic_names   topic name         "r"                          resource name of the live topic
 * topics        resource name      "topic"                      topic JSON
 *                                  "w/" group "/" workerId      {"v":1,"lastRegisterMs":..}
 *                                  "l/" group "/" 0000000007    {"v":1,"workerId":..,"lastRenewMs":..}
 *                                  "o/" group "/" 0000000007    {"v":1,"offset":..}
 *                                  "n/" 0000000007              {"v":1,"offset":..} (a partition log's next offset)
 * credentials   secretKeyId        "c"                          credential JSON
 *               "~quota/" accountId "q"                          a user quota's JSON (the "~" sorts
 *                                                                after every key id "TK...")
 * topic_deletions resource name    "d"                          {"v":1,"requestedMs":..}
 * </pre>
 * {@code topic_deletions} holds the tombstones of deleted topics whose data is not yet removed
 * (see {@link MetadataStore#putTopicTombstone}); it is created on open like the others, so a
 * namespace of an older Talos gains it without a schema version change.
 * Group and worker ids are escaped as in {@link MvStoreMetadataStore#escape} ({@code '%'} and
 * {@code '/'}), so {@code "l/" + group + "/"} is a prefix that matches exactly one group.
 * Everything of one topic incarnation is one row of {@code topics}: its record and all consumer
 * state of every group. The access patterns map onto it as follows: list topics = scan {@code
 * topic_names} (sorted by name) and get the rows it points to; all workers, locks or offsets of
 * a group = one get of the topic's row with a column-prefix filter; a lock and the offset it
 * guards share the row, so "commit only for the lock holder" is one single-row conditional
 * mutation. The row grows with groups &times; partitions (three small cells each), which is
 * what HBase rows are built for.
 *
 * <p>{@code meta} records the layout version above; {@link #open} creates the namespace, the
 * tables and the version row when missing (idempotent: "already exists" from a racing node is
 * success), and refuses a newer version. A later layout change migrates here.
 *
 * <h2>Atomicity</h2>
 * Every conditional write is an HBase {@code checkAndMutate} on one row, comparing the exact
 * bytes read just before (or absence), in a loop: read, decide by the contract, write iff the
 * cell is still what was read, else read again. Nothing is read-then-written unconditionally.
 * <ul>
 *   <li><b>createTopic</b>: puts the record into the new resource's row (if absent), then
 *   publishes it with a conditional put of {@code topic_names/name -> resourceName} (if absent,
 *   or if it points to a row without a record: the leftover of an interrupted delete). The
 *   publish is the commit point; a losing creator removes its unpublished record. A create
 *   that fails between the two steps leaves an unpublished record that nothing reads (rows are
 *   reached only through {@code topic_names}) and that a retry with the same record publishes.
 *   <li><b>topic(name)</b> follows {@code topic_names} to the row; a name whose row has no record
 *   is absent. A resource name is never reused, so a record, once gone, never comes back.
 *   <li><b>deleteTopic</b> deletes the whole row of the resource (record and all consumer state,
 *   atomically: one row) on the condition that the record is the exact one read: that is the
 *   commit point. It then removes the {@code topic_names} entry iff it still points to that
 *   resource; if the process dies in between, the dangling entry is invisible (no record) and
 *   the next create of the name replaces it.
 *   <li><b>replaceTopic</b>: conditional put of the record on its exact previous bytes.
 *   <li><b>lockPartition / unlockPartition / commitOffset</b>: conditional on the exact lock
 *   cell read; commitOffset writes the offset cell in the same row iff the lock cell is
 *   unchanged, so it is atomic with the holder and fencing-token check. A new holder's token
 *   is one above the larger of the lock's and the cell {@code k/<group>/<partition>} (the last
 *   token issued, kept when the lock is released); both are written in the lock's one
 *   conditional put.
 *   <li><b>claimPartitionOwner</b>: conditional put of the next owner epoch on the exact cell
 *   read (or its absence); see {@link PartitionOwnerEpochs}.
 *   <li><b>raisePartitionNextOffset</b>: conditional put of the higher offset on the exact cell
 *   read (or its absence); an unknown outcome is resolved by reading again (raising is
 *   idempotent: a stored value at or above the new one is success).
 * </ul>
 * {@link #topics()} reads each topic consistently (linearizably) but is not a snapshot across
 * topics: HBase reads no set of rows at one instant.
 *
 * <h2>Errors and retries</h2>
 * The HBase client retries each RPC by itself (up to {@code hbase.client.retries.number}, within
 * {@code hbase.client.operation.timeout}); gets and unconditional puts are idempotent, so that is
 * safe. When a call still fails, it surfaces as {@link MetadataException} (the server answers
 * HBASE_OPERATION_FAILED, retriable). A conditional write whose outcome is unknown (its RPC
 * failed or timed out, or a client-side retry of an applied mutation reports "condition
 * failed") is resolved by reading again: if the cell already holds what this call writes, the
 * call succeeded; if the condition still holds, it is tried again; if neither can be decided
 * (the state moved on for another reason), a MetadataException says the outcome is unknown.
 * Every conditional change is one row mutation, so none is ever half applied.
 *
 * <h2>Time</h2>
 * {@link #timeMs} is HBase's time: one {@code Increment} of the cell {@code clock/t} of {@code
 * meta}, whose new cell timestamp the region server assigns; HBase gives an incremented cell a
 * timestamp above the one it had, so this time never goes backwards, even when the region moves
 * to a region server whose clock is behind. Every node serving consumer groups reads it and
 * passes it as {@code nowMs}: expiry compares times of this one clock only, never two nodes'
 * clocks. Otherwise cell timestamps play no part in decisions.
 *
 * <p>Thread-safe: one HBase {@link Connection} is shared; a {@link Table} is taken per call.
 */
public final class HBaseMetadataStore implements MetadataStore, PartitionOwnerEpochs {
  private static final Logger LOG = LoggerFactory.getLogger(HBaseMetadataStore.class);

  /** Layout version of the tables and keys; see the class comment. */
  static final int SCHEMA_VERSION = 1;

  static final String TABLE_META = "meta";
  static final String TABLE_TOPIC_NAMES = "topic_names";
  static final String TABLE_TOPICS = "topics";
  static final String TABLE_CREDENTIALS = "credentials";
  static final String TABLE_TOPIC_DELETIONS = "topic_deletions";

  static final byte[] FAMILY = bytes("m");
  static final byte[] ROW_SCHEMA = bytes("schema");
  static final byte[] COL_VERSION = bytes("version");
  static final byte[] COL_RESOURCE = bytes("r");
  static final byte[] COL_TOPIC = bytes("topic");
  static final byte[] COL_CREDENTIAL = bytes("c");
  static final byte[] COL_TOMBSTONE = bytes("d");
  static final byte[] COL_USER_QUOTA = bytes("q");
  static final byte[] ROW_CLOCK = bytes("clock");
  static final byte[] COL_CLOCK = bytes("t");
  static final String USER_QUOTA_ROW_PREFIX = "~quota/";

  /** How long {@link #open} waits for a table another node is creating to become available. */
  private static final long TABLE_WAIT_MS = 60_000;

  /**
   * Rounds of read-and-conditionally-write before a call gives up with a MetadataException. Each
   * lost round means another caller changed the cell in between, so this bounds starvation only.
   */
  private static final int MAX_CAS_ROUNDS = 100;

  private final Connection connection;
  private final boolean ownsConnection;
  private final String namespace;
  private final TableName metaTable;
  private final TableName topicNamesTable;
  private final TableName topicsTable;
  private final TableName credentialsTable;
  private final TableName topicDeletionsTable;
  private volatile boolean closed;

  private HBaseMetadataStore(Connection connection, boolean ownsConnection, String namespace) {
    this.connection = connection;
    this.ownsConnection = ownsConnection;
    this.namespace = namespace;
    this.metaTable = TableName.valueOf(namespace, TABLE_META);
    this.topicNamesTable = TableName.valueOf(namespace, TABLE_TOPIC_NAMES);
    this.topicsTable = TableName.valueOf(namespace, TABLE_TOPICS);
    this.credentialsTable = TableName.valueOf(namespace, TABLE_CREDENTIALS);
    this.topicDeletionsTable = TableName.valueOf(namespace, TABLE_TOPIC_DELETIONS);
  }

  /**
   * Connects with {@code conf} (ZooKeeper quorum and client settings), creates the namespace,
   * tables and schema version if missing, and checks the version.
   *
   * @throws MetadataException if HBase is unreachable within the client's timeouts or the stored
   *     schema is newer than this code
   */
  public static HBaseMetadataStore open(Configuration conf, String namespace) {
    Objects.requireNonNull(namespace, "namespace");
    Connection connection;
    try {
      connection = ConnectionFactory.createConnection(HBaseConfiguration.create(conf));
    } catch (IOException e) {
      throw new MetadataException("cannot connect to HBase (zookeeper quorum "
          + conf.get("hbase.zookeeper.quorum") + "): " + e, e);
    }
    try {
      return open(connection, true, namespace);
    } catch (RuntimeException e) {
      try {
        connection.close();
      } catch (IOException closing) {
        e.addSuppressed(closing);
      }
      throw e;
    }
  }

  /** As {@link #open(Configuration, String)} on a connection the caller owns and closes. */
  static HBaseMetadataStore open(Connection connection, String namespace) {
    return open(connection, false, namespace);
  }

  private static HBaseMetadataStore open(Connection connection, boolean owns, String namespace) {
    HBaseMetadataStore store = new HBaseMetadataStore(connection, owns, namespace);
    store.ensureSchema();
    LOG.info("Opened HBase metadata store in namespace {} (schema version {})", namespace,
        SCHEMA_VERSION);
    return store;
  }

  // ---- schema -------------------------------------------------------------------------------

  private void ensureSchema() {
    try (Admin admin = connection.getAdmin()) {
      try {
        admin.getNamespaceDescriptor(namespace);
      } catch (NamespaceNotFoundException e) {
        try {
          admin.createNamespace(NamespaceDescriptor.create(namespace).build());
          LOG.info("Created HBase namespace {}", namespace);
        } catch (NamespaceExistException raced) {
          LOG.debug("Namespace {} was created concurrently", namespace);
        }
      }
      for (TableName table : List.of(metaTable, topicNamesTable, topicsTable, credentialsTable,
          topicDeletionsTable)) {
        ensureTable(admin, table);
      }
    } catch (IOException e) {
      throw new MetadataException("creating the HBase schema in namespace " + namespace
          + " failed: " + e, e);
    }
    try (Table meta = connection.getTable(metaTable)) {
      byte[] version = bytes(Integer.toString(SCHEMA_VERSION));
      meta.checkAndMutate(CheckAndMutate.newBuilder(ROW_SCHEMA).ifNotExists(FAMILY, COL_VERSION)
          .build(new Put(ROW_SCHEMA).addColumn(FAMILY, COL_VERSION, version)));
      byte[] stored = meta.get(new Get(ROW_SCHEMA).addColumn(FAMILY, COL_VERSION))
          .getValue(FAMILY, COL_VERSION);
      int storedVersion = stored == null ? -1 : parseVersion(string(stored));
      if (storedVersion > SCHEMA_VERSION) {
        throw new MetadataException("HBase namespace " + namespace + " has metadata schema version "
            + storedVersion + ", newer than this server's " + SCHEMA_VERSION
            + " (written by a newer Talos?)", null);
      }
      if (storedVersion != SCHEMA_VERSION) {
        throw new MetadataException("HBase namespace " + namespace + " has metadata schema version "
            + string(stored) + ", this server knows only " + SCHEMA_VERSION, null);
      }
    } catch (IOException e) {
      throw new MetadataException("reading the metadata schema version in " + metaTable
          + " failed: " + e, e);
    }
  }

  private static int parseVersion(String text) {
    try {
      return Integer.parseInt(text);
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private static void ensureTable(Admin admin, TableName table) throws IOException {
    if (!admin.tableExists(table)) {
      try {
        admin.createTable(TableDescriptorBuilder.newBuilder(table)
            .setColumnFamily(ColumnFamilyDescriptorBuilder.newBuilder(FAMILY)
                .setMaxVersions(1)
                .setNewVersionBehavior(true)
                .build())
            .build());
        LOG.info("Created HBase table {}", table);
        return;
      } catch (TableExistsException raced) {
        LOG.debug("Table {} was created concurrently", table);
      }
    }
    // Another node may still be creating it: wait until its regions are online.
    long deadline = System.nanoTime() + TABLE_WAIT_MS * 1_000_000;
    while (!admin.isTableAvailable(table)) {
      if (System.nanoTime() > deadline) {
        throw new IOException("table " + table + " exists but is not available after "
            + TABLE_WAIT_MS + " ms");
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("interrupted waiting for table " + table);
      }
    }
  }

  // ---- topics -------------------------------------------------------------------------------

  @Override
  public boolean createTopic(TopicRecord topic) {
    requireTopic(topic);
    checkOpen();
    String what = "createTopic " + topic.name();
    byte[] nameRow = bytes(topic.name());
    byte[] resource = bytes(topic.resourceName());
    byte[] record = bytes(MetadataCodec.encodeTopic(topic));
    try (Table names = connection.getTable(topicNamesTable);
         Table topics = connection.getTable(topicsTable)) {
      // 1. The record, in its own (never reused) resource row; unreachable until published.
      Boolean inserted = tryCas(topics, CheckAndMutate.newBuilder(resource)
          .ifNotExists(FAMILY, COL_TOPIC)
          .build(new Put(resource).addColumn(FAMILY, COL_TOPIC, record)));
      if (!Boolean.TRUE.equals(inserted)) {
        byte[] existing = get(topics, resource, COL_TOPIC);
        if (inserted != null && Arrays.equals(get(names, nameRow, COL_RESOURCE), resource)) {
          return false; // this very topic was created before
        }
        if (existing == null) {
          throw new MetadataException(what + ": writing the topic record to HBase failed;"
              + " nothing was published, retrying is safe", null);
        }
        if (!Arrays.equals(existing, record)) {
          throw new MetadataException(what + ": resource name " + topic.resourceName()
              + " already has another topic record; resource names must be unique", null);
        }
      }
      // 2. Publish: the commit point.
      boolean unknown = false;
      for (int round = 0; round < MAX_CAS_ROUNDS; round++) {
        byte[] current = get(names, nameRow, COL_RESOURCE);
        if (current != null && Arrays.equals(current, resource)) {
          return true; // our publish landed (its outcome was unknown or reported as failed)
        }
        if (current != null && get(topics, current, COL_TOPIC) != null) {
          // A live topic of that name. Withdraw our unpublished record.
          if (unknown && get(topics, resource, COL_TOPIC) == null) {
            throw unknownOutcome(what, null);
          }
          removeUnpublished(topics, resource, record);
          return false;
        }
        CheckAndMutate.Builder cas = CheckAndMutate.newBuilder(nameRow);
        cas = current == null ? cas.ifNotExists(FAMILY, COL_RESOURCE)
            : cas.ifEquals(FAMILY, COL_RESOURCE, current);
        Boolean ok = tryCas(names, cas.build(new Put(nameRow).addColumn(FAMILY, COL_RESOURCE,
            resource)));
        if (ok == null) {
          unknown = true;
        } else if (ok) {
          return true;
        }
      }
      throw contended(what);
    } catch (IOException e) {
      throw failed(what, e);
    }
  }

  private void removeUnpublished(Table topics, byte[] resource, byte[] record) throws IOException {
    topics.checkAndMutate(CheckAndMutate.newBuilder(resource).ifEquals(FAMILY, COL_TOPIC, record)
        .build(new Delete(resource).addColumns(FAMILY, COL_TOPIC)));
  }

  @Override
  public Optional<TopicRecord> topic(String name) {
    Objects.requireNonNull(name, "name");
    checkOpen();
    try (Table names = connection.getTable(topicNamesTable);
         Table topics = connection.getTable(topicsTable)) {
      byte[] resource = get(names, bytes(name), COL_RESOURCE);
      if (resource == null) {
        return Optional.empty();
      }
      byte[] record = get(topics, resource, COL_TOPIC);
      return record == null ? Optional.empty()
          : Optional.of(MetadataCodec.decodeTopic("topic " + name, string(record)));
    } catch (IOException e) {
      throw failed("topic " + name, e);
    }
  }

  @Override
  public List<TopicRecord> topics() {
    checkOpen();
    try (Table names = connection.getTable(topicNamesTable);
         Table topics = connection.getTable(topicsTable)) {
      List<String> topicNames = new ArrayList<>();
      List<Get> gets = new ArrayList<>();
      try (ResultScanner scanner = names.getScanner(new Scan().addColumn(FAMILY, COL_RESOURCE))) {
        for (Result r : scanner) {
          topicNames.add(string(r.getRow()));
          gets.add(new Get(r.getValue(FAMILY, COL_RESOURCE)).addColumn(FAMILY, COL_TOPIC));
        }
      }
      Result[] records = topics.get(gets);
      List<TopicRecord> result = new ArrayList<>(records.length);
      for (int i = 0; i < records.length; i++) {
        byte[] record = records[i].getValue(FAMILY, COL_TOPIC);
        if (record != null) {
          result.add(MetadataCodec.decodeTopic("topic " + topicNames.get(i), string(record)));
        }
      }
      // HBase orders rows by UTF-8 bytes; the contract orders by String.compareTo.
      result.sort(Comparator.comparing(TopicRecord::name));
      return Collections.unmodifiableList(result);
    } catch (IOException e) {
      throw failed("topics", e);
    }
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
    checkOpen();
    String name = expected.name();
    String what = "replaceTopic " + name;
    TopicRecord next = new TopicRecord(name, updated.resourceName(), updated.ownerId(),
        updated.partitionCount(), updated.retentionSecs(), updated.attributes(),
        updated.createTimestampMs(), expected.version() + 1, updated.acl(), updated.quota());
    byte[] nextBytes = bytes(MetadataCodec.encodeTopic(next));
    byte[] resource = bytes(expected.resourceName());
    try (Table names = connection.getTable(topicNamesTable);
         Table topics = connection.getTable(topicsTable)) {
      if (!Arrays.equals(get(names, bytes(name), COL_RESOURCE), resource)) {
        return false; // gone or re-created under another resource name
      }
      boolean unknown = false;
      for (int round = 0; round < MAX_CAS_ROUNDS; round++) {
        byte[] stored = get(topics, resource, COL_TOPIC);
        if (unknown && Arrays.equals(stored, nextBytes)) {
          return true;
        }
        if (stored == null) {
          return false;
        }
        TopicRecord current = MetadataCodec.decodeTopic("topic " + name, string(stored));
        if (current.version() != expected.version()) {
          if (unknown && current.version() == expected.version() + 1) {
            throw unknownOutcome(what, null);
          }
          return false;
        }
        Boolean ok = tryCas(topics, CheckAndMutate.newBuilder(resource)
            .ifEquals(FAMILY, COL_TOPIC, stored)
            .build(new Put(resource).addColumn(FAMILY, COL_TOPIC, nextBytes)));
        if (ok == null) {
          unknown = true;
        } else if (ok) {
          return true;
        }
      }
      throw contended(what);
    } catch (IOException e) {
      throw failed(what, e);
    }
  }

  @Override
  public boolean deleteTopic(String name, String resourceName) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(resourceName, "resourceName");
    checkOpen();
    String what = "deleteTopic " + resourceName;
    byte[] nameRow = bytes(name);
    byte[] resource = bytes(resourceName);
    try (Table names = connection.getTable(topicNamesTable);
         Table topics = connection.getTable(topicsTable)) {
      if (!Arrays.equals(get(names, nameRow, COL_RESOURCE), resource)) {
        return false;
      }
      boolean deleted = false;
      boolean unknown = false;
      for (int round = 0; round < MAX_CAS_ROUNDS && !deleted; round++) {
        byte[] stored = get(topics, resource, COL_TOPIC);
        if (stored == null) {
          if (unknown) {
            deleted = true; // our delete landed; nobody else deletes a published record but
            break;          // another deleteTopic of the same topic, which also reports true
          }
          return false;
        }
        // The commit point: the whole row (record and every group's consumer state) at once.
        Boolean ok = tryCas(topics, CheckAndMutate.newBuilder(resource)
            .ifEquals(FAMILY, COL_TOPIC, stored)
            .build(new Delete(resource)));
        if (ok == null) {
          unknown = true;
        } else if (ok) {
          deleted = true;
        }
      }
      if (!deleted) {
        throw contended(what);
      }
      // Unpublish; if this fails the entry dangles invisibly until the name is created again.
      try {
        names.checkAndMutate(CheckAndMutate.newBuilder(nameRow).ifEquals(FAMILY, COL_RESOURCE,
            resource).build(new Delete(nameRow).addColumns(FAMILY, COL_RESOURCE)));
      } catch (IOException e) {
        LOG.warn("{}: topic deleted; removing its name entry failed (harmless, replaced on the"
            + " next create of {}): {}", what, name, e.toString());
      }
      return true;
    } catch (IOException e) {
      throw failed(what, e);
    }
  }

  // ---- consumer groups ----------------------------------------------------------------------

  @Override
  public void registerWorker(String group, String topicResourceName, String workerId, long nowMs) {
    byte[] row = row(topicResourceName);
    byte[] qualifier = workerQualifier(group, workerId);
    put("registerWorker " + topicResourceName, row, qualifier,
        bytes(MetadataCodec.encodeWorker(nowMs)));
  }

  @Override
  public boolean removeWorker(String group, String topicResourceName, String workerId) {
    byte[] row = row(topicResourceName);
    byte[] qualifier = workerQualifier(group, workerId);
    return removeCell("removeWorker " + topicResourceName, row, qualifier, current -> true);
  }

  /** Gets of the topic's row with the column prefixes of workers, locks and offsets. */
  @Override
  public java.util.SortedSet<String> consumerGroups(String topicResourceName) {
    byte[] row = row(topicResourceName);
    java.util.TreeSet<String> groups = new java.util.TreeSet<>();
    for (String kind : List.of("w/", "l/", "o/")) {
      for (Cell cell : prefixed("consumerGroups " + topicResourceName, row, kind)) {
        String qualifier = string(CellUtil.cloneQualifier(cell));
        int end = qualifier.indexOf('/', kind.length());
        if (end > kind.length()) groups.add(MvStoreMetadataStore.unescape(qualifier.substring(kind.length(), end)));
      }
    }
    return Collections.unmodifiableSortedSet(groups);
  }

  @Override
  public Map<String, Long> workers(String group, String topicResourceName) {
    byte[] row = row(topicResourceName);
    String prefix = "w/" + MvStoreMetadataStore.escape(Objects.requireNonNull(group, "group")) + "/";
    Map<String, Long> result = new TreeMap<>();
    for (Cell cell : prefixed("workers " + topicResourceName, row, prefix)) {
      String qualifier = string(CellUtil.cloneQualifier(cell));
      result.put(MvStoreMetadataStore.unescape(qualifier.substring(prefix.length())),
          MetadataCodec.decodeWorker("worker " + qualifier, string(CellUtil.cloneValue(cell))));
    }
    return Collections.unmodifiableMap(result);
  }

  @Override
  public long timeMs() {
    String what = "timeMs (increment of " + string(ROW_CLOCK) + "/" + string(COL_CLOCK) + ")";
    checkOpen();
    try (Table meta = connection.getTable(metaTable)) {
      Result r = meta.increment(new Increment(ROW_CLOCK).addColumn(FAMILY, COL_CLOCK, 1));
      Cell cell = r.getColumnLatestCell(FAMILY, COL_CLOCK);
      if (cell == null) throw new MetadataException(what + " returned no cell", null);
      return cell.getTimestamp();
    } catch (IOException e) {
      throw failed(what, e);
    }
  }

  @Override
  public boolean lockPartition(String group, String topicResourceName, int partitionId,
      String workerId, long nowMs, long ttlMs) {
    Objects.requireNonNull(workerId, "workerId");
    byte[] row = row(topicResourceName);
    byte[] qualifier = partitionQualifier('l', group, partitionId);
    byte[] tokenQualifier = partitionQualifier('k', group, partitionId);
    String what = "lockPartition " + topicResourceName + " " + string(qualifier);
    checkOpen();
    try (Table topics = connection.getTable(topicsTable)) {
      for (int round = 0; round < MAX_CAS_ROUNDS; round++) {
        // One get of one row: the lock and the last token as of one instant.
        Result r = topics.get(new Get(row).addColumn(FAMILY, qualifier).addColumn(FAMILY, tokenQualifier));
        byte[] stored = r.getValue(FAMILY, qualifier);
        PartitionLock current = stored == null ? null
            : MetadataCodec.decodeLock("lock " + what, partitionId, string(stored));
        Put put = new Put(row);
        if (current != null && current.workerId().equals(workerId)) {
          if (current.lastRenewMs() == nowMs) return true; // also an earlier attempt of this call that landed
          put.addColumn(FAMILY, qualifier, bytes(MetadataCodec.encodeLock(workerId, nowMs, current.fencingToken())));
        } else {
          if (current != null && !current.expired(nowMs, ttlMs)) return false;
          // After an attempt of unknown outcome, a landed one shows as our lock (the branch above):
          // only this worker releases it, and a takeover needs the ttl to pass.
          byte[] last = r.getValue(FAMILY, tokenQualifier);
          long previous = Math.max(current == null ? 0 : current.fencingToken(),
              last == null ? 0 : MetadataCodec.decodeLockToken("lock token " + what, string(last)));
          long token = previous + 1;
          put.addColumn(FAMILY, qualifier, bytes(MetadataCodec.encodeLock(workerId, nowMs, token)))
              .addColumn(FAMILY, tokenQualifier, bytes(MetadataCodec.encodeLockToken(token)));
        }
        CheckAndMutate.Builder cas = CheckAndMutate.newBuilder(row);
        cas = stored == null ? cas.ifNotExists(FAMILY, qualifier) : cas.ifEquals(FAMILY, qualifier, stored);
        if (Boolean.TRUE.equals(tryCas(topics, cas.build(put)))) return true;
        // false: another writer won, null: unknown outcome; the next read decides either way
      }
      throw contended(what);
    } catch (IOException e) {
      throw failed(what, e);
    }
  }

  @Override
  public boolean unlockPartition(String group, String topicResourceName, int partitionId,
      String workerId) {
    Objects.requireNonNull(workerId, "workerId");
    byte[] row = row(topicResourceName);
    byte[] qualifier = partitionQualifier('l', group, partitionId);
    return removeCell("unlockPartition " + topicResourceName, row, qualifier, stored ->
        MetadataCodec.decodeLock("lock " + string(qualifier), partitionId, string(stored))
            .workerId().equals(workerId));
  }

  @Override
  public Map<Integer, PartitionLock> partitionLocks(String group, String topicResourceName) {
    byte[] row = row(topicResourceName);
    String prefix = "l/" + MvStoreMetadataStore.escape(Objects.requireNonNull(group, "group")) + "/";
    Map<Integer, PartitionLock> result = new TreeMap<>();
    for (Cell cell : prefixed("partitionLocks " + topicResourceName, row, prefix)) {
      String qualifier = string(CellUtil.cloneQualifier(cell));
      int partitionId = Integer.parseInt(qualifier.substring(prefix.length()));
      result.put(partitionId, MetadataCodec.decodeLock("lock " + qualifier, partitionId,
          string(CellUtil.cloneValue(cell))));
    }
    return Collections.unmodifiableMap(result);
  }

  @Override
  public boolean commitOffset(String group, String topicResourceName, int partitionId,
      String workerId, long fencingToken, long offset, long nowMs, long ttlMs) {
    Objects.requireNonNull(workerId, "workerId");
    byte[] row = row(topicResourceName);
    byte[] lockQualifier = partitionQualifier('l', group, partitionId);
    byte[] offsetQualifier = partitionQualifier('o', group, partitionId);
    byte[] value = bytes(MetadataCodec.encodeOffset(offset));
    String what = "commitOffset " + topicResourceName + " " + string(offsetQualifier);
    checkOpen();
    try (Table topics = connection.getTable(topicsTable)) {
      boolean unknown = false;
      for (int round = 0; round < MAX_CAS_ROUNDS; round++) {
        Result r = topics.get(new Get(row).addColumn(FAMILY, lockQualifier)
            .addColumn(FAMILY, offsetQualifier));
        byte[] stored = r.getValue(FAMILY, lockQualifier);
        PartitionLock lock = stored == null ? null
            : MetadataCodec.decodeLock("lock " + what, partitionId, string(stored));
        if (lock == null || !lock.workerId().equals(workerId) || lock.fencingToken() != fencingToken
            || lock.expired(nowMs, ttlMs)) {
          if (unknown && Arrays.equals(r.getValue(FAMILY, offsetQualifier), value)) {
            // An attempt whose outcome was unknown may have committed before the lock moved.
            throw unknownOutcome(what, null);
          }
          return false;
        }
        // Same row: the offset is written iff the lock cell is still exactly what was checked.
        Boolean ok = tryCas(topics, CheckAndMutate.newBuilder(row)
            .ifEquals(FAMILY, lockQualifier, stored)
            .build(new Put(row).addColumn(FAMILY, offsetQualifier, value)));
        if (ok == null) {
          unknown = true;
        } else if (ok) {
          return true;
        }
      }
      throw contended(what);
    } catch (IOException e) {
      throw failed(what, e);
    }
  }

  @Override
  public void setOffset(String group, String topicResourceName, int partitionId, long offset) {
    put("setOffset " + topicResourceName, row(topicResourceName),
        partitionQualifier('o', group, partitionId), bytes(MetadataCodec.encodeOffset(offset)));
  }

  @Override
  public OptionalLong committedOffset(String group, String topicResourceName, int partitionId) {
    byte[] row = row(topicResourceName);
    byte[] qualifier = partitionQualifier('o', group, partitionId);
    String what = "committedOffset " + topicResourceName + " " + string(qualifier);
    checkOpen();
    try (Table topics = connection.getTable(topicsTable)) {
      byte[] value = get(topics, row, qualifier);
      return value == null ? OptionalLong.empty()
          : OptionalLong.of(MetadataCodec.decodeOffset("offset " + what, string(value)));
    } catch (IOException e) {
      throw failed(what, e);
    }
  }

  // ---- partition log next offsets (storage) ---------------------------------------------------

  @Override
  public void raisePartitionNextOffset(String topicResourceName, int partitionId, long nextOffset) {
    if (nextOffset < 0) throw new IllegalArgumentException("nextOffset must be >= 0, was " + nextOffset);
    byte[] row = row(topicResourceName);
    byte[] qualifier = nextOffsetQualifier(partitionId);
    String what = "raisePartitionNextOffset " + topicResourceName + " " + string(qualifier);
    compareAndSet(what, topicsTable, row, qualifier, (stored, unknown) -> {
      if (stored != null && MetadataCodec.decodeOffset("next offset " + what, string(stored)) >= nextOffset) {
        return CasStep.done(null); // already at or above: also how an applied write of unknown outcome shows up
      }
      return CasStep.write(new Put(row).addColumn(FAMILY, qualifier, bytes(MetadataCodec.encodeOffset(nextOffset))),
          null);
    });
  }

  @Override
  public OptionalLong partitionNextOffset(String topicResourceName, int partitionId) {
    byte[] row = row(topicResourceName);
    byte[] qualifier = nextOffsetQualifier(partitionId);
    String what = "partitionNextOffset " + topicResourceName + " " + string(qualifier);
    checkOpen();
    try (Table topics = connection.getTable(topicsTable)) {
      byte[] stored = get(topics, row, qualifier);
      return stored == null ? OptionalLong.empty()
          : OptionalLong.of(MetadataCodec.decodeOffset("next offset " + what, string(stored)));
    } catch (IOException e) {
      throw failed(what, e);
    }
  }

  // ---- partition owner epochs (cluster) ------------------------------------------------------

  /**
   * {@inheritDoc}
   *
   * <p>Here: the cell {@code e/<10-digit partition>} of the topic's row holds {@code
   * <epoch>:<nodeId>}; a claim writes epoch + 1 with {@link #compareAndSet} on the exact bytes read.
   * A claim whose write had an unknown outcome and then finds this node's id stored made that write
   * (no other node writes this node's id).
   */
  @Override
  public PartitionOwner claimPartitionOwner(String topicResourceName, int partitionId, String nodeId) {
    Objects.requireNonNull(nodeId, "nodeId");
    byte[] row = row(topicResourceName);
    byte[] qualifier = ownerQualifier(partitionId);
    String what = "claimPartitionOwner " + topicResourceName + " " + string(qualifier);
    return compareAndSet(what, topicsTable, row, qualifier, (stored, unknown) -> {
      PartitionOwner current = stored == null ? null : PartitionOwner.decode(what, string(stored));
      if (unknown && current != null && current.nodeId().equals(nodeId)) return CasStep.done(current);
      PartitionOwner next = new PartitionOwner(current == null ? 1 : current.epoch() + 1, nodeId);
      return CasStep.write(new Put(row).addColumn(FAMILY, qualifier, bytes(next.encode())), next);
    });
  }

  @Override
  public Optional<PartitionOwner> partitionOwner(String topicResourceName, int partitionId) {
    byte[] row = row(topicResourceName);
    byte[] qualifier = ownerQualifier(partitionId);
    String what = "partitionOwner " + topicResourceName + " " + string(qualifier);
    checkOpen();
    try (Table topics = connection.getTable(topicsTable)) {
      byte[] stored = get(topics, row, qualifier);
      return stored == null ? Optional.empty() : Optional.of(PartitionOwner.decode(what, string(stored)));
    } catch (IOException e) {
      throw failed(what, e);
    }
  }

  static byte[] ownerQualifier(int partitionId) {
    if (partitionId < 0) {
      throw new IllegalArgumentException("partitionId must be >= 0, was " + partitionId);
    }
    return bytes("e/" + String.format("%010d", partitionId));
  }

  static byte[] nextOffsetQualifier(int partitionId) {
    if (partitionId < 0) {
      throw new IllegalArgumentException("partitionId must be >= 0, was " + partitionId);
    }
    return bytes("n/" + String.format("%010d", partitionId));
  }

  // ---- credentials --------------------------------------------------------------------------

  /**
   * {@inheritDoc}
   *
   * <p>Here, if the outcome of the conditional put is unknown and the stored credential turns
   * out equal to {@code credential}, the call reports true: the store holds exactly what a
   * successful call leaves.
   */
  @Override
  public boolean putCredentialIfAbsent(Credential credential) {
    Objects.requireNonNull(credential, "credential");
    Objects.requireNonNull(credential.secretKeyId(), "credential.secretKeyId");
    checkOpen();
    String what = "putCredentialIfAbsent " + credential.secretKeyId();
    byte[] row = bytes(credential.secretKeyId());
    byte[] value = bytes(MetadataCodec.encodeCredential(credential));
    try (Table credentials = connection.getTable(credentialsTable)) {
      Boolean ok = tryCas(credentials, CheckAndMutate.newBuilder(row)
          .ifNotExists(FAMILY, COL_CREDENTIAL)
          .build(new Put(row).addColumn(FAMILY, COL_CREDENTIAL, value)));
      if (ok != null) {
        return ok;
      }
      return Arrays.equals(get(credentials, row, COL_CREDENTIAL), value);
    } catch (IOException e) {
      throw failed(what, e);
    }
  }

  @Override
  public Optional<Credential> credential(String secretKeyId) {
    Objects.requireNonNull(secretKeyId, "secretKeyId");
    checkOpen();
    try (Table credentials = connection.getTable(credentialsTable)) {
      byte[] value = get(credentials, bytes(secretKeyId), COL_CREDENTIAL);
      return value == null ? Optional.empty() : Optional.of(
          MetadataCodec.decodeCredential("credential " + secretKeyId, string(value)));
    } catch (IOException e) {
      throw failed("credential " + secretKeyId, e);
    }
  }

  @Override
  public List<Credential> credentials() {
    checkOpen();
    try (Table credentials = connection.getTable(credentialsTable);
         ResultScanner scanner = credentials.getScanner(new Scan().addColumn(FAMILY, COL_CREDENTIAL))) {
      List<Credential> result = new ArrayList<>();
      for (Result r : scanner) {
        result.add(MetadataCodec.decodeCredential("credential " + string(r.getRow()),
            string(r.getValue(FAMILY, COL_CREDENTIAL))));
      }
      // HBase orders rows by UTF-8 bytes; the contract orders by String.compareTo.
      result.sort(Comparator.comparing(Credential::secretKeyId));
      return Collections.unmodifiableList(result);
    } catch (IOException e) {
      throw failed("credentials", e);
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>Here: one {@code checkAndMutate} comparing the stored value with the encoding of {@code
   * expected} (encoding is deterministic, and a value written before the optional fields existed
   * encodes the same, since unset optional fields are not written). An unknown outcome is
   * resolved by reading: true iff the store holds {@code updated} (a new secret is random, so no
   * other call leaves the same value).
   */
  @Override
  public boolean replaceCredential(Credential expected, Credential updated) {
    Objects.requireNonNull(expected, "expected");
    Objects.requireNonNull(updated, "updated");
    MvStoreMetadataStore.checkSameCredential(expected, updated);
    checkOpen();
    String what = "replaceCredential " + expected.secretKeyId();
    byte[] row = bytes(expected.secretKeyId());
    byte[] value = bytes(MetadataCodec.encodeCredential(updated));
    try (Table credentials = connection.getTable(credentialsTable)) {
      Boolean ok = tryCas(credentials, CheckAndMutate.newBuilder(row)
          .ifEquals(FAMILY, COL_CREDENTIAL, bytes(MetadataCodec.encodeCredential(expected)))
          .build(new Put(row).addColumn(FAMILY, COL_CREDENTIAL, value)));
      if (ok != null) {
        return ok;
      }
      return Arrays.equals(get(credentials, row, COL_CREDENTIAL), value);
    } catch (IOException e) {
      throw failed(what, e);
    }
  }

  // ---- user quotas --------------------------------------------------------------------------
  // Rows of the credentials table under USER_QUOTA_ROW_PREFIX, column "q": credentials() scans
  // column "c" only, so it never sees them.

  @Override
  public Optional<RateQuota> userQuota(String accountId) {
    Objects.requireNonNull(accountId, "accountId");
    checkOpen();
    try (Table credentials = connection.getTable(credentialsTable)) {
      byte[] value = get(credentials, bytes(USER_QUOTA_ROW_PREFIX + accountId), COL_USER_QUOTA);
      return value == null ? Optional.empty()
          : Optional.of(MetadataCodec.decodeQuota("user quota " + accountId, string(value)));
    } catch (IOException e) {
      throw failed("userQuota " + accountId, e);
    }
  }

  @Override
  public Map<String, RateQuota> userQuotas() {
    checkOpen();
    try (Table credentials = connection.getTable(credentialsTable);
         ResultScanner scanner = credentials.getScanner(new Scan().addColumn(FAMILY, COL_USER_QUOTA))) {
      Map<String, RateQuota> result = new TreeMap<>();
      for (Result r : scanner) {
        String account = string(r.getRow()).substring(USER_QUOTA_ROW_PREFIX.length());
        result.put(account, MetadataCodec.decodeQuota("user quota " + account,
            string(r.getValue(FAMILY, COL_USER_QUOTA))));
      }
      return Collections.unmodifiableMap(result);
    } catch (IOException e) {
      throw failed("userQuotas", e);
    }
  }

  @Override
  public void putUserQuota(String accountId, RateQuota quota) {
    Objects.requireNonNull(accountId, "accountId");
    checkOpen();
    try (Table credentials = connection.getTable(credentialsTable)) {
      byte[] row = bytes(USER_QUOTA_ROW_PREFIX + accountId);
      credentials.put(new Put(row).addColumn(FAMILY, COL_USER_QUOTA, bytes(MetadataCodec.encodeQuota(quota))));
    } catch (IOException e) {
      throw failed("putUserQuota " + accountId, e);
    }
  }

  @Override
  public boolean deleteUserQuota(String accountId) {
    Objects.requireNonNull(accountId, "accountId");
    checkOpen();
    try (Table credentials = connection.getTable(credentialsTable)) {
      byte[] row = bytes(USER_QUOTA_ROW_PREFIX + accountId);
      if (get(credentials, row, COL_USER_QUOTA) == null) return false;
      credentials.delete(new Delete(row).addColumns(FAMILY, COL_USER_QUOTA)); // idempotent
      return true;
    } catch (IOException e) {
      throw failed("deleteUserQuota " + accountId, e);
    }
  }

  // ---- topic deletion tombstones and health ------------------------------------------------

  /**
   * {@inheritDoc}
   *
   * <p>Here: a conditional put if absent; an unknown outcome is resolved by reading (any
   * tombstone there satisfies the contract).
   */
  @Override
  public void putTopicTombstone(String topicResourceName, long nowMs) {
    byte[] row = row(topicResourceName);
    String what = "putTopicTombstone " + topicResourceName;
    checkOpen();
    try (Table deletions = connection.getTable(topicDeletionsTable)) {
      Boolean ok = tryCas(deletions, CheckAndMutate.newBuilder(row)
          .ifNotExists(FAMILY, COL_TOMBSTONE)
          .build(new Put(row).addColumn(FAMILY, COL_TOMBSTONE,
              bytes(MetadataCodec.encodeTombstone(nowMs)))));
      if (ok == null && get(deletions, row, COL_TOMBSTONE) == null) {
        throw new MetadataException(what + ": writing the tombstone to HBase failed; retrying is"
            + " safe", null);
      }
    } catch (IOException e) {
      throw failed(what, e);
    }
  }

  @Override
  public Map<String, Long> topicTombstones() {
    checkOpen();
    try (Table deletions = connection.getTable(topicDeletionsTable);
         ResultScanner scanner = deletions.getScanner(new Scan().addColumn(FAMILY,
             COL_TOMBSTONE))) {
      Map<String, Long> result = new TreeMap<>();
      for (Result r : scanner) {
        String resourceName = string(r.getRow());
        result.put(resourceName, MetadataCodec.decodeTombstone("tombstone " + resourceName,
            string(r.getValue(FAMILY, COL_TOMBSTONE))));
      }
      return Collections.unmodifiableMap(result);
    } catch (IOException e) {
      throw failed("topicTombstones", e);
    }
  }

  @Override
  public boolean removeTopicTombstone(String topicResourceName) {
    byte[] row = row(topicResourceName);
    String what = "removeTopicTombstone " + topicResourceName;
    checkOpen();
    try (Table deletions = connection.getTable(topicDeletionsTable)) {
      if (get(deletions, row, COL_TOMBSTONE) == null) {
        return false;
      }
      deletions.delete(new Delete(row)); // idempotent: the client may retry it
      return true;
    } catch (IOException e) {
      throw failed(what, e);
    }
  }

  /** {@inheritDoc} Here: only whether the store and its connection are open (no RPC). */
  @Override
  public Optional<String> probe() {
    if (closed) {
      return Optional.of("HBase metadata store (namespace " + namespace + ") is closed");
    }
    if (connection.isClosed() || connection.isAborted()) {
      return Optional.of("the HBase connection of namespace " + namespace + " is "
          + (connection.isAborted() ? "aborted" : "closed"));
    }
    return Optional.empty();
  }

  // ---- lifecycle ----------------------------------------------------------------------------

  /** Closes the HBase connection if this store opened it. Idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (ownsConnection) {
      try {
        connection.close();
      } catch (IOException e) {
        throw new MetadataException("closing the HBase connection failed (no change is lost)", e);
      }
    }
  }

  String namespace() {
    return namespace;
  }

  @Override
  public String toString() {
    return "HBaseMetadataStore[namespace " + namespace + "]";
  }

  // ---- helpers ------------------------------------------------------------------------------

  private interface CellCondition {
    boolean holds(byte[] stored);
  }

  /**
   * Deletes {@code qualifier} of {@code row} iff it exists and {@code condition} holds for it,
   * conditionally on its exact bytes. @return false if it did not exist or the condition failed
   */
  private boolean removeCell(String what, byte[] row, byte[] qualifier, CellCondition condition) {
    return compareAndSet(what, topicsTable, row, qualifier, (stored, unknown) -> {
      if (stored == null || !condition.holds(stored)) {
        if (unknown) {
          // The earlier attempt may have removed it, or someone else did in between.
          throw unknownOutcome(what, null);
        }
        return CasStep.done(false);
      }
      return CasStep.write(new Delete(row).addColumns(FAMILY, qualifier), true);
    });
  }

  /**
   * What one round of {@link #compareAndSet} does after reading the cell: finish with a result
   * without writing ({@code mutation} null), or write {@code mutation} (a Put or Delete of the same
   * row) iff the cell is still what was read, and finish with {@code result} if it was.
   */
  private record CasStep<T>(org.apache.hadoop.hbase.client.Mutation mutation, T result) {
    static <T> CasStep<T> done(T result) {
      return new CasStep<>(null, result);
    }

    static <T> CasStep<T> write(org.apache.hadoop.hbase.client.Mutation mutation, T result) {
      return new CasStep<>(Objects.requireNonNull(mutation, "mutation"), result);
    }
  }

  /** Decides a {@link CasStep} from the stored bytes (null: absent). */
  private interface CasRound<T> {
    /**
     * @param unknown whether an earlier round's write had an unknown outcome (it may have landed:
     *     the decision must recognise its own write, or throw {@link #unknownOutcome})
     */
    CasStep<T> decide(byte[] stored, boolean unknown);
  }

  /**
   * The one read-decide-conditionally-write loop of this store (see "Atomicity" in the class
   * comment): reads {@code qualifier} of {@code row}, lets {@code round} decide, and writes its
   * mutation on the condition that the cell still holds exactly the bytes read (or is still
   * absent). A lost race or an unknown outcome reads again, at most {@link #MAX_CAS_ROUNDS} times.
   */
  private <T> T compareAndSet(String what, TableName table, byte[] row, byte[] qualifier, CasRound<T> round) {
    checkOpen();
    try (Table t = connection.getTable(table)) {
      boolean unknown = false;
      for (int r = 0; r < MAX_CAS_ROUNDS; r++) {
        byte[] stored = get(t, row, qualifier);
        CasStep<T> step = round.decide(stored, unknown);
        if (step.mutation() == null) return step.result();
        CheckAndMutate.Builder cas = CheckAndMutate.newBuilder(row);
        cas = stored == null ? cas.ifNotExists(FAMILY, qualifier) : cas.ifEquals(FAMILY, qualifier, stored);
        Boolean ok = tryCas(t, step.mutation() instanceof Put put ? cas.build(put)
            : cas.build((Delete) step.mutation()));
        if (ok == null) {
          unknown = true;
        } else if (ok) {
          return step.result();
        }
        // false: another writer won, null: unknown outcome; either way the next read decides
      }
      throw contended(what);
    } catch (IOException e) {
      throw failed(what, e);
    }
  }

  /** An unconditional, idempotent put (the HBase client retries it on its own). */
  private void put(String what, byte[] row, byte[] qualifier, byte[] value) {
    checkOpen();
    try (Table topics = connection.getTable(topicsTable)) {
      topics.put(new Put(row).addColumn(FAMILY, qualifier, value));
    } catch (IOException e) {
      throw failed(what, e);
    }
  }

  private List<Cell> prefixed(String what, byte[] row, String qualifierPrefix) {
    checkOpen();
    try (Table topics = connection.getTable(topicsTable)) {
      Result r = topics.get(new Get(row).addFamily(FAMILY)
          .setFilter(new ColumnPrefixFilter(bytes(qualifierPrefix))));
      return r.isEmpty() ? List.of() : r.listCells();
    } catch (IOException e) {
      throw failed(what, e);
    }
  }

  private static byte[] get(Table table, byte[] row, byte[] qualifier) throws IOException {
    return table.get(new Get(row).addColumn(FAMILY, qualifier)).getValue(FAMILY, qualifier);
  }

  /**
   * One conditional mutation. @return its outcome, or null if unknown (the RPC failed after the
   * client's own retries: it may or may not have been applied); the caller re-reads to decide
   */
  private static Boolean tryCas(Table table, CheckAndMutate cas) throws InterruptedIOException {
    try {
      return table.checkAndMutate(cas).isSuccess();
    } catch (InterruptedIOException e) {
      throw e;
    } catch (IOException e) {
      LOG.warn("Conditional mutation of row {} failed, outcome unknown; re-reading: {}",
          string(cas.getRow()), e.toString());
      return null;
    }
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("HBase metadata store (namespace " + namespace
          + ") is closed");
    }
  }

  private MetadataException failed(String what, IOException e) {
    if (e instanceof InterruptedIOException) {
      Thread.currentThread().interrupt();
    }
    return new MetadataException(what + " failed in HBase (namespace " + namespace + "): " + e
        + "; no change was made unless stated otherwise, retrying is safe", e);
  }

  private static MetadataException unknownOutcome(String what, Throwable cause) {
    return new MetadataException(what + ": an HBase write failed with an unknown outcome that"
        + " re-reading cannot safely resolve (it may or may not have taken effect); re-read and"
        + " retry", cause);
  }

  private static MetadataException contended(String what) {
    return new MetadataException(what + ": gave up after " + MAX_CAS_ROUNDS + " conditional"
        + " writes lost to concurrent changes", null);
  }

  private static void requireTopic(TopicRecord topic) {
    Objects.requireNonNull(topic, "topic");
    Objects.requireNonNull(topic.name(), "topic.name");
    Objects.requireNonNull(topic.resourceName(), "topic.resourceName");
  }

  static byte[] row(String topicResourceName) {
    return bytes(Objects.requireNonNull(topicResourceName, "topicResourceName"));
  }

  static byte[] workerQualifier(String group, String workerId) {
    return bytes("w/" + MvStoreMetadataStore.escape(Objects.requireNonNull(group, "group")) + "/"
        + MvStoreMetadataStore.escape(Objects.requireNonNull(workerId, "workerId")));
  }

  static byte[] partitionQualifier(char kind, String group, int partitionId) {
    if (partitionId < 0) {
      throw new IllegalArgumentException("partitionId must be >= 0, was " + partitionId);
    }
    return bytes(kind + "/" + MvStoreMetadataStore.escape(Objects.requireNonNull(group, "group"))
        + "/" + String.format("%010d", partitionId));
  }

  static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static String string(byte[] b) {
    return new String(b, StandardCharsets.UTF_8);
  }

}
