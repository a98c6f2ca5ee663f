package io.talos.server.metadata;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.client.TalosClient;
import io.talos.client.TalosClientConfig;
import io.talos.client.TalosException;
import io.talos.common.config.ConfigException;
import io.talos.server.ServerConfig;
import io.talos.server.TalosServer;
import io.talos.server.TestServers;
import io.talos.thrift.ErrorCode;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseTestingUtility;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.CheckAndMutate;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptor;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@link MetadataStore} contract on {@link HBaseMetadataStore} against one HBase mini cluster
 * per class (about 15 s to start), plus what is HBase's own: schema creation racing between
 * instances, two store instances (two connections, as two nodes) racing on the same rows, the
 * crash window of a topic delete, same-timestamp delete and put, conditional writes whose
 * replies are lost, HBase failures surfacing as {@link MetadataException} (and on the wire as
 * HBASE_OPERATION_FAILED), and a server selecting the store by configuration.
 *
 * <p>Every contract test gets an empty store: the data tables of the shared namespace are emptied
 * and a new store (with its own connection) is opened on them.
 */
class HBaseMetadataStoreTest extends MetadataStoreContractTest {
  private static final String NAMESPACE = "talos_test";
  private static final AtomicInteger NAMESPACES = new AtomicInteger();

  private static HBaseTestingUtility hbase;
  private static Connection admin;

  @BeforeAll
  static void startHBase() throws Exception {
    hbase = new HBaseTestingUtility();
    Configuration conf = hbase.getConfiguration();
    conf.setInt("hbase.master.info.port", -1);
    conf.setInt("hbase.regionserver.info.port", -1);
    hbase.startMiniCluster();
    admin = ConnectionFactory.createConnection(hbase.getConfiguration());
  }

  @AfterAll
  static void stopHBase() throws Exception {
    if (admin != null) {
      admin.close();
    }
    if (hbase != null) {
      hbase.shutdownMiniCluster();
    }
  }

  /** A client configuration for the mini cluster, with short timeouts so failures show fast. */
  private static Configuration clientConf() {
    Configuration conf = new Configuration(hbase.getConfiguration());
    conf.setInt("hbase.client.retries.number", 3);
    conf.setInt("hbase.client.pause", 100);
    conf.setInt("hbase.client.operation.timeout", 10_000);
    conf.setInt("hbase.rpc.timeout", 5_000);
    return conf;
  }

  @Override
  protected MetadataStore newStore() {
    try {
      if (admin.getAdmin().tableExists(TableName.valueOf(NAMESPACE,
          HBaseMetadataStore.TABLE_TOPICS))) {
        for (String table : List.of(HBaseMetadataStore.TABLE_TOPIC_NAMES,
            HBaseMetadataStore.TABLE_TOPICS, HBaseMetadataStore.TABLE_CREDENTIALS,
            HBaseMetadataStore.TABLE_TOPIC_DELETIONS)) {
          emptyTable(TableName.valueOf(NAMESPACE, table));
        }
      }
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    return HBaseMetadataStore.open(clientConf(), NAMESPACE);
  }

  @Override
  protected MetadataStore reopen(MetadataStore old) {
    old.close();
    return HBaseMetadataStore.open(clientConf(), NAMESPACE);
  }

  private static void emptyTable(TableName name) throws IOException {
    try (Table table = admin.getTable(name);
         ResultScanner scanner = table.getScanner(new Scan())) {
      List<Delete> deletes = new ArrayList<>();
      for (Result r : scanner) {
        deletes.add(new Delete(r.getRow()));
      }
      table.delete(deletes);
    }
  }

  private static String freshNamespace() {
    return "talos_t" + NAMESPACES.incrementAndGet();
  }

  // ---- schema -------------------------------------------------------------------------------

  @Test
  void ownerEpochClaimsRacingFromTwoNodesGetDistinctIncreasingEpochs() throws Exception {
    String ns = freshNamespace();
    try (HBaseMetadataStore a = HBaseMetadataStore.open(clientConf(), ns);
        HBaseMetadataStore b = HBaseMetadataStore.open(clientConf(), ns)) {
      assertEquals(Optional.empty(), a.partitionOwner("t#x#1", 3));
      assertEquals(new PartitionOwner(1, "n1"), a.claimPartitionOwner("t#x#1", 3, "n1"));
      List<PartitionOwner> claims = java.util.Collections.synchronizedList(new ArrayList<>());
      Thread[] threads = new Thread[4];
      for (int i = 0; i < threads.length; i++) {
        HBaseMetadataStore s = i % 2 == 0 ? a : b;
        String node = "n" + (i + 2);
        threads[i] = new Thread(() -> claims.add(s.claimPartitionOwner("t#x#1", 3, node)));
        threads[i].start();
      }
      for (Thread t : threads) t.join();
      assertEquals(List.of(2L, 3L, 4L, 5L), claims.stream().map(PartitionOwner::epoch).sorted().toList(),
          "every claim got its own epoch: " + claims);
      PartitionOwner last = claims.stream().max(java.util.Comparator.comparingLong(PartitionOwner::epoch))
          .orElseThrow();
      assertEquals(Optional.of(last), b.partitionOwner("t#x#1", 3));
      assertEquals(Optional.empty(), b.partitionOwner("t#x#1", 4), "per partition");
    }
  }

  @Test
  void createsTheNamespaceTablesAndSchemaVersionOnFirstOpen() throws Exception {
    String ns = freshNamespace();
    try (HBaseMetadataStore s = HBaseMetadataStore.open(clientConf(), ns)) {
      assertTrue(s.createTopic(topic("orders", "s1")));
    }
    try (Admin a = admin.getAdmin()) {
      for (String t : List.of("meta", "topic_names", "topics", "credentials", "topic_deletions")) {
        TableName name = TableName.valueOf(ns, t);
        assertTrue(a.tableExists(name), t);
        ColumnFamilyDescriptor family = a.getDescriptor(name)
            .getColumnFamily(HBaseMetadataStore.FAMILY);
        assertEquals(1, family.getMaxVersions(), t);
        assertTrue(family.isNewVersionBehavior(), t);
      }
    }
    try (Table meta = admin.getTable(TableName.valueOf(ns, "meta"))) {
      assertEquals("1", HBaseMetadataStore.string(meta.get(new Get(HBaseMetadataStore.ROW_SCHEMA))
          .getValue(HBaseMetadataStore.FAMILY, HBaseMetadataStore.COL_VERSION)));
    }
    // A second open finds everything in place and sees the data.
    try (HBaseMetadataStore s = HBaseMetadataStore.open(clientConf(), ns)) {
      assertEquals(Optional.of(topic("orders", "s1")), s.topic("orders"));
    }
  }

  @Test
  void racingFirstOpensFromSeveralInstancesAllSucceedOnOneSchema() throws Exception {
    String ns = freshNamespace();
    List<HBaseMetadataStore> stores = race(4, i -> HBaseMetadataStore.open(clientConf(), ns));
    try {
      // All four work on the same tables: each sees what the others wrote.
      for (int i = 0; i < stores.size(); i++) {
        assertTrue(stores.get(i).createTopic(topic("t" + i, "s")));
      }
      for (HBaseMetadataStore s : stores) {
        assertEquals(4, s.topics().size());
      }
    } finally {
      stores.forEach(HBaseMetadataStore::close);
    }
  }

  @Test
  void refusesANamespaceOfANewerSchemaVersion() throws Exception {
    String ns = freshNamespace();
    HBaseMetadataStore.open(clientConf(), ns).close();
    try (Table meta = admin.getTable(TableName.valueOf(ns, "meta"))) {
      meta.put(new Put(HBaseMetadataStore.ROW_SCHEMA).addColumn(HBaseMetadataStore.FAMILY,
          HBaseMetadataStore.COL_VERSION, HBaseMetadataStore.bytes("2")));
    }
    MetadataException e = assertThrows(MetadataException.class,
        () -> HBaseMetadataStore.open(clientConf(), ns));
    assertTrue(e.getMessage().contains("schema version 2"), e.getMessage());
    assertTrue(e.getMessage().contains("newer"), e.getMessage());
  }

  // ---- two instances, as two nodes ----------------------------------------------------------

  @Test
  void twoInstancesRacingToCreateOneTopicHaveExactlyOneWinner() throws Exception {
    try (MetadataStore other = HBaseMetadataStore.open(clientConf(), NAMESPACE)) {
      List<Boolean> created = race(THREADS,
          i -> (i % 2 == 0 ? store : other).createTopic(topic("orders", "s" + i)));
      assertEquals(1, created.stream().filter(b -> b).count(), created.toString());
      TopicRecord winner = topic("orders", "s" + created.indexOf(true));
      assertEquals(Optional.of(winner), store.topic("orders"));
      assertEquals(Optional.of(winner), other.topic("orders"));
      // Losers withdrew their unpublished records: only the winner's row has one.
      try (Table topics = admin.getTable(TableName.valueOf(NAMESPACE, "topics"));
           ResultScanner rows = topics.getScanner(new Scan().addColumn(HBaseMetadataStore.FAMILY,
               HBaseMetadataStore.COL_TOPIC))) {
        List<String> withRecord = new ArrayList<>();
        rows.forEach(r -> withRecord.add(HBaseMetadataStore.string(r.getRow())));
        assertEquals(List.of(winner.resourceName()), withRecord);
      }
    }
  }

  @Test
  void twoInstancesRacingForLocksHaveExactlyOneHolderPerPartition() throws Exception {
    String res = topic("orders", "s1").resourceName();
    try (MetadataStore other = HBaseMetadataStore.open(clientConf(), NAMESPACE)) {
      int partitions = 4;
      // Every thread tries every partition, half through each instance.
      List<List<Boolean>> results = race(THREADS, i -> {
        MetadataStore s = i % 2 == 0 ? store : other;
        List<Boolean> got = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
          got.add(s.lockPartition(GROUP, res, p, "w" + i, 100, TTL_MS));
        }
        return got;
      });
      Map<Integer, PartitionLock> locks = other.partitionLocks(GROUP, res);
      assertEquals(partitions, locks.size());
      for (int p = 0; p < partitions; p++) {
        int winners = 0;
        for (int i = 0; i < THREADS; i++) {
          if (results.get(i).get(p)) {
            winners++;
            assertEquals("w" + i, locks.get(p).workerId(), "partition " + p);
          }
        }
        assertEquals(1, winners, "partition " + p + ": " + results);
      }
      // Takeover after expiry, racing across instances: again exactly one.
      List<Boolean> takeovers = race(THREADS, i -> (i % 2 == 0 ? store : other)
          .lockPartition(GROUP, res, 0, "late" + i, 100 + TTL_MS, TTL_MS));
      assertEquals(1, takeovers.stream().filter(b -> b).count(), takeovers.toString());
      String holder = "late" + takeovers.indexOf(true);
      assertEquals(holder, store.partitionLocks(GROUP, res).get(0).workerId());
      // Only the new holder commits, through either instance.
      assertTrue(other.commitOffset(GROUP, res, 0, holder, 2, 5, 100 + TTL_MS, TTL_MS));
      assertFalse(store.commitOffset(GROUP, res, 0, locks.get(0).workerId(), 1, 6,
          100 + TTL_MS, 100 * TTL_MS));
      assertEquals(OptionalLong.of(5), store.committedOffset(GROUP, res, 0));
    }
  }

  // ---- HBase specifics ----------------------------------------------------------------------

  @Test
  void aCellWrittenAfterADeleteOfTheSameTimestampIsVisible() throws Exception {
    // HBase cell timestamps are server milliseconds: an unlock and the next lock can get the
    // same one. Without NEW_VERSION_BEHAVIOR the unlock's delete marker would hide that lock.
    String res = topic("orders", "s1").resourceName();
    byte[] row = HBaseMetadataStore.row(res);
    byte[] lock = HBaseMetadataStore.partitionQualifier('l', GROUP, 0);
    long ts = System.currentTimeMillis();
    try (Table topics = admin.getTable(TableName.valueOf(NAMESPACE, "topics"))) {
      topics.put(new Put(row).addColumn(HBaseMetadataStore.FAMILY, lock, ts,
          HBaseMetadataStore.bytes(MetadataCodec.encodeLock("w1", 100, 1))));
      topics.delete(new Delete(row).addColumns(HBaseMetadataStore.FAMILY, lock, ts));
      topics.put(new Put(row).addColumn(HBaseMetadataStore.FAMILY, lock, ts,
          HBaseMetadataStore.bytes(MetadataCodec.encodeLock("w2", 200, 1))));
    }
    assertEquals(Map.of(0, new PartitionLock(0, "w2", 200, 1)), store.partitionLocks(GROUP, res));
    // The same through the store, as fast as it goes, including a whole-row delete.
    for (int i = 0; i < 20; i++) {
      assertTrue(store.unlockPartition(GROUP, res, 0, i == 0 ? "w2" : "w1"));
      assertTrue(store.lockPartition(GROUP, res, 0, "w1", i, TTL_MS), "round " + i);
    }
    TopicRecord t = topic("orders", "s1");
    assertTrue(store.createTopic(t));
    assertTrue(store.deleteTopic("orders", res));
    store.setOffset(GROUP, res, 0, 9);
    assertEquals(OptionalLong.of(9), store.committedOffset(GROUP, res, 0));
  }

  @Test
  void aNameEntryLeftByAnInterruptedDeleteIsInvisibleAndReplacedOnCreate() throws Exception {
    TopicRecord first = topic("orders", "s1");
    assertTrue(store.createTopic(first));
    store.setOffset(GROUP, first.resourceName(), 0, 3);
    // A delete that died after its commit point (the row delete), before unpublishing the name.
    try (Table topics = admin.getTable(TableName.valueOf(NAMESPACE, "topics"))) {
      topics.delete(new Delete(HBaseMetadataStore.bytes(first.resourceName())));
    }
    assertEquals(Optional.empty(), store.topic("orders"));
    assertEquals(List.of(), store.topics());
    assertFalse(store.deleteTopic("orders", first.resourceName()));
    assertFalse(store.replaceTopic(first, first.withPartitionCount(9)));
    assertEquals(OptionalLong.empty(), store.committedOffset(GROUP, first.resourceName(), 0));

    TopicRecord second = topic("orders", "s2");
    assertTrue(store.createTopic(second));
    assertEquals(Optional.of(second), store.topic("orders"));
    assertEquals(List.of(second), store.topics());
  }

  @Test
  void aResourceNameReusedWithAnotherRecordIsRefused() {
    TopicRecord t = topic("orders", "s1");
    assertTrue(store.createTopic(t));
    assertFalse(store.createTopic(t));
    TopicRecord sameResource = new TopicRecord("other", t.resourceName(), "alice", 1, 60,
        Map.of(), 0L, 0);
    assertThrows(MetadataException.class, () -> store.createTopic(sameResource));
    assertEquals(Optional.empty(), store.topic("other"));
  }

  // ---- selected by the server's configuration ----------------------------------------------

  /** A server keeping its metadata in namespace {@code ns} of the mini cluster. */
  private static TalosServer startOnHBase(Path dataDir, String ns) throws Exception {
    String quorum = "127.0.0.1:" + hbase.getConfiguration().get("hbase.zookeeper.property.clientPort");
    return TestServers.start(dataDir,
        ServerConfig.METADATA_STORE, "hbase",
        ServerConfig.METADATA_HBASE_ZOOKEEPER_QUORUM, quorum,
        ServerConfig.METADATA_HBASE_NAMESPACE, ns,
        ServerConfig.METADATA_HBASE_OPERATION_TIMEOUT_MS, "5000",
        "hbase.client.retries.number", "3");
  }

  private static TalosClient adminClient(TalosServer server, Path dataDir) {
    return TalosClient.create(TalosClientConfig.builder()
        .endpoint(server.endpoint().toString())
        .credentialFile(dataDir.resolve("admin-credential.properties"))
        .build());
  }

  @Test
  void aServerWithMetadataStoreHbaseKeepsItsMetadataInHBase(@TempDir Path dataDir)
      throws Exception {
    String ns = freshNamespace();
    try (TalosServer server = startOnHBase(dataDir, ns); TalosClient client = adminClient(server, dataDir)) {
      assertTrue(((CachingMetadataStore) server.metadata()).delegate() instanceof HBaseMetadataStore,
          server.metadata().toString());
      client.admin().createTopic("orders", 3);
      // Another node (another store on the same namespace) sees the topic and the credential.
      try (HBaseMetadataStore other = HBaseMetadataStore.open(clientConf(), ns)) {
        TopicRecord t = other.topic("orders").orElseThrow();
        assertEquals(3, t.partitionCount());
        assertEquals(Optional.of(server.adminCredential()),
            other.credential(server.adminCredential().secretKeyId()));
      }
      // HBase failing under a request: the client gets HBASE_OPERATION_FAILED, retriable.
      TableName topics = TableName.valueOf(ns, HBaseMetadataStore.TABLE_TOPICS);
      try (Admin a = admin.getAdmin()) {
        a.disableTable(topics);
        try {
          TalosException e = assertThrows(TalosException.class,
              () -> client.admin().describeTopic("orders"));
          assertEquals(ErrorCode.HBASE_OPERATION_FAILED, e.errorCode(), e.getMessage());
          assertTrue(e.isRetriable(), e.getMessage());
        } finally {
          a.enableTable(topics);
        }
      }
      assertEquals(3, client.admin().describeTopic("orders").partitionCount());
    }
    // Nothing was written to the embedded store's directory.
    assertFalse(Files.exists(dataDir.resolve("metadata")));
  }

  @Test
  void opsGroupsListsAndDescribesGroupsKeptInHBase(@TempDir Path dataDir) throws Exception {
    String ns = freshNamespace();
    try (TalosServer server = startOnHBase(dataDir, ns); TalosClient client = adminClient(server, dataDir)) {
      client.admin().createTopic("orders", 2);
      client.admin().createTopic("refunds", 1);
      List<byte[]> payloads = new ArrayList<>();
      for (int i = 0; i < 5; i++) payloads.add(("m" + i).getBytes(java.nio.charset.StandardCharsets.UTF_8));
      client.producer("orders", 0).put(payloads);
      client.consumerGroups().resetOffsets("orders", "billing", Map.of(0, 1L));
      client.consumerGroups().resetOffsets("refunds", "billing", Map.of(0, -1L));
      String keyId = server.adminCredential().secretKeyId();
      String secret = server.adminCredential().secretKey();
      String ops = server.opsEndpoint().toString();
      com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();

      java.net.http.HttpResponse<String> list = io.talos.server.ops.OpsRequests.call(ops, "GET", "/ops/groups", keyId, secret);
      assertEquals(200, list.statusCode(), list.body());
      com.fasterxml.jackson.databind.JsonNode group = json.readTree(list.body()).get("groups").get(0);
      assertEquals("billing", group.get("name").asText(), list.body());
      assertEquals(java.util.Set.of("orders", "refunds"),
          java.util.Set.of(group.get("topics").get(0).asText(), group.get("topics").get(1).asText()), list.body());

      java.net.http.HttpResponse<String> one = io.talos.server.ops.OpsRequests.call(ops, "GET", "/ops/groups/billing", keyId, secret);
      assertEquals(200, one.statusCode(), one.body());
      com.fasterxml.jackson.databind.JsonNode body = json.readTree(one.body());
      com.fasterxml.jackson.databind.JsonNode orders = body.get("topics").get(0);
      if (!orders.get("topic").asText("").equals("orders") && !orders.path("name").asText("").equals("orders")) {
        orders = body.get("topics").get(1);
      }
      com.fasterxml.jackson.databind.JsonNode p0 = orders.get("partitions").get(0);
      assertEquals(1, p0.get("committedOffset").asLong(), one.body());
      assertEquals(4, p0.get("endOffset").asLong(), one.body());
      assertEquals(3, p0.get("lag").asLong(), one.body());
      assertEquals(3, body.get("lag").asLong(), one.body());
      assertEquals(404, io.talos.server.ops.OpsRequests.call(ops, "GET", "/ops/groups/nobody", keyId, secret).statusCode());
    }
  }

  @Test
  void aServerOnAnotherNamespaceRefusesToStartOverTheDataAndDeletesNothing(@TempDir Path dataDir)
      throws Exception {
    String quorum = "127.0.0.1:" + hbase.getConfiguration().get("hbase.zookeeper.property.clientPort");
    String ns = freshNamespace();
    Path topicDir;
    try (TalosServer server = TestServers.start(dataDir, ServerConfig.METADATA_STORE, "hbase",
        ServerConfig.METADATA_HBASE_ZOOKEEPER_QUORUM, quorum, ServerConfig.METADATA_HBASE_NAMESPACE, ns);
         TalosClient client = TalosClient.create(TalosClientConfig.builder()
             .endpoint(server.endpoint().toString())
             .credentialFile(dataDir.resolve("admin-credential.properties"))
             .build())) {
      client.admin().createTopic("orders", 1);
      client.producer("orders", 0).put(List.of("kept".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
      try (var dirs = Files.list(dataDir.resolve("log"))) {
        topicDir = dirs.findFirst().orElseThrow();
      }
    }
    // The same storage with another (empty) namespace, as a misconfigured node would have.
    String other = freshNamespace();
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> TestServers.start(dataDir,
        ServerConfig.METADATA_STORE, "hbase", ServerConfig.METADATA_HBASE_ZOOKEEPER_QUORUM, quorum,
        ServerConfig.METADATA_HBASE_NAMESPACE, other));
    assertTrue(e.getMessage().contains("namespace " + other), e.getMessage());
    assertTrue(e.getMessage().contains("--accept-orphan-data"), e.getMessage());
    assertTrue(Files.isDirectory(topicDir.resolve("0")), "the data was not touched");
  }

  @Test
  void metadataStoreHbaseWithoutAQuorumIsAConfigurationErrorNamingTheKey(@TempDir Path dataDir) {
    ConfigException e = assertThrows(ConfigException.class, () -> TestServers.start(dataDir,
        ServerConfig.METADATA_STORE, "hbase"));
    assertTrue(e.getMessage().contains(ServerConfig.METADATA_HBASE_ZOOKEEPER_QUORUM),
        e.getMessage());
  }

  // ---- failures -----------------------------------------------------------------------------

  @Test
  void anUnavailableTableFailsCallsWithMetadataExceptionAndChangesNothing() throws Exception {
    TopicRecord t = topic("orders", "s1");
    assertTrue(store.createTopic(t));
    TableName topics = TableName.valueOf(NAMESPACE, "topics");
    try (Admin a = admin.getAdmin()) {
      a.disableTable(topics);
      try {
        long start = System.nanoTime();
        MetadataException e = assertThrows(MetadataException.class, () -> store.topic("orders"));
        assertTrue(e.getMessage().contains("topic orders"), e.getMessage());
        assertThrows(MetadataException.class,
            () -> store.lockPartition(GROUP, t.resourceName(), 0, "w1", 100, TTL_MS));
        assertThrows(MetadataException.class, () -> store.createTopic(topic("other", "s1")));
        assertThrows(MetadataException.class, () -> store.deleteTopic("orders", t.resourceName()));
        long elapsedMs = (System.nanoTime() - start) / 1_000_000;
        assertTrue(elapsedMs < 30_000, "took " + elapsedMs + " ms");
      } finally {
        a.enableTable(topics);
      }
    }
    // Nothing was half done: the topic is intact, the failed create left no name entry.
    assertEquals(Optional.of(t), store.topic("orders"));
    assertEquals(List.of(t), store.topics());
    assertEquals(Map.of(), store.partitionLocks(GROUP, t.resourceName()));
    assertTrue(store.createTopic(topic("other", "s2")));
  }

  /**
   * A connection whose tables fail the next {@code failures} conditional mutations with an
   * IOException, after applying them ({@code applied}) or without: an RPC whose reply was lost,
   * or one that never arrived.
   */
  private static final class FlakyConnection {
    final AtomicInteger failures = new AtomicInteger();
    volatile boolean applied = true;
    final Connection connection;

    FlakyConnection(Connection real) {
      this.connection = (Connection) Proxy.newProxyInstance(getClass().getClassLoader(),
          new Class<?>[] {Connection.class}, (proxy, method, args) -> {
            Object result = invoke(real, method, args);
            return result instanceof Table table ? flaky(table) : result;
          });
    }

    private Table flaky(Table real) {
      return (Table) Proxy.newProxyInstance(getClass().getClassLoader(),
          new Class<?>[] {Table.class}, (proxy, method, args) -> {
            if (method.getName().equals("checkAndMutate") && args.length == 1
                && args[0] instanceof CheckAndMutate && failures.getAndDecrement() > 0) {
              if (applied) {
                invoke(real, method, args);
              }
              throw new IOException("injected: reply lost (applied=" + applied + ")");
            }
            return invoke(real, method, args);
          });
    }

    private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
      try {
        return method.invoke(target, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
    }
  }

  @Test
  void conditionalWritesWithLostRepliesAreResolvedByReReading() throws Exception {
    FlakyConnection flaky = new FlakyConnection(admin);
    try (MetadataStore s = HBaseMetadataStore.open(flaky.connection, NAMESPACE)) {
      TopicRecord t = topic("orders", "s1");
      String res = t.resourceName();
      // Applied, reply lost: re-reading finds this call's own write, so it succeeded.
      flaky.failures.set(2); // the record write and the publish
      assertTrue(s.createTopic(t));
      assertEquals(Optional.of(t), s.topic("orders"));
      flaky.failures.set(1);
      assertTrue(s.lockPartition(GROUP, res, 0, "w1", 100, TTL_MS));
      flaky.failures.set(1);
      assertTrue(s.commitOffset(GROUP, res, 0, "w1", 1, 42, 100, TTL_MS));
      assertEquals(OptionalLong.of(42), s.committedOffset(GROUP, res, 0));
      flaky.failures.set(1);
      assertTrue(s.replaceTopic(t, t.withPartitionCount(8)));
      assertEquals(1, s.topic("orders").orElseThrow().version());
      flaky.failures.set(1);
      assertTrue(s.putCredentialIfAbsent(new Credential("AK9", "k", "o", false)));
      // Where re-reading cannot tell (the cell is gone: this call or another removed it), the
      // call says so; the state is whole either way.
      flaky.failures.set(1);
      MetadataException unknown = assertThrows(MetadataException.class,
          () -> s.unlockPartition(GROUP, res, 0, "w1"));
      assertTrue(unknown.getMessage().contains("unknown outcome"), unknown.getMessage());
      assertEquals(Map.of(), s.partitionLocks(GROUP, res));
      // Raising a next offset is idempotent: an applied write whose reply was lost is success.
      flaky.failures.set(1);
      s.raisePartitionNextOffset(res, 0, 9);
      assertEquals(OptionalLong.of(9), s.partitionNextOffset(res, 0));

      // Not applied, reply lost: the condition still holds, so the call tries again.
      flaky.applied = false;
      flaky.failures.set(1);
      assertTrue(s.lockPartition(GROUP, res, 1, "w1", 100, TTL_MS));
      flaky.failures.set(1);
      assertTrue(s.commitOffset(GROUP, res, 1, "w1", 1, 7, 100, TTL_MS));
      assertEquals(OptionalLong.of(7), s.committedOffset(GROUP, res, 1));
      flaky.failures.set(1);
      assertTrue(s.deleteTopic("orders", res));
      assertEquals(Optional.empty(), s.topic("orders"));
      assertEquals(Map.of(), s.partitionLocks(GROUP, res));
    }
  }

  @Test
  void anUnreachableClusterFailsOpenWithMetadataExceptionInBoundedTime() throws Exception {
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      closedPort = socket.getLocalPort();
    }
    Configuration conf = new Configuration(false);
    conf.set("hbase.zookeeper.quorum", "127.0.0.1:" + closedPort);
    conf.setInt("hbase.client.retries.number", 1);
    conf.setInt("hbase.client.operation.timeout", 3_000);
    conf.setInt("hbase.rpc.timeout", 2_000);
    conf.setInt("zookeeper.session.timeout", 2_000);
    conf.setInt("zookeeper.recovery.retry", 0);
    conf.setInt("hbase.zookeeper.recoverable.waittime", 2_000);
    long start = System.nanoTime();
    MetadataException e = assertThrows(MetadataException.class,
        () -> HBaseMetadataStore.open(conf, freshNamespace()));
    long elapsedMs = (System.nanoTime() - start) / 1_000_000;
    assertTrue(elapsedMs < 45_000, "took " + elapsedMs + " ms");
    assertTrue(e.getMessage().contains("HBase"), e.getMessage());
  }
}
