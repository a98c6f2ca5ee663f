package io.talos.server.storage;

import io.talos.server.ManualClock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LeaseRecoverable;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * The partition log on real hdfs (one MiniDFSCluster DataNode, replication 1): roll, retention,
 * tail reads through the cache and through reopened streams, crash recovery with lease recovery
 * and a torn tail, and fencing of a previous owner by a new one. Each "server" is its own hdfs
 * client, so each holds its own leases.
 */
class HdfsPartitionLogTest {
  private static final long T0 = 1_700_000_000_000L;
  private static MiniHdfs hdfs;

  private final List<FileSystem> clients = new ArrayList<>();
  private final List<PartitionLog> opened = new ArrayList<>();
  private final LogConfig small = LogConfig.builder().segmentBytes(4096).indexIntervalBytes(256)
      .leaseRecoveryTimeoutMs(30_000).build();
  private Path dir;
  private ManualClock clock;
  private LogFixture fx;

  @BeforeAll
  static void startCluster() throws IOException {
    hdfs = MiniHdfs.start("partition-log", 1, 1);
  }

  @AfterAll
  static void stopCluster() {
    if (hdfs != null) hdfs.close();
  }

  @BeforeEach
  void setUp(TestInfo test) {
    dir = new Path("/talos/" + test.getTestMethod().orElseThrow().getName() + "/0");
    clock = new ManualClock(T0);
    fx = new LogFixture();
  }

  @AfterEach
  void tearDown() throws IOException {
    for (PartitionLog log : opened) log.close();
    for (FileSystem fs : clients) fs.close();
  }

  /** A new hdfs client: another server, as far as leases are concerned. */
  private FileSystem client() throws IOException {
    FileSystem fs = hdfs.newClient();
    clients.add(fs);
    return fs;
  }

  private PartitionLog open(FileSystem fs, LogConfig config, TailCache cache) throws IOException {
    PartitionLog log = PartitionLog.open(fs, dir, config, clock, cache);
    opened.add(log);
    return log;
  }

  private List<String> files(FileSystem fs) throws IOException {
    return Arrays.stream(fs.listStatus(dir)).map(s -> s.getPath().getName()).sorted().toList();
  }

  @Test
  void shouldRollReadAndReopenOnHdfs() throws Exception {
    FileSystem fs = client();
    PartitionLog log = open(fs, small, TailCache.DISABLED);
    ReadBufferPool pool = new ReadBufferPool(2L * ReadBufferPool.BUFFER_BYTES);
    Random rnd = new Random(7);
    for (int i = 0; i < 50; i++) {
      fx.append(log, T0 + i, new int[] {1 + rnd.nextInt(9), 1 + rnd.nextInt(3)}, new int[] {rnd.nextInt(700), 30});
      if (i % 10 == 0) fx.assertEveryBlockReadable(log, 0); // tail reads: streams opened shorter get reopened
      // and into pooled direct buffers (hdfs reads into them itself), tail included
      if (i % 10 == 5) assertTrue(fx.assertSequentialReadMatches(log, 0, 11, 3000, pool) > 0);
    }
    assertTrue(log.segmentCount() > 5, "rolled by size: " + log.segmentCount());
    fx.assertSequentialReadMatches(log, 0, 11, 3000);
    long end = log.endOffset();
    log.close();

    PartitionLog reopened = open(client(), small, TailCache.DISABLED);
    assertEquals(end, reopened.endOffset());
    fx.assertEveryBlockReadable(reopened, 0);
    fx.append(reopened, T0, 3, 100);
    fx.assertSequentialReadMatches(reopened, 0, Integer.MAX_VALUE, Integer.MAX_VALUE);
    // file names carry the owner epoch; only the newest owner's marker is left
    List<String> names = files(fs);
    assertTrue(names.contains("00000000000000000002.owner"), names.toString());
    assertFalse(names.contains("00000000000000000001.owner"), names.toString());
    assertTrue(names.contains(LogSegment.fileName(0, 1, ".log")), names.toString());
    assertTrue(names.contains(LogSegment.fileName(end, 2, ".log")), names.toString());
  }

  @Test
  void shouldRollByAgeAndDeleteExpiredSegmentsOnHdfs() throws Exception {
    FileSystem fs = client();
    PartitionLog log = open(fs, small.toBuilder().segmentMs(1000).build(), TailCache.DISABLED);
    for (int seg = 0; seg < 4; seg++) {
      for (int i = 0; i < 3; i++) fx.append(log, clock.millis(), 1, 100);
      clock.advanceMs(1000);
    }
    assertEquals(4, log.segmentCount(), "rolled by age");
    // now T0 + 4000: the newest appends of the segments are T0, T0 + 1000, T0 + 2000, T0 + 3000
    assertEquals(3, log.deleteExpiredSegments(1500));
    assertEquals(9, log.startOffset());
    assertThrows(OffsetOutOfRangeException.class, () -> log.read(8, 1, 0));
    fx.assertEveryBlockReadable(log, 9);
    assertFalse(fs.exists(LogSegment.logPath(dir, 0, 1)));
    assertFalse(fs.exists(LogSegment.indexPath(dir, 6, 1)));
    assertTrue(fs.exists(LogSegment.logPath(dir, 9, 1)));
    clock.advanceMs(10_000);
    assertEquals(1, log.deleteExpiredSegments(1000), "everything expired: the active segment rolls and goes");
    assertEquals(12, log.startOffset());
    assertEquals(12, log.endOffset());
    log.close();
    PartitionLog reopened = open(client(), small, TailCache.DISABLED);
    assertEquals(12, reopened.startOffset());
    assertEquals(12, reopened.endOffset());
  }

  @Test
  void shouldRecoverEveryAcknowledgedRecordOfASegmentLeftOpenByACrashedServer() throws Exception {
    PartitionLog crashed = open(client(), small, TailCache.DISABLED);
    for (int i = 0; i < 10; i++) fx.append(crashed, T0, 2, 300);
    crashed.awaitSeals(); // a crash stops the seal thread too; here it finishes before recovery reads
    opened.remove(crashed); // never closed: its client keeps the lease of the active segment
    Path active = crashed.segments().get(crashed.segmentCount() - 1).path();
    FileSystem other = client();
    assertFalse(((LeaseRecoverable) other).isFileClosed(active));

    PartitionLog recovered = open(other, small, TailCache.DISABLED);
    assertTrue(((LeaseRecoverable) other).isFileClosed(active), "lease recovered");
    assertEquals(20, recovered.endOffset());
    fx.assertEveryBlockReadable(recovered, 0);
    fx.append(recovered, T0, 1, 10);
    fx.assertSequentialReadMatches(recovered, 0, 5, 5000);
  }

  @Test
  void shouldIgnoreATornLastRecordAfterACrashOnHdfs() throws Exception {
    PartitionLog crashed = open(client(), small, TailCache.DISABLED);
    for (int i = 0; i < 5; i++) fx.append(crashed, T0, 1, 200);
    crashed.awaitSeals(); // a crash stops the seal thread too; here it finishes before recovery reads
    opened.remove(crashed);
    Path active = crashed.segments().get(crashed.segmentCount() - 1).path();

    // Another client takes the file over and leaves half a record at its end, open (a crash mid-write).
    DistributedFileSystem writer = (DistributedFileSystem) client();
    while (!writer.recoverLease(active)) Thread.sleep(100);
    byte[] record = new byte[RecordFormat.recordLength(200)];
    RecordFormat.encode(record, 0, 5, T0, LogFixture.block(5, 1, 200));
    FSDataOutputStream out = writer.append(active);
    out.write(record, 0, record.length / 2);
    out.hflush();
    long torn = writer.getFileStatus(active).getLen();

    PartitionLog recovered = open(client(), small, TailCache.DISABLED);
    assertEquals(5, recovered.endOffset(), "the torn record is not part of the log");
    fx.assertEveryBlockReadable(recovered, 0);
    fx.append(recovered, T0, 1, 10);
    fx.assertSequentialReadMatches(recovered, 0, 100, 100_000);
    assertTrue(torn > 0);
  }

  @Test
  void shouldFenceThePreviousOwnerSoThatItsAppendsFailAndAreNotVisible() throws Exception {
    PartitionLog first = open(client(), small, TailCache.DISABLED);
    for (int i = 0; i < 3; i++) fx.append(first, T0, 2, 100);

    PartitionLog second = open(client(), small, TailCache.DISABLED);
    assertEquals(6, second.endOffset(), "the new owner sees every acknowledged record");

    PartitionFencedException e = assertThrows(PartitionFencedException.class,
        () -> first.append(List.of(LogFixture.block(6, 1, 100)), T0));
    assertTrue(e.getMessage().contains("owner epoch 2"), e.getMessage());
    assertTrue(first.isFenced());
    assertEquals(6, first.endOffset(), "nothing acknowledged");
    assertThrows(PartitionFencedException.class, () -> first.append(List.of(LogFixture.block(6, 1, 1)), T0));
    assertThrows(PartitionFencedException.class, () -> first.read(0, 1, 0));

    for (int i = 0; i < 3; i++) fx.append(second, T0, 1, 50);
    first.close(); // a fenced owner writes nothing on close
    second.close();
    PartitionLog third = open(client(), small, TailCache.DISABLED);
    assertEquals(9, third.endOffset());
    fx.assertSequentialReadMatches(third, 0, Integer.MAX_VALUE, Integer.MAX_VALUE);
  }

  @Test
  void shouldFenceAPreviousOwnerWhoseNextStepIsARoll() throws Exception {
    LogConfig oneRecordSegments = small.toBuilder().segmentBytes(200).build();
    PartitionLog first = open(client(), oneRecordSegments, TailCache.DISABLED);
    fx.append(first, T0, 1, 100); // the segment is full: the next append rolls before writing
    PartitionLog second = open(client(), oneRecordSegments, TailCache.DISABLED);

    assertThrows(PartitionFencedException.class, () -> first.append(List.of(LogFixture.block(1, 1, 100)), T0));
    fx.append(second, T0, 1, 100);
    fx.append(second, T0, 1, 100);
    for (FileStatus st : client().listStatus(dir)) {
      String name = st.getPath().getName();
      assertFalse(name.endsWith(".log") && name.contains("-00000000000000000001") && st.getLen() == 0,
          "the fenced owner left no segment of its own behind: " + name);
    }
    second.close();
    PartitionLog third = open(client(), oneRecordSegments, TailCache.DISABLED);
    fx.assertSequentialReadMatches(third, 0, Integer.MAX_VALUE, Integer.MAX_VALUE);
  }

  @Test
  void shouldApplyRetentionOnlyToPartitionsThisServerOwns() throws Exception {
    Path root = new Path("/talos/retention-owners");
    LogConfig tiny = small.toBuilder().segmentBytes(200).build();
    try (PartitionLogs owner = new PartitionLogs(client(), root, tiny, clock);
        PartitionLogs other = new PartitionLogs(client(), root, tiny, clock)) {
      PartitionLog log = owner.log("CL1#t#0123", 0);
      for (int i = 0; i < 3; i++) fx.append(log, clock.millis(), 1, 100); // one record per segment
      clock.advanceMs(10_000);

      assertEquals(0, other.runRetentionOnce(topic -> 1000L), "opening the partition would take it over");
      fx.append(log, clock.millis(), 1, 100);
      assertFalse(log.isFenced());
      assertEquals(3, owner.runRetentionOnce(topic -> 1000L));
      assertEquals(3, log.startOffset());
      fx.append(log, clock.millis(), 1, 100);
    }
  }

  @Test
  void shouldCloseAndEvictAFencedLogAndKeepRefusingThePartitionWithoutReopeningIt() throws Exception {
    Path root = new Path("/talos/fenced-eviction");
    try (PartitionLogs owner = new PartitionLogs(client(), root, small, clock);
        PartitionLogs other = new PartitionLogs(client(), root, small, clock)) {
      PartitionLog log = owner.log("CL1#t#0123", 0);
      fx.append(log, clock.millis(), 1, 100);
      other.log("CL1#t#0123", 0); // another server takes the partition over
      assertThrows(PartitionFencedException.class, () -> fx.append(log, clock.millis(), 1, 100));
      assertTrue(log.isFenced());

      assertEquals(1, owner.runEvictionOnce());
      assertTrue(log.isClosed(), "the fenced log's files are released");
      assertEquals(0, owner.openLogCount());
      int opened = owner.openedLogs();
      // Refused as before (until restart), and never reopened: that would take it back over.
      assertThrows(PartitionFencedException.class, () -> owner.log("CL1#t#0123", 0));
      assertThrows(PartitionFencedException.class, () -> owner.offsets("CL1#t#0123", 0));
      assertEquals(opened, owner.openedLogs());
      assertFalse(other.log("CL1#t#0123", 0).isFenced());
    }
  }

  @Test
  void shouldServeConsumersAtTheTailFromTheCacheWithoutOpeningFiles() throws Exception {
    LeaseCountingFileSystem fs = new LeaseCountingFileSystem(client());
    TailCache cache = new TailCache(8 * 1024);
    PartitionLog log = open(fs, small, cache);
    int opensAfterOpen = fs.opens.get();
    long consumed = 0;
    for (int i = 0; i < 60; i++) {
      fx.append(log, T0, 2, 300);
      List<StoredBlock> got = log.read(consumed, 100, 1 << 20); // a consumer keeping up with the tail
      consumed = got.get(got.size() - 1).nextOffset();
      assertTrue(cache.sizeBytes() <= cache.capacityBytes(), "cache within its bound: " + cache.sizeBytes());
    }
    assertEquals(opensAfterOpen, fs.opens.get(), "no file opened for tail reads");
    assertEquals(log.endOffset(), consumed);
    assertTrue(cache.hits() >= 60, "hits: " + cache.hits());

    fx.assertEveryBlockReadable(log, 0); // old data: evicted, read from hdfs through the index
    assertTrue(fs.opens.get() > opensAfterOpen, "old segments are read from the file system");
    assertTrue(cache.misses() > 0);
  }

  @Test
  void shouldKeepOffsetsAcknowledgedByThePreviousOwnerWhenItsSegmentClosesDuringTheTakeover() throws Exception {
    PartitionLog first = open(client(), small, TailCache.DISABLED);
    for (int i = 0; i < 4; i++) fx.append(first, T0, 1, 100); // acknowledged: hflushed, the file still open
    // The new owner's recovery lists the directory (the claim lists twice first: to find the epoch
    // and to drop older markers) while the segment is open; the old server shuts down right after.
    FileSystem fs = new ListingHookFileSystem(client(), 2, first::close);
    PartitionLog second = open(fs, small, TailCache.DISABLED);

    assertEquals(4, second.endOffset(), "every acknowledged offset survives the takeover");
    fx.assertEveryBlockReadable(second, 0);
    assertEquals(4, second.append(List.of(LogFixture.block(4, 1, 10)), T0), "no offset is handed out twice");
  }

  @Test
  void shouldNotSealOrIndexASegmentOnCloseOnceTakenOver() throws Exception {
    PartitionLog first = open(client(), small, TailCache.DISABLED);
    for (int i = 0; i < 3; i++) fx.append(first, T0, 1, 100);
    Path active = first.segments().get(first.segmentCount() - 1).path();
    Path index = LogSegment.indexPath(dir, 0, 1);
    FileSystem fs = client();
    PartitionLog second = open(fs, small, TailCache.DISABLED);
    assertTrue(fs.exists(index), "the new owner sealed the old active segment");
    assertTrue(fs.delete(index, false));

    first.close();
    assertTrue(first.isFenced(), "close checked the ownership first");
    assertFalse(fs.exists(index), "a fenced owner writes no index");
    assertTrue(((LeaseRecoverable) fs).isFileClosed(active));
    fx.append(second, T0, 1, 100);
    fx.assertSequentialReadMatches(second, 0, Integer.MAX_VALUE, Integer.MAX_VALUE);
  }

  @Test
  void shouldNotLetAStaleOwnerDeleteTheNewOwnersSegments() throws Exception {
    LogConfig oneRecordSegments = small.toBuilder().segmentBytes(200).build();
    PartitionLog first = open(client(), oneRecordSegments, TailCache.DISABLED);
    for (int i = 0; i < 4; i++) fx.append(first, clock.millis(), 1, 100); // one record per segment
    clock.advanceMs(10_000);
    fx.append(first, clock.millis(), 1, 100); // the active segment is fresh: retention need not roll it
    PartitionLog second = open(client(), oneRecordSegments, TailCache.DISABLED);

    assertEquals(0, first.deleteExpiredSegments(1000), "only the current owner deletes");
    assertTrue(first.isFenced());
    assertEquals(0, second.startOffset());
    fx.assertEveryBlockReadable(second, 0);
    assertEquals(4, second.deleteExpiredSegments(1000));
    assertEquals(4, second.startOffset());
  }

}
