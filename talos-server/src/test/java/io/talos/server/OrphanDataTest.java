package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.talos.server.metadata.MvStoreMetadataStore;
import io.talos.server.storage.PartitionLogs;
import io.talos.thrift.DeleteTopicRequest;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicService;
import io.talos.thrift.TopicTalosResourceName;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A server never deletes topic data at startup that its metadata store does not account for: a
 * lost, wrong or empty store is refused (or, when accepted, its data is reported and kept), an
 * unknown directory is reported at GET /ops/orphans, and only tombstoned deletions are finished.
 */
class OrphanDataTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  static JsonNode ops(TalosServer server, String path) throws Exception {
    HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(server.endpoint().resolve(path)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return JSON.readTree(r.body());
  }

  private static Path topicDir(Path dataDir, TopicTalosResourceName trn) {
    return dataDir.resolve("log").resolve(PartitionLogs.encodeDirName(trn.getTopicTalosResourceName()));
  }

  @Test
  void anEmptyMetadataStoreOverTopicDataIsRefusedThenAcceptedAndNothingIsDeleted(@TempDir Path dir) throws Exception {
    TopicTalosResourceName trn;
    try (TalosServer server = TestServers.start(dir)) {
      RawApi api = RestartTest.api(server);
      trn = api.createTopic("precious", 1);
      api.put(new TopicAndPartition("precious", trn, 0), List.of("m0", "m1"));
    }
    // The same data with another (empty) embedded store: a lost or wrong metadata file.
    Path otherMetadata = dir.resolve("other-metadata");
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> TestServers.start(dir, ServerConfig.METADATA_DIR, otherMetadata.toString()));
    assertTrue(e.getMessage().contains(otherMetadata.resolve(MvStoreMetadataStore.FILE_NAME).toString()), e.getMessage());
    assertTrue(e.getMessage().contains(trn.getTopicTalosResourceName()), e.getMessage());
    assertTrue(e.getMessage().contains("--accept-orphan-data"), e.getMessage());
    assertTrue(Files.isDirectory(topicDir(dir, trn).resolve("0")));

    try (TalosServer server = TestServers.start(dir, ServerConfig.METADATA_DIR, otherMetadata.toString(),
        ServerConfig.STORAGE_ORPHAN_DATA_ACCEPT, "true")) {
      JsonNode orphans = ops(server, "/ops/orphans").get("orphans");
      assertEquals(1, orphans.size(), orphans.toString());
      assertEquals(trn.getTopicTalosResourceName(), orphans.get(0).get("resourceName").asText());
      assertEquals(1, ops(server, "/ops/metrics").get("storage.orphan.topics").asInt());
    }
    assertTrue(Files.isDirectory(topicDir(dir, trn).resolve("0")));

    // Back on its own metadata, every message is still there.
    try (TalosServer server = TestServers.start(dir)) {
      SortedMap<Long, String> all = RestartTest.api(server).readAll(new TopicAndPartition("precious", trn, 0), 0);
      assertEquals(Map.of(0L, "m0", 1L, "m1"), all);
      assertEquals(0, ops(server, "/ops/orphans").get("orphans").size());
    }
  }

  @Test
  void aTopicDirectoryUnknownToTheStoreIsReportedAndKept(@TempDir Path dir) throws Exception {
    TopicTalosResourceName kept;
    TopicTalosResourceName unknown;
    try (TalosServer server = TestServers.start(dir)) {
      RawApi api = RestartTest.api(server);
      kept = api.createTopic("kept", 1);
      unknown = api.createTopic("unknown", 1);
      api.put(new TopicAndPartition("unknown", unknown, 0), List.of("u0"));
    }
    // Its metadata vanishes without a deletion (e.g. the store was restored from an older backup).
    try (MvStoreMetadataStore store = MvStoreMetadataStore.open(dir.resolve("metadata"))) {
      assertTrue(store.deleteTopic("unknown", unknown.getTopicTalosResourceName()));
    }
    try (TalosServer server = TestServers.start(dir)) {
      assertTrue(Files.isDirectory(topicDir(dir, unknown).resolve("0")), "unknown data is not deleted at startup");
      JsonNode orphans = ops(server, "/ops/orphans").get("orphans");
      assertEquals(1, orphans.size(), orphans.toString());
      assertEquals(unknown.getTopicTalosResourceName(), orphans.get(0).get("resourceName").asText());
      assertTrue(orphans.get(0).get("path").asText().endsWith(topicDir(dir, unknown).getFileName().toString()));
      assertEquals("kept", server.metadata().topics().get(0).name());
    }
  }

  @Test
  void aTopicDeletionInterruptedAfterItsTombstoneIsFinishedAtTheNextStart(@TempDir Path dir) throws Exception {
    TopicTalosResourceName gone;
    TopicTalosResourceName half;
    try (TalosServer server = TestServers.start(dir)) {
      RawApi api = RestartTest.api(server);
      gone = api.createTopic("gone", 1);
      half = api.createTopic("half", 1);
      api.put(new TopicAndPartition("gone", gone, 0), List.of("g0"));
      api.put(new TopicAndPartition("half", half, 0), List.of("h0"));
      api.createTopic("other", 1);
    }
    // A crash after the metadata removal ("gone") and one right after the tombstone ("half").
    try (MvStoreMetadataStore store = MvStoreMetadataStore.open(dir.resolve("metadata"))) {
      store.putTopicTombstone(gone.getTopicTalosResourceName(), 1);
      assertTrue(store.deleteTopic("gone", gone.getTopicTalosResourceName()));
      store.putTopicTombstone(half.getTopicTalosResourceName(), 2);
    }
    try (TalosServer server = TestServers.start(dir)) {
      assertFalse(Files.exists(topicDir(dir, gone)));
      assertFalse(Files.exists(topicDir(dir, half)));
      assertTrue(server.metadata().topic("half").isEmpty(), "the requested deletion was completed");
      assertEquals(Map.of(), server.metadata().topicTombstones());
      assertEquals(List.of("other"), server.metadata().topics().stream().map(t -> t.name()).toList());
    }
  }

  @Test
  void deleteTopicOverTheApiRemovesDataAndLeavesNoTombstone(@TempDir Path dir) throws Exception {
    try (TalosServer server = TestServers.start(dir)) {
      RawApi api = RestartTest.api(server);
      TopicTalosResourceName trn = api.createTopic("doomed", 2);
      api.put(new TopicAndPartition("doomed", trn, 1), List.of("d0"));
      assertTrue(Files.isDirectory(topicDir(dir, trn)));
      TopicService.deleteTopic_result r = api.call("topic", "deleteTopic",
          new TopicService.deleteTopic_args(new DeleteTopicRequest(trn)), new TopicService.deleteTopic_result());
      assertFalse(r.isSetE(), String.valueOf(r.getE()));
      assertFalse(Files.exists(topicDir(dir, trn)));
      assertEquals(Map.of(), server.metadata().topicTombstones());
      assertTrue(server.metadata().topic("doomed").isEmpty());
    }
  }
}
