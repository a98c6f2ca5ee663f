package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.talos.server.storage.OwnerOnlyLocalFileSystem;
import io.talos.server.storage.PageCacheDropBehind;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicTalosResourceName;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real server on a local data directory drops what lies behind its page-cache window while
 * puts are written and again when a consumer reads them back, and every message reads back as
 * put. The default server has it on.
 */
class PageCacheDropBehindEndToEndTest {
  private static final long MIB = 1024 * 1024;

  @TempDir
  Path dataDir;

  @Test
  void putsBehindTheWindowAreDroppedAndReadBackIntact() throws Exception {
    assumeTrue(PageCacheDropBehind.unavailableReason() == null, "needs Linux");
    try (TalosServer server = TestServers.start(dataDir, ServerConfig.STORAGE_LOCAL_PAGE_CACHE_WINDOW_BYTES,
        String.valueOf(4 * MIB), ServerConfig.QUOTA_PARTITION_PUT_BYTES_PER_SEC, "0",
        ServerConfig.QUOTA_PARTITION_GET_BYTES_PER_SEC, "0")) {
      PageCacheDropBehind dropBehind = dropBehind(server);
      assertNotNull(dropBehind, "a local data directory gets the drop-behind");
      assertEquals(4 * MIB, dropBehind.windowBytes());
      RawApi api = RestartTest.api(server);
      TopicTalosResourceName trn = api.createTopic("cold", 1);
      TopicAndPartition tap = new TopicAndPartition("cold", trn, 0);

      SortedMap<Long, String> put = new TreeMap<>();
      String pad = "x".repeat(20_000);
      for (int i = 0; i < 100; i++) { // 100 puts of 10 x 20 KB: 20 MB, five times the window
        List<String> batch = new ArrayList<>();
        for (int j = 0; j < 10; j++) batch.add(i + "/" + j + pad);
        long first = api.put(tap, batch);
        for (int j = 0; j < batch.size(); j++) put.put(first + j, batch.get(j));
      }
      // 20 MB written, 4 MiB window: at least three whole 4 MiB chunks behind it
      awaitAtLeast(dropBehind::droppedBytes, 3 * 4 * MIB, "written chunks behind the window dropped");
      assertTrue(dropBehind.writtenBackBytes() >= 3 * 4 * MIB);
      long afterWrites = dropBehind.droppedBytes();

      assertEquals(put, api.readAll(tap, 0), "every message reads back as put");
      awaitAtLeast(dropBehind::droppedBytes, afterWrites + 3 * 4 * MIB, "chunks read again dropped again");
      assertEquals(0, dropBehind.skippedChunks());
      assertEquals(0, dropBehind.failedCalls());
    }
  }

  @Test
  void theDefaultServerKeepsThirtyTwoMebibytesPerFile() throws Exception {
    assumeTrue(PageCacheDropBehind.unavailableReason() == null, "needs Linux");
    try (TalosServer server = TestServers.start(dataDir)) {
      PageCacheDropBehind dropBehind = dropBehind(server);
      assertNotNull(dropBehind);
      assertEquals(32 * MIB, dropBehind.windowBytes());
      assertNotNull(server.metrics().getGauges().get("storage.page.cache.dropped.bytes"));
    }
  }

  @Test
  void zeroLeavesThePageCacheToTheKernel() throws Exception {
    try (TalosServer server = TestServers.start(dataDir, ServerConfig.STORAGE_LOCAL_PAGE_CACHE_WINDOW_BYTES, "0")) {
      assertEquals(null, dropBehind(server));
    }
  }

  private static PageCacheDropBehind dropBehind(TalosServer server) {
    return ((OwnerOnlyLocalFileSystem) server.partitionLogs().fileSystem()).dropBehind();
  }

  private static void awaitAtLeast(LongSupplier value, long atLeast, String what) throws InterruptedException {
    long deadline = System.nanoTime() + 20_000_000_000L;
    while (value.getAsLong() < atLeast && System.nanoTime() < deadline) Thread.sleep(20);
    assertTrue(value.getAsLong() >= atLeast, what + ": " + value.getAsLong() + " < " + atLeast);
  }
}
