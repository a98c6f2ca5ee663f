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

  // ---- bounded open logs -----------------------------------------------------------------

  private PartitionLogs newLogs(PartitionLogs.Limits limits) {
    return new PartitionLogs(fs, new Path(new Path(tmp.toUri()), "data"), config, clock, 0, limits);
  }

  private static PartitionLogs.Limits limits(int maxLogs, int maxFiles, long idleCloseMs) {
    return new PartitionLogs.Limits(maxLogs, maxFiles, idleCloseMs, 0, 0, 10_000);
  }

  @Test
  void shouldAnswerOffsetsOfPartitionsNotOpenWithoutOpeningThem() throws Exception {
    append(logs.log(ORDERS, 0), 10); // segments [0,4) [4,8) [8,10)
    append(logs.log(ORDERS, 1), 3);
    logs.log(ORDERS, 2); // created, empty
    PartitionOffsets p0 = PartitionOffsets.of(logs.log(ORDERS, 0));
    logs.close();
    logs = newLogs();

    assertEquals(new PartitionOffsets(0, 10, p0.sizeBytes()), logs.offsets(ORDERS, 0));
    assertEquals(3, logs.offsets(ORDERS, 1).endOffset());
    assertEquals(new PartitionOffsets(0, 0, 0), logs.offsets(ORDERS, 2));
    assertEquals(PartitionOffsets.EMPTY, logs.offsets(ORDERS, 7), "never written");
    assertEquals(0, logs.openedLogs(), "no log was opened");
    assertEquals(0, logs.openLogCount());
    assertFalse(Files.exists(tmp.resolve("data/CL123.23orders.23a1b2/7")), "nothing created for an offset query");
    // no new segment either (each open of a non-empty log would start one)
    try (var files = Files.list(tmp.resolve("data/CL123.23orders.23a1b2/0"))) {
      assertEquals(3, files.filter(f -> f.toString().endsWith(".log")).count());
    }
    // once open, the live log answers
    append(logs.log(ORDERS, 1), 2);
    assertEquals(5, logs.offsets(ORDERS, 1).endOffset());
  }

  @Test
  void shouldOpenAReadOnlyViewForOffsetsOnlyWhenTheListingCannotTell() throws Exception {
    PartitionLog log = logs.log(ORDERS, 0);
    append(log, 2);
    // A crash: the newest segment is left unsealed (no index). Simulated by a second instance
    // reading while the first still has it open.
    PartitionLogs other = newLogs();
    try {
      assertEquals(2, other.offsets(ORDERS, 0).endOffset());
      assertEquals(1, other.openedReaders(), "the listing could not tell: scanned read-only");
      assertEquals(0, other.openedLogs(), "no recovery: reading offsets never takes a partition over");
    } finally {
      other.close();
    }
  }

  @Test
  void shouldKeepAtMostTheConfiguredNumberOfLogsOpenClosingTheLeastRecentlyUsed() throws Exception {
    logs.close();
    logs = newLogs(limits(3, Integer.MAX_VALUE, 0));
    for (int p = 0; p < 5; p++) {
      append(logs.log(ORDERS, p), 2);
      clock.advanceMs(1);
    }
    assertEquals(3, logs.openLogCount());
    assertEquals(2, logs.evictedLogs());
    clock.advanceMs(1);
    logs.log(ORDERS, 2); // used again: 3 is now the least recently used
    clock.advanceMs(1);
    PartitionLog p0 = logs.log(ORDERS, 0); // reopened, with its records
    assertEquals(2, p0.endOffset());
    assertEquals(3, logs.openLogCount());
    assertEquals(6, logs.openedLogs());
    // offsets of the closed ones come from what was kept at close: no open
    assertEquals(2, logs.offsets(ORDERS, 3).endOffset());
    assertEquals(2, logs.offsets(ORDERS, 1).endOffset());
    assertEquals(6, logs.openedLogs());
    assertFalse(logs.log(ORDERS, 2).isClosed());
  }

  @Test
  void shouldCloseLogsWhileTheirFilesExceedTheConfiguredMaximum() throws Exception {
    logs.close();
    logs = newLogs(limits(100, 6, 0));
    append(logs.log(ORDERS, 0), 10); // 3 segments + the writer: 4 files
    clock.advanceMs(1);
    append(logs.log(ORDERS, 1), 1);  // 2 files: 6 in all, at the limit
    assertEquals(2, logs.openLogCount());
    clock.advanceMs(1);
    append(logs.log(ORDERS, 2), 1);  // 8 > 6: the least recently used (0) is closed
    assertEquals(2, logs.openLogCount());
    assertTrue(logs.openFileCount() <= 6, "files " + logs.openFileCount());
    assertEquals(10, logs.offsets(ORDERS, 0).endOffset());
    // a log growing segments is caught by the sweep
    append(logs.log(ORDERS, 1), 12);
    assertTrue(logs.openFileCount() > 6, "files " + logs.openFileCount());
    assertEquals(1, logs.runEvictionOnce());
    assertTrue(logs.openFileCount() <= 6, "files " + logs.openFileCount());
  }

  @Test
  void shouldCloseIdleLogsWhenTheSweepRunsAfterTheIdleTime() throws Exception {
    logs.close();
    logs = newLogs(limits(100, Integer.MAX_VALUE, 1_000));
    PartitionLog a = logs.log(ORDERS, 0);
    PartitionLog b = logs.log(ORDERS, 1);
    append(a, 1);
    clock.advanceMs(600);
    assertEquals(0, logs.runEvictionOnce(), "nothing idle yet");
    logs.log(ORDERS, 1); // b used again
    clock.advanceMs(600);
    assertEquals(1, logs.runEvictionOnce());
    assertTrue(a.isClosed());
    assertFalse(b.isClosed());
    assertEquals(1, logs.offsets(ORDERS, 0).endOffset());
    clock.advanceMs(1_000);
    assertEquals(1, logs.runEvictionOnce());
    assertTrue(b.isClosed());
    assertEquals(0, logs.openLogCount());
    assertEquals(1, logs.log(ORDERS, 0).endOffset(), "reopens on use");
  }

  @Test
  void shouldNotOpenPartitionsForRetentionWhoseOldestSegmentIsNotExpired() throws Exception {
    append(logs.log(ORDERS, 0), 10);
    append(logs.log(ORDERS, 1), 10);
    logs.close();
    logs = newLogs();
    clock.advanceMs(60_000);
    assertEquals(0, logs.runRetentionOnce(t -> 120_000L));
    assertEquals(0, logs.openedLogs(), "a retention pass must not open every partition on disk");
    assertEquals(6, logs.runRetentionOnce(t -> 30_000L));
    assertEquals(2, logs.openedLogs());
  }

  @Test
  void shouldWaitForASlowOpenOnlyUntilTheDeadlineWithoutBlockingOtherPartitions() throws Exception {
    StallingOpens stalling = new StallingOpens(fs, "/0");
    PartitionLogs slow = new PartitionLogs(stalling, new Path(new Path(tmp.toUri()), "data"), config, clock, 0,
        new PartitionLogs.Limits(100, 1000, 0, 2, 10, 10_000));
    try {
      StorageDeadlineException e = assertThrows(StorageDeadlineException.class,
          () -> slow.log(ORDERS, 0, clock.millis() + 200));
      assertTrue(e.getMessage().contains("deadline"), e.getMessage());
      // another partition opens on the other open thread meanwhile
      assertEquals(0, slow.log(ORDERS, 1, clock.millis() + 10_000).endOffset());
      assertTrue(stalling.stalled.getCount() == 0, "the open of partition 0 is still stalled");
      stalling.release.countDown();
      PartitionLog p0 = slow.log(ORDERS, 0, clock.millis() + 10_000); // the open went on: done now
      assertEquals(1, slow.openedLogs() - 1);
      assertFalse(p0.isClosed());
    } finally {
      stalling.release.countDown();
      slow.close();
    }
  }

  /** Stalls listing any directory whose path ends with {@code suffix} until released. */
  private static final class StallingOpens extends org.apache.hadoop.fs.FilterFileSystem {
    final java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    final java.util.concurrent.CountDownLatch stalled = new java.util.concurrent.CountDownLatch(1);
    private final String suffix;

    StallingOpens(FileSystem raw, String suffix) {
      super(raw);
      this.suffix = suffix;
    }

    @Override
    public org.apache.hadoop.fs.FileStatus[] listStatus(Path f) throws IOException {
      if (f.toUri().getPath().endsWith(suffix)) {
        stalled.countDown();
        try {
          release.await(30, java.util.concurrent.TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return super.listStatus(f);
    }
  }

  @Test
  void shouldAcknowledgeEveryPipelinedAppendOfManyLogsThroughOneFlushThread() throws Exception {
    // storage.flush.threads=1: the logs' flushes queue for the one thread; none may wait for another.
    // SYNC: with FLUSH on a local file system the writer flushes its own append (no flush thread).
    LogConfig sync = config.toBuilder().durability(Durability.SYNC).build();
    PartitionLogs bounded = new PartitionLogs(fs, new Path(new Path(tmp.toUri()), "bounded"), sync, clock, 0,
        new PartitionLogs.Limits(100, 1000, 0, 0, 0, 10_000, 1), NextOffsetStore.NONE);
    try {
      List<java.util.concurrent.CompletableFuture<PartitionLog.PutResult[]>> acks = new ArrayList<>();
      for (int round = 0; round < 20; round++) {
        for (int p = 0; p < 8; p++) {
          PartitionLog log = bounded.log(ORDERS, p);
          acks.add(log.appendPutsAsync(List.of(new PartitionLog.Put(
              List.of(LogFixture.block(round, 1, 100)), PartitionLog.NO_PRODUCER, -1)), T0));
        }
      }
      for (int i = 0; i < acks.size(); i++) {
        assertEquals(i / 8, acks.get(i).get(30, java.util.concurrent.TimeUnit.SECONDS)[0].firstOffset());
      }
      for (int p = 0; p < 8; p++) assertEquals(20, bounded.log(ORDERS, p).endOffset());
    } finally {
      bounded.close();
    }
  }
}
