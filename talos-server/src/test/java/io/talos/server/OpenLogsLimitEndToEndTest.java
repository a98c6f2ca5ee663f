package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.thrift.ErrorCode;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicTalosResourceName;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Puts to more partitions than may be open at once ({@code storage.open.logs.max}): every put
 * opens its log and closes the least recently used one, which another put may be about to append
 * to. Such a put must be stored through the log opened again, or at worst refused as retriable
 * (PARTITION_NOT_SERVING, nothing stored), never refused as a storage failure; retried as a
 * client does, every put is stored once and in order.
 */
class OpenLogsLimitEndToEndTest {
  private static final int PARTITIONS = 8;
  private static final int PUTS_PER_PARTITION = 150;

  @TempDir
  Path dataDir;

  @Test
  void putsRacingTheClosingOfTheirLogAreAllStored() throws Exception {
    try (TalosServer server = TestServers.start(dataDir, ServerConfig.STORAGE_OPEN_LOGS_MAX, "2",
        ServerConfig.QUOTA_PARTITION_PUT_BYTES_PER_SEC, "0")) {
      RawApi api = RestartTest.api(server);
      TopicTalosResourceName trn = api.createTopic("crowded", PARTITIONS);
      Map<Integer, SortedMap<Long, String>> acked = new ConcurrentHashMap<>();
      ConcurrentLinkedQueue<String> refused = new ConcurrentLinkedQueue<>();
      CountDownLatch start = new CountDownLatch(1);
      List<Thread> putters = new ArrayList<>();
      for (int p = 0; p < PARTITIONS; p++) {
        int partition = p;
        TopicAndPartition tap = new TopicAndPartition("crowded", trn, partition);
        SortedMap<Long, String> mine = new TreeMap<>();
        acked.put(partition, mine);
        Thread t = new Thread(() -> {
          try {
            start.await();
            for (int i = 0; i < PUTS_PER_PARTITION; i++) {
              String text = "p" + partition + "-" + i;
              for (int attempt = 1; ; attempt++) {
                try {
                  mine.put(api.put(tap, List.of(text)), text);
                  break;
                } catch (GalaxyTalosException e) {
                  // not stored, and retriable: what a client does with it
                  if (e.getErrorCode() == ErrorCode.PARTITION_NOT_SERVING && attempt < 20) continue;
                  refused.add(text + " (attempt " + attempt + "): " + e.getErrorCode() + " " + e.getErrMsg());
                  break;
                }
              }
            }
          } catch (Exception e) {
            refused.add("partition " + partition + ": " + e);
          }
        });
        t.start();
        putters.add(t);
      }
      start.countDown();
      for (Thread t : putters) t.join();

      assertTrue(refused.isEmpty(), refused.size() + " puts refused, e.g. " + refused.peek());
      for (int p = 0; p < PARTITIONS; p++) {
        SortedMap<Long, String> read = api.readAll(new TopicAndPartition("crowded", trn, p), 0);
        assertEquals(acked.get(p), read, "partition " + p + ": every acknowledged put, in order, and nothing else");
        assertEquals(PUTS_PER_PARTITION, read.size());
      }
    }
  }
}
