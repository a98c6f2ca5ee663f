package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.common.TopicNames;
import io.talos.common.errors.ErrorCodes;
import io.talos.server.auth.AdminCredentials;
import io.talos.server.metadata.MvStoreMetadataStore;
import io.talos.server.metadata.TopicRecord;
import io.talos.server.storage.MiniHdfs;
import io.talos.server.storage.PartitionLogs;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicTalosResourceName;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Servers on a MiniDFSCluster (one DataNode, replication 1). Two servers in one JVM with
 * storage.root.uri on the same cluster and their own metadata stores, both seeded with the same
 * topic: the server that opens the partition last owns it, the other one's puts fail with
 * PARTITION_NOT_SERVING (retriable) and are never acknowledged, and every acknowledged message of
 * both is readable from the owner and after restarts. One server while the DataNode restarts:
 * puts fail with HDFS_OPERATION_FAILED (retriable), then go through again by themselves.
 */
class ServersOnHdfsTest {
  private static MiniHdfs hdfs;

  @BeforeAll
  static void startCluster() throws IOException {
    hdfs = MiniHdfs.start("servers", 1, 1);
  }

  @AfterAll
  static void stopCluster() {
    if (hdfs != null) hdfs.close();
  }

  private static void seed(Path dataDir, TopicRecord topic) {
    MvStoreMetadataStore store = MvStoreMetadataStore.open(dataDir.resolve("metadata"));
    try {
      store.createTopic(topic);
    } finally {
      store.close();
    }
  }

  private static TalosServer start(Path dataDir) throws Exception {
    // hadoop.* keys reach the hdfs client: checked below on the files' block size
    return TestServers.start(dataDir, ServerConfig.STORAGE_ROOT_URI, hdfs.uri() + "/talos",
        ServerConfig.STORAGE_LEASE_RECOVERY_TIMEOUT_MS, "30000", "hadoop.dfs.blocksize", "3145728");
  }

  @Test
  void shouldServeReadsOfAnotherServersPartitionReadOnlyWithoutFencingItsWriter(@TempDir Path tmp) throws Exception {
    TopicRecord topic = new TopicRecord("readonly", TopicNames.resourceName(AdminCredentials.ADMIN_OWNER, "readonly",
        "0123456789abcdee"), AdminCredentials.ADMIN_OWNER, 1, 86_400, Map.of(), System.currentTimeMillis(), 0);
    for (String node : List.of("a", "b")) seed(tmp.resolve(node), topic);
    TopicAndPartition tap = new TopicAndPartition("readonly", new TopicTalosResourceName(topic.resourceName()), 0);
    org.apache.hadoop.fs.Path dir = new org.apache.hadoop.fs.Path("/talos/"
        + PartitionLogs.encodeDirName(topic.resourceName()) + "/0");
    SortedMap<Long, String> acknowledged = new TreeMap<>();
    try (TalosServer a = start(tmp.resolve("a")); TalosServer b = TestServers.start(tmp.resolve("b"),
        ServerConfig.STORAGE_ROOT_URI, hdfs.uri() + "/talos", ServerConfig.STORAGE_READER_REFRESH_INTERVAL_MS, "0");
        FileSystem fs = hdfs.newClient()) {
      RawApi apiA = RestartTest.api(a);
      RawApi apiB = RestartTest.api(b);
      for (int i = 0; i < 3; i++) acknowledged.put(apiA.put(tap, List.of("a" + i)), "a" + i);
      List<String> before = names(fs, dir);
      assertTrue(before.stream().anyMatch(n -> n.endsWith(".log")), before.toString());
      assertFalse(((org.apache.hadoop.fs.LeaseRecoverable) fs).isFileClosed(new org.apache.hadoop.fs.Path(dir, before.stream()
          .filter(n -> n.endsWith(".log")).findFirst().orElseThrow())), "a's segment is still being written");

      assertEquals(acknowledged, apiB.readAll(tap, 0), "b reads every hflushed record of a's open segment");
      assertEquals(before, names(fs, dir), "b's reads created, renamed or deleted nothing (no new .owner epoch)");

      acknowledged.put(apiA.put(tap, List.of("a3")), "a3"); // a was not fenced
      acknowledged.put(apiA.put(tap, List.of("a4", "a5")), "a4");
      acknowledged.put(4L + 1, "a5");
      assertEquals(acknowledged, apiB.readAll(tap, 0), "b sees a's new records");
      assertEquals(acknowledged.tailMap(3L), apiB.readAll(tap, 3), "from the offset b knew as the end");
      assertEquals(before, names(fs, dir));
      assertEquals(6, apiA.put(tap, List.of("a6")), "a still owns the partition");
    }
  }

  private static List<String> names(FileSystem fs, org.apache.hadoop.fs.Path dir) throws IOException {
    List<String> names = new java.util.ArrayList<>();
    for (FileStatus st : fs.listStatus(dir)) names.add(st.getPath().getName());
    return names.stream().sorted().toList();
  }

  @Test
  void shouldLetOnlyTheNewestOwnerOfAPartitionAcknowledgePuts(@TempDir Path tmp) throws Exception {
    TopicRecord topic = new TopicRecord("shared", TopicNames.resourceName(AdminCredentials.ADMIN_OWNER, "shared",
        "0123456789abcdef"), AdminCredentials.ADMIN_OWNER, 1, 86_400, Map.of(), System.currentTimeMillis(), 0);
    for (String node : List.of("a", "b", "c")) seed(tmp.resolve(node), topic);
    TopicAndPartition tap = new TopicAndPartition("shared", new TopicTalosResourceName(topic.resourceName()), 0);
    SortedMap<Long, String> acknowledged = new TreeMap<>();

    try (TalosServer a = start(tmp.resolve("a")); TalosServer b = start(tmp.resolve("b"))) {
      RawApi apiA = RestartTest.api(a);
      RawApi apiB = RestartTest.api(b);
      for (int i = 0; i < 3; i++) {
        long first = apiA.put(tap, List.of("a" + (2 * i), "a" + (2 * i + 1)));
        acknowledged.put(first, "a" + (2 * i));
        acknowledged.put(first + 1, "a" + (2 * i + 1));
      }

      assertEquals(6, apiB.put(tap, List.of("b0")), "b took the partition over after every acknowledged put of a");
      acknowledged.put(6L, "b0");

      GalaxyTalosException lost = assertThrows(GalaxyTalosException.class, () -> apiA.put(tap, List.of("lost")));
      assertEquals(ErrorCode.PARTITION_NOT_SERVING, lost.getErrorCode(), lost.getErrMsg());
      assertThrows(GalaxyTalosException.class, () -> apiA.put(tap, List.of("lost again")));
      assertEquals(ErrorCode.PARTITION_NOT_SERVING,
          assertThrows(GalaxyTalosException.class, () -> apiA.readAll(tap, 0)).getErrorCode());

      for (int i = 1; i < 4; i++) acknowledged.put(apiB.put(tap, List.of("b" + i)), "b" + i);
      assertEquals(acknowledged, apiB.readAll(tap, 0));
      try (FileSystem fs = hdfs.newClient()) {
        org.apache.hadoop.fs.Path dir = new org.apache.hadoop.fs.Path("/talos/"
            + PartitionLogs.encodeDirName(topic.resourceName()) + "/0");
        List<String> segments = new java.util.ArrayList<>();
        for (FileStatus st : fs.listStatus(dir)) {
          if (!st.getPath().getName().endsWith(".log")) continue;
          segments.add(st.getPath().getName());
          assertEquals(3145728, st.getBlockSize(), st.getPath().getName());
        }
        assertEquals(List.of("00000000000000000000-00000000000000000001.log",
            "00000000000000000006-00000000000000000002.log"), segments.stream().sorted().toList(),
            "a's segment, then b's from the end offset it recovered");
      }
    }

    try (TalosServer c = start(tmp.resolve("c"))) {
      RawApi apiC = RestartTest.api(c);
      assertEquals(acknowledged, apiC.readAll(tap, 0), "a third server sees exactly what was acknowledged");
      assertEquals(10, apiC.put(tap, List.of("c0")));
    }
  }

  @Test
  void shouldFailPutsRetriablyWhileTheDataNodeIsDownAndResumeByItself(@TempDir Path tmp) throws Exception {
    try (TalosServer server = start(tmp)) {
      RawApi api = RestartTest.api(server);
      TopicAndPartition tap = new TopicAndPartition("dn", api.createTopic("dn", 1), 0);
      SortedMap<Long, String> acknowledged = new TreeMap<>();
      for (int i = 0; i < 5; i++) acknowledged.put(api.put(tap, List.of("m" + i)), "m" + i);

      MiniDFSCluster.DataNodeProperties dn = hdfs.cluster().stopDataNode(0);
      try {
        for (int i = 0; i < 3; i++) {
          GalaxyTalosException e = assertThrows(GalaxyTalosException.class, () -> api.put(tap, List.of("lost")));
          assertEquals(ErrorCode.HDFS_OPERATION_FAILED, e.getErrorCode(), e.getErrMsg());
          assertTrue(ErrorCodes.isRetriable(e.getErrorCode()));
        }
        long hits = (Long) server.metrics().getGauges().get("storage.tail.cache.hits").getValue();
        assertEquals(acknowledged, api.readAll(tap, 0), "tail reads are served from the cache meanwhile");
        assertTrue((Long) server.metrics().getGauges().get("storage.tail.cache.hits").getValue() > hits);
      } finally {
        hdfs.cluster().restartDataNode(dn, true);
        hdfs.cluster().waitActive();
      }

      long deadline = System.currentTimeMillis() + 60_000;
      while (true) {
        try {
          acknowledged.put(api.put(tap, List.of("m5")), "m5");
          break;
        } catch (GalaxyTalosException e) {
          assertEquals(ErrorCode.HDFS_OPERATION_FAILED, e.getErrorCode(), e.getErrMsg());
          if (System.currentTimeMillis() > deadline) throw e;
          Thread.sleep(200);
        }
      }
      for (int i = 6; i < 10; i++) acknowledged.put(api.put(tap, List.of("m" + i)), "m" + i);
      assertEquals(acknowledged, api.readAll(tap, 0), "exactly the acknowledged messages, none of the failed ones");
    }
  }
}
