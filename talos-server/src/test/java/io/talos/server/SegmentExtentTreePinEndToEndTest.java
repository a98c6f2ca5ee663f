package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.talos.server.storage.OwnerOnlyLocalFileSystem;
import io.talos.server.storage.PageCacheDropBehind;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicTalosResourceName;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real server on a local data directory reserves the extent-tree anchors of each new segment
 * file by default, and not when told not to; the anchors change nothing a client sees, before or
 * after a restart.
 */
class SegmentExtentTreePinEndToEndTest {
  /** Five 4 KiB anchors. */
  private static final long ANCHOR_BYTES = 5 * 4096;

  @TempDir
  Path dir;

  private static List<Path> segments(Path dataDir) throws Exception {
    try (Stream<Path> files = Files.walk(dataDir.resolve("log"))) {
      return files.filter(p -> p.getFileName().toString().matches("\\d{20}(-\\d+)?\\.log")).sorted().toList();
    }
  }

  private static long allocatedBytes(Path f) throws Exception {
    Process p = new ProcessBuilder("stat", "-c", "%b", f.toString()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
    assertEquals(0, p.waitFor(), out);
    return Long.parseLong(out) * 512;
  }

  private static long gauge(TalosServer server, String name) {
    return ((Number) server.metrics().getGauges().get(name).getValue()).longValue();
  }

  @Test
  void newSegmentsArePinnedByDefaultAndEveryMessageReadsBackAfterARestart() throws Exception {
    assumeTrue(PageCacheDropBehind.unavailableReason() == null, "needs Linux");
    TopicTalosResourceName trn;
    TopicAndPartition tap;
    SortedMap<Long, String> put = new TreeMap<>();
    try (TalosServer server = TestServers.start(dir)) {
      RawApi api = RestartTest.api(server);
      trn = api.createTopic("pinned", 1);
      tap = new TopicAndPartition("pinned", trn, 0);
      put.put(api.put(tap, List.of("first")), "first"); // the log and its first segment open on first use
      List<Path> created = segments(dir);
      assertEquals(1, created.size(), created.toString());
      assertTrue(Files.size(created.get(0)) < 4096);
      assertTrue(allocatedBytes(created.get(0)) >= ANCHOR_BYTES + 4096, "the anchors and the first record's block: "
          + allocatedBytes(created.get(0)));
      assertEquals(1, gauge(server, "storage.segment.pinned.files"));
      assertEquals(0, gauge(server, "storage.segment.pin.failures"));

      for (int i = 0; i < 50; i++) {
        List<String> batch = new ArrayList<>();
        for (int j = 0; j < 20; j++) batch.add(i + "/" + j + "x".repeat(500));
        long first = api.put(tap, batch);
        for (int j = 0; j < batch.size(); j++) put.put(first + j, batch.get(j));
      }
      assertEquals(put, api.readAll(tap, 0));
      long size = Files.size(created.get(0));
      assertTrue(size > 50 * 20 * 500 && size < 2 * 50 * 20 * 600, "the file's size is its records': " + size);
    }
    try (TalosServer server = TestServers.start(dir)) {
      RawApi api = RestartTest.api(server);
      assertEquals(put, api.readAll(tap, 0), "recovery reads the records, not the anchors");
      put.put(api.put(tap, List.of("after the restart")), "after the restart");
      assertEquals(2, segments(dir).size(), "the reopened log appends to a new segment");
      assertEquals(1, gauge(server, "storage.segment.pinned.files"), "pinned as well");
      assertEquals(put, api.readAll(tap, 0));
    }
  }

  @Test
  void falseCreatesPlainSegments() throws Exception {
    try (TalosServer server = TestServers.start(dir, ServerConfig.STORAGE_LOCAL_SEGMENT_PIN_EXTENT_TREE, "false")) {
      RawApi api = RestartTest.api(server);
      TopicTalosResourceName trn = api.createTopic("plain", 1);
      api.put(new TopicAndPartition("plain", trn, 0), List.of("first"));
      List<Path> created = segments(dir);
      assertEquals(1, created.size(), created.toString());
      assertEquals(4096, allocatedBytes(created.get(0)), "the first record's block only");
      assertEquals(0, ((OwnerOnlyLocalFileSystem) server.partitionLogs().fileSystem()).pinnedFiles());
    }
  }
}
