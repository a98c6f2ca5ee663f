package io.talos.server.storage;

import io.talos.server.ManualClock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PartitionLogsTest {
  private static final long T0 = 1_700_000_000_000L;
  private static final String ORDERS = "CL123#orders#a1b2";
  private static final String CLICKS = "CL123#clicks#c3d4";

  @TempDir java.nio.file.Path tmp;

  private FileSystem fs;
  private ManualClock clock;
  private PartitionLogs logs;
  private final LogConfig config = LogConfig.builder().segmentBytes(4096).build();

  @BeforeEach
  void setUp() throws IOException {
    fs = PartitionLogs.fileSystemFor(URI.create("file:///"), new Configuration());
    clock = new ManualClock(T0);
    logs = newLogs();
  }

  @AfterEach
  void tearDown() throws IOException {
    logs.close();
    fs.close();
  }

  private PartitionLogs newLogs() {
    return new PartitionLogs(fs, new Path(new Path(tmp.toUri()), "data"), config, clock);
  }

  private static void append(PartitionLog log, int records) throws IOException {
    for (int i = 0; i < records; i++) {
      log.append(List.of(LogFixture.block(log.endOffset(), 1, 951)), T0);
    }
  }

  @Test
  void shouldEncodeTopicResourceNamesReversiblyIntoSafeDirectoryNames() {
    assertEquals("CL123.23orders.23a1b2", PartitionLogs.encodeDirName(ORDERS));
    for (String name : List.of(ORDERS, "a.b#c", "..", "x/y:z%20", "ünïcødé#τ", "-_#_-", "A.2E")) {
      String dir = PartitionLogs.encodeDirName(name);
      assertTrue(dir.matches("[A-Za-z0-9_.-]+") && !dir.equals(".") && !dir.equals(".."), dir);
      assertEquals(name, PartitionLogs.decodeDirName(dir));
    }
    for (String notEncoded : List.of("a.2e", "a.", "a.2", "a.ZZ", "a#b", "a.61", ".FF", "")) {
      assertNull(PartitionLogs.decodeDirName(notEncoded), notEncoded);
    }
  }

  @Test
  void shouldCreateThePartitionDirectoryLayoutOnFirstUse() throws Exception {
    PartitionLog log = logs.log(ORDERS, 3);
    assertSame(log, logs.log(ORDERS, 3));
    assertTrue(Files.exists(tmp.resolve("data/CL123.23orders.23a1b2/3/00000000000000000000.log")));
    assertEquals(List.of(ORDERS), logs.topicResourceNames());
    assertThrows(IllegalArgumentException.class, () -> logs.log(ORDERS, -1));
  }

  @Test
  void shouldOpenEachPartitionOnceUnderConcurrentFirstUse() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Callable<PartitionLog>> calls = new ArrayList<>();
      for (int i = 0; i < 16; i++) {
        int partition = i % 2;
        calls.add(() -> logs.log(ORDERS, partition));
      }
      Set<PartitionLog> distinct = new HashSet<>();
      for (Future<PartitionLog> f : pool.invokeAll(calls)) distinct.add(f.get());
      assertEquals(2, distinct.size());
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void shouldDeleteOneTopicWithAllItsPartitions() throws Exception {
    append(logs.log(ORDERS, 0), 3);
    append(logs.log(ORDERS, 1), 3);
    append(logs.log(CLICKS, 0), 3);
    logs.close();
    logs = newLogs();
    PartitionLog opened = logs.log(ORDERS, 0); // partition 1 stays unopened

    logs.deleteTopic(ORDERS);
    assertTrue(opened.isClosed());
    assertFalse(Files.exists(tmp.resolve("data/CL123.23orders.23a1b2")));
    assertEquals(List.of(CLICKS), logs.topicResourceNames());
    assertEquals(3, logs.log(CLICKS, 0).endOffset());
    // A request that resolved the topic before the deletion must not recreate it afterwards.
    assertThrows(TopicDeletedException.class, () -> logs.log(ORDERS, 1));
    assertThrows(TopicDeletedException.class, () -> logs.log(ORDERS, 0));
    assertFalse(Files.exists(tmp.resolve("data/CL123.23orders.23a1b2")), "nothing recreated");
    assertThrows(IOException.class, () -> append(opened, 1), "a log held across the deletion cannot append");
  }

  @Test
  void shouldRunRetentionOverEveryPartitionOnDiskWithEachTopicsRetention() throws Exception {
    append(logs.log(ORDERS, 0), 10); // segments [0,4) [4,8) [8,10)
    append(logs.log(ORDERS, 1), 6);  // [0,4) [4,6)
    append(logs.log(CLICKS, 0), 10);
    logs.close();
    logs = newLogs(); // nothing open: retention opens what is on disk
    clock.advanceMs(60_000);

    Map<String, Long> retention = Map.of(ORDERS, 30_000L);
    assertEquals(0, logs.runRetentionOnce(t -> retention.get(t) == null ? null : 120_000L), "nothing expired");
    // every sealed segment of ORDERS expired; the reopened logs' active segments are empty
    assertEquals(3 + 2, logs.runRetentionOnce(retention::get));
    assertEquals(10, logs.log(ORDERS, 0).startOffset());
    assertEquals(10, logs.log(ORDERS, 0).endOffset());
    assertEquals(6, logs.log(ORDERS, 1).startOffset());
    assertEquals(0, logs.log(CLICKS, 0).startOffset(), "no retention known for the topic: kept");
    assertEquals(0, logs.runRetentionOnce(retention::get));
  }

  @Test
  void shouldNotRecreateATopicDeletedDuringARetentionPass() throws Exception {
    append(logs.log(ORDERS, 0), 5);
    logs.close();
    logs = newLogs();
    // the topic is deleted after the pass listed it, before it reaches the partitions
    assertEquals(0, logs.runRetentionOnce(topic -> {
      try {
        logs.deleteTopic(topic);
      } catch (IOException e) {
        throw new AssertionError(e);
      }
      return 0L;
    }));
    assertFalse(Files.exists(tmp.resolve("data/CL123.23orders.23a1b2")));
    assertEquals(List.of(), logs.topicResourceNames());
  }

  @Test
  void shouldRefuseUseAfterClose() throws Exception {
    PartitionLog log = logs.log(ORDERS, 0);
    logs.close();
    assertTrue(log.isClosed());
    assertThrows(IOException.class, () -> logs.log(ORDERS, 0));
    assertEquals(0, logs.runRetentionOnce(t -> 0L));
  }
}
