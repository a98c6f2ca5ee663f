package io.talos.server.storage;

import io.talos.server.ManualClock;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LeaseRecoverable;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PartitionLogTest {
  private static final long T0 = 1_700_000_000_000L;

  @TempDir java.nio.file.Path tmp;

  private FileSystem raw;
  private FaultInjectingFileSystem faulty;
  private Path dir;
  private ManualClock clock;
  private LogFixture fx;
  private final List<PartitionLog> opened = new ArrayList<>();

  /** Small segments and a dense index so that tests cross many segments and index entries. */
  private final LogConfig small = LogConfig.builder().segmentBytes(4096).indexIntervalBytes(256).build();

  @BeforeEach
  void setUp() throws IOException {
    raw = PartitionLogs.fileSystemFor(URI.create("file:///"), new Configuration());
    faulty = new FaultInjectingFileSystem(raw);
    dir = new Path(new Path(tmp.toUri()), "topic/0");
    clock = new ManualClock(T0);
    fx = new LogFixture();
  }

  @AfterEach
  void tearDown() throws IOException {
    for (PartitionLog log : opened) log.close();
    raw.close();
  }

  private PartitionLog open(LogConfig config) throws IOException {
    return open(raw, config);
  }

  private PartitionLog open(FileSystem fs, LogConfig config) throws IOException {
    PartitionLog log = PartitionLog.open(fs, dir, config, clock);
    opened.add(log);
    return log;
  }

  private java.nio.file.Path local(Path p) {
    return java.nio.file.Path.of(p.toUri());
  }

  private java.nio.file.Path activeFile(PartitionLog log) {
    return local(log.segments().get(log.segmentCount() - 1).path());
  }

  private List<String> filesInDir() throws IOException {
    try (var s = Files.list(local(dir))) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  // ---- rolls ----

  @Test
  void shouldRollWithoutWaitingForTheSealedSegmentsIndexFiles() throws Exception {
    faulty.holdCreates = p -> p.getName().endsWith(".index.tmp");
    PartitionLog log = open(faulty, small);
    fx.append(log, T0, 10, 3000);
    ExecutorService putThread = Executors.newSingleThreadExecutor();
    try {
      Future<Long> rolling = putThread.submit(() -> fx.append(log, T0, 10, 3000)); // > 4096 bytes: rolls
      assertEquals(10, rolling.get(10, java.util.concurrent.TimeUnit.SECONDS), "the roll waited for the index write");
      assertTrue(faulty.createHeld.await(10, java.util.concurrent.TimeUnit.SECONDS), "the index write started");
      assertEquals(2, log.segmentCount());
      fx.assertEveryBlockReadable(log, 0);
      assertFalse(filesInDir().contains(String.format("%020d.index", 0)), "held: not written yet");
    } finally {
      faulty.createGate.countDown();
      putThread.shutdownNow();
    }
    log.close();
    assertTrue(filesInDir().contains(String.format("%020d.index", 0)), "close waits for the seal: " + filesInDir());
    PartitionLog reopened = open(small);
    assertEquals(20, reopened.endOffset());
    fx.assertEveryBlockReadable(reopened, 0);
  }

  @Test
  void shouldNotRecreateADeletedLogDirectoryWithALateIndex() throws Exception {
    faulty.holdCreates = p -> p.getName().endsWith(".index.tmp");
    PartitionLog log = open(faulty, small);
    fx.append(log, T0, 10, 3000);
    fx.append(log, T0, 10, 3000); // rolls; its index write is held
    assertTrue(faulty.createHeld.await(10, java.util.concurrent.TimeUnit.SECONDS));
    ExecutorService deleter = Executors.newSingleThreadExecutor();
    try {
      Future<?> deleting = deleter.submit(() -> {
        log.deleteAll();
        return null;
      });
      Thread.sleep(100); // deleteAll must be waiting for the seal, not done
      assertFalse(deleting.isDone(), "deleted while an index write was still to come");
      faulty.createGate.countDown();
      deleting.get(10, java.util.concurrent.TimeUnit.SECONDS);
    } finally {
      faulty.createGate.countDown();
      deleter.shutdownNow();
    }
    assertFalse(raw.exists(dir), "the directory stays deleted");
  }

  // ---- append and read ----

  @Test
  void shouldReadBackEveryBlockOfManyAppendsAcrossSegments() throws Exception {
    PartitionLog log = open(small);
    Random rnd = new Random(42);
    for (int i = 0; i < 300; i++) {
      int blocks = 1 + rnd.nextInt(4);
      int[] counts = new int[blocks];
      int[] sizes = new int[blocks];
      for (int b = 0; b < blocks; b++) {
        counts[b] = 1 + rnd.nextInt(20);
        sizes[b] = rnd.nextInt(600);
      }
      fx.append(log, T0 + i, counts, sizes);
    }
    assertTrue(log.segmentCount() > 20, "segments: " + log.segmentCount());
    assertEquals(0, log.startOffset());
    assertEquals(T0 + 299, log.lastAppendTimestampMs());
    fx.assertEveryBlockReadable(log, 0);
    fx.assertSequentialReadMatches(log, 0, 7, 1000);
    fx.assertSequentialReadMatches(log, 0, Integer.MAX_VALUE, Integer.MAX_VALUE);
    long recordBytes = fx.appended.stream()
        .mapToLong(e -> RecordFormat.recordLength(e.block().payload().length)).sum();
    assertEquals(recordBytes, log.sizeBytes());
  }

  /**
   * A read hands out blocks as slices of the arrays it read records into: refilling the read
   * buffer after handing out a slice of it must not overwrite blocks already returned. Blocks
   * smaller and larger than a read chunk (64 KiB), all returned by one read and checked after it.
   */
  @Test
  void shouldKeepBlocksReturnedEarlierInTheSameReadIntact() throws Exception {
    PartitionLog log = open(LogConfig.builder().build());
    int[] sizes = {300, 70_000, 20_000, 5, 65_536, 40_000, 1};
    for (int i = 0; i < 28; i++) fx.append(log, T0 + i, 1 + i % 3, sizes[i % sizes.length]);
    fx.assertSequentialReadMatches(log, 0, Integer.MAX_VALUE, Integer.MAX_VALUE);
    fx.assertSequentialReadMatches(log, 3, 40, 200_000);
  }

  /**
   * Under a lease a read hands out slices of pooled direct buffers (1 MiB each, several records
   * per buffer), each valid until the lease is released; refills take another buffer, so blocks
   * returned earlier in the same read stay intact. A record larger than a buffer, and every read
   * once the pool is used up, goes to a heap array, with the same bytes.
   */
  @Test
  void aReadUnderALeaseHandsOutSlicesOfPooledDirectBuffers() throws Exception {
    PartitionLog log = open(LogConfig.builder().build());
    int[] sizes = {300, 70_000, 200_000, 5, ReadBufferPool.BUFFER_BYTES + 10, 40_000, 1};
    for (int i = 0; i < 40; i++) fx.append(log, T0 + i, 1 + i % 3, sizes[i % sizes.length]);
    ReadBufferPool pool = new ReadBufferPool(3L * ReadBufferPool.BUFFER_BYTES);

    ReadLease lease = new ReadLease(pool);
    List<StoredBlock> got = log.read(0, Integer.MAX_VALUE, 6 * 1024 * 1024, lease);
    assertTrue(got.size() >= 7, "blocks: " + got.size());
    assertEquals(3, lease.heldBuffers(), "the reads took every buffer of the pool");
    assertTrue(got.get(0).payloadBytes().isDirect());
    assertFalse(got.get(4).payloadBytes().isDirect(), "larger than a buffer: a heap array of its own");
    assertFalse(got.get(got.size() - 1).payloadBytes().isDirect(), "the pool is used up: heap arrays");
    for (int i = 0; i < got.size(); i++) LogFixture.assertBlock(fx.appended.get(i), got.get(i));
    lease.release();
    assertEquals(0, pool.outBytes());

    // reads one after another, each released before the next, cover the log with one buffer
    ReadBufferPool one = new ReadBufferPool(ReadBufferPool.BUFFER_BYTES);
    long o = 0;
    int i = 0;
    while (o < log.endOffset()) {
      ReadLease each = new ReadLease(one);
      List<StoredBlock> blocks = log.read(o, 5, 300_000, each);
      for (StoredBlock b : blocks) LogFixture.assertBlock(fx.appended.get(i++), b);
      o = blocks.get(blocks.size() - 1).nextOffset();
      each.release();
    }
    assertEquals(fx.appended.size(), i);
    assertEquals(0, one.outBytes());
    assertEquals(ReadBufferPool.BUFFER_BYTES, one.allocatedBytes(), "one buffer, reused by the reads");
  }

  @Test
  void shouldReturnTheBlockContainingTheOffsetFirst() throws Exception {
    PartitionLog log = open(small);
    fx.append(log, T0, new int[] {10, 5}, new int[] {30, 40});
    List<StoredBlock> got = log.read(7, 100, 10_000);
    assertEquals(2, got.size());
    assertEquals(0, got.get(0).startOffset());
    assertEquals(10, got.get(1).startOffset());
    assertEquals(10, log.read(14, 1, 0).get(0).startOffset());
  }

  @Test
  void shouldStopAtMaxMessagesAfterTheBlockThatReachesIt() throws Exception {
    PartitionLog log = open(small);
    for (int i = 0; i < 5; i++) fx.append(log, T0, 3, 10);
    assertEquals(1, log.read(0, 3, 1000).size());
    assertEquals(2, log.read(0, 4, 1000).size());
    assertEquals(2, log.read(1, 4, 1000).size(), "the first block counts whole");
    assertEquals(5, log.read(0, 1000, 1000).size());
  }

  @Test
  void shouldStopBeforeExceedingMaxBytesButReturnAtLeastOneBlock() throws Exception {
    PartitionLog log = open(small);
    for (int i = 0; i < 4; i++) fx.append(log, T0, 1, 100);
    fx.append(log, T0, 1, 3000);
    assertEquals(2, log.read(0, 100, 250).size());
    assertEquals(2, log.read(0, 100, 200).size());
    assertEquals(1, log.read(0, 100, 199).size());
    assertEquals(1, log.read(0, 100, 0).size());
    List<StoredBlock> big = log.read(4, 100, 10);
    assertEquals(1, big.size());
    assertEquals(3000, big.get(0).payload().length);
  }

  @Test
  void shouldReturnNothingAtTheEndAndRejectOffsetsOutsideTheLog() throws Exception {
    PartitionLog log = open(small);
    assertEquals(List.of(), log.read(0, 10, 100), "empty log");
    fx.append(log, T0, 5, 10);
    assertEquals(List.of(), log.read(5, 10, 100));
    OffsetOutOfRangeException above = assertThrows(OffsetOutOfRangeException.class, () -> log.read(6, 10, 100));
    assertEquals(0, above.startOffset());
    assertEquals(5, above.endOffset());
    assertEquals(6, above.requestedOffset());
    assertTrue(above.getMessage().contains("startOffset=0") && above.getMessage().contains("endOffset=5"),
        above.getMessage());
    assertThrows(OffsetOutOfRangeException.class, () -> log.read(-1, 10, 100));
    assertThrows(IllegalArgumentException.class, () -> log.read(0, 0, 100));
  }

  @Test
  void shouldRejectInvalidBlocksWithoutWritingAnything() throws Exception {
    PartitionLog log = open(small.toBuilder().maxBlockBytes(1000).build());
    fx.append(log, T0, 1, 10);
    long size = log.sizeBytes();
    assertThrows(IllegalArgumentException.class, () -> log.append(List.of(), T0));
    assertThrows(IllegalArgumentException.class,
        () -> log.append(List.of(new BlockToAppend(0, 0, -1, -1, new byte[1])), T0));
    IllegalArgumentException tooBig = assertThrows(IllegalArgumentException.class,
        () -> log.append(List.of(LogFixture.block(1, 1, 10), LogFixture.block(2, 1, 1001)), T0));
    assertTrue(tooBig.getMessage().contains("maxBlockBytes=1000"), tooBig.getMessage());
    assertEquals(1, log.endOffset());
    assertEquals(size, log.sizeBytes());
    fx.append(log, T0, 1, 10);
    fx.assertSequentialReadMatches(log, 0, 100, 10_000);
  }

  // ---- segments and index ----

  @Test
  void shouldRollBySizeAndPutAnOversizedBatchAloneInASegment() throws Exception {
    PartitionLog log = open(small);
    for (int i = 0; i < 10; i++) fx.append(log, T0, 1, 951); // 1000-byte records
    // 4 records fit in 4096 bytes: segments of 4 + 4 + 2
    assertEquals(3, log.segmentCount());
    for (LogSegment s : log.segments()) assertTrue(s.validBytes() <= 4096, s.toString());
    fx.append(log, T0, 1, 10_000);
    assertEquals(4, log.segmentCount(), "the big record rolls the non-empty segment");
    fx.append(log, T0, 1, 10);
    assertEquals(5, log.segmentCount(), "and the segment holding it is full");
    log.awaitSeals();
    assertEquals(List.of("00000000000000000000.index", "00000000000000000000.log", "00000000000000000000.timeindex",
        "00000000000000000004.index", "00000000000000000004.log", "00000000000000000004.timeindex",
        "00000000000000000008.index", "00000000000000000008.log", "00000000000000000008.timeindex",
        "00000000000000000010.index", "00000000000000000010.log", "00000000000000000010.timeindex",
        "00000000000000000011.log"), filesInDir());
    fx.assertEveryBlockReadable(log, 0);
  }

  @Test
  void shouldRollByAgeOfTheFirstAppendUsingTheClock() throws Exception {
    PartitionLog log = open(small.toBuilder().segmentMs(1000).build());
    fx.append(log, T0, 1, 10);
    clock.advanceMs(999);
    fx.append(log, T0, 1, 10);
    assertEquals(1, log.segmentCount());
    clock.advanceMs(1);
    fx.append(log, T0, 1, 10);
    assertEquals(2, log.segmentCount());
    clock.advanceMs(50_000); // an idle segment does not roll until the next append
    assertEquals(2, log.segmentCount());
    fx.append(log, T0, 1, 10);
    assertEquals(3, log.segmentCount());
    assertEquals(3, log.segments().get(2).baseOffset());
    fx.assertEveryBlockReadable(log, 0);
  }

  @Test
  void shouldFindEveryOffsetThroughTheIndexAcrossRolls() throws Exception {
    PartitionLog log = open(small.toBuilder().segmentBytes(20_000).indexIntervalBytes(100).build());
    for (int i = 0; i < 400; i++) fx.append(log, T0, 1 + i % 4, 50 + i % 70);
    assertTrue(log.segmentCount() >= 3);
    for (LogSegment s : log.segments().subList(0, log.segmentCount() - 1)) {
      assertTrue(s.index().entryCount() > 50, s + " has " + s.index().entryCount() + " index entries");
      // the entry for an offset points at the record that holds it or an earlier one
      for (long o = s.baseOffset(); o < s.nextOffset(); o++) {
        long pos = s.index().lookup(o);
        RecordFormat.Header h = s.cursor(pos, s.validBytes()).next();
        assertTrue(h.startOffset() <= o, "index entry for " + o + " is past it");
      }
    }
    fx.assertEveryBlockReadable(log, 0);
  }

  @Test
  void shouldRebuildMissingOrCorruptIndexFilesOnOpen() throws Exception {
    PartitionLog log = open(small);
    for (int i = 0; i < 60; i++) fx.append(log, T0 + i, 2, 300);
    int segments = log.segmentCount();
    List<Integer> entries = log.segments().stream().map(s -> s.index().entryCount()).toList();
    log.close();

    try (var s = Files.list(local(dir))) {
      List<java.nio.file.Path> indexes = s.filter(p -> p.toString().endsWith(".index")).sorted().toList();
      assertEquals(segments, indexes.size());
      Files.delete(indexes.get(0));
      Files.write(indexes.get(1), new byte[] {1, 2, 3});
      byte[] third = Files.readAllBytes(indexes.get(2));
      third[20] ^= 1;
      Files.write(indexes.get(2), third);
    }
    PartitionLog reopened = open(small);
    assertEquals(segments + 1, reopened.segmentCount(), "a reopened log starts a new segment");
    assertEquals(entries.subList(0, 3), reopened.segments().subList(0, 3).stream().map(s -> s.index().entryCount()).toList());
    fx.assertEveryBlockReadable(reopened, 0);
    assertEquals(T0 + 59, reopened.lastAppendTimestampMs());
    for (int i = 0; i < 3; i++) {
      assertTrue(Files.exists(local(LogSegment.indexPath(dir, reopened.segments().get(i).baseOffset()))), "rewritten");
    }
  }

  // ---- retention ----

  @Test
  void shouldDeleteOnlyExpiredWholeSegmentsAndAdvanceTheStartOffset() throws Exception {
    PartitionLog log = open(small);
    // four segments of 4 records each, appended 1000 ms apart
    for (int seg = 0; seg < 4; seg++) {
      for (int i = 0; i < 4; i++) fx.append(log, clock.millis(), 1, 951);
      clock.advanceMs(1000);
    }
    fx.append(log, clock.millis(), 1, 951); // rolls: the active segment
    assertEquals(5, log.segmentCount());
    // now = T0 + 4000; segments' newest appends: T0, T0+1000, T0+2000, T0+3000
    assertEquals(0, log.deleteExpiredSegments(4000), "newest append == now - retention is not older");
    assertEquals(2, log.deleteExpiredSegments(2500));
    assertEquals(8, log.startOffset());
    assertEquals(3, log.segmentCount());
    assertFalse(Files.exists(local(LogSegment.logPath(dir, 0))));
    assertFalse(Files.exists(local(LogSegment.indexPath(dir, 4))));
    OffsetOutOfRangeException e = assertThrows(OffsetOutOfRangeException.class, () -> log.read(7, 1, 0));
    assertEquals(8, e.startOffset());
    fx.assertEveryBlockReadable(log, 8);
    assertEquals(2, log.deleteExpiredSegments(0), "never the active segment while newer data is in it");
    assertEquals(1, log.segmentCount());
    assertEquals(16, log.startOffset());
  }

  @Test
  void shouldRollAndDeleteTheActiveSegmentWhenEverythingExpired() throws Exception {
    PartitionLog log = open(small);
    for (int i = 0; i < 6; i++) fx.append(log, clock.millis(), 1, 951);
    clock.advanceMs(10_000);
    assertEquals(2, log.deleteExpiredSegments(5000));
    assertEquals(6, log.startOffset());
    assertEquals(6, log.endOffset());
    assertEquals(1, log.segmentCount());
    assertEquals(List.of(), log.read(6, 1, 1));
    assertEquals(List.of("00000000000000000006.log"), filesInDir());
    log.close();

    PartitionLog reopened = open(small);
    assertEquals(6, reopened.startOffset(), "the end offset survives through the empty segment's name");
    assertEquals(6, reopened.endOffset());
    fx.append(reopened, clock.millis(), 1, 10);
    fx.assertEveryBlockReadable(reopened, 6);
  }

  // ---- restart and crash recovery ----

  @Test
  void shouldKeepEveryRecordAcrossCloseAndReopen() throws Exception {
    PartitionLog log = open(small);
    for (int i = 0; i < 50; i++) fx.append(log, T0 + i, 1 + i % 5, i * 13 % 700);
    long end = log.endOffset();
    log.close();
    assertThrows(IOException.class, () -> log.append(List.of(LogFixture.block(end, 1, 1)), T0));
    assertThrows(IOException.class, () -> log.read(0, 1, 1));

    PartitionLog reopened = open(small);
    assertEquals(end, reopened.endOffset());
    assertEquals(0, reopened.startOffset());
    fx.assertSequentialReadMatches(reopened, 0, 13, 2000);
    for (int i = 0; i < 10; i++) fx.append(reopened, T0, 2, 100);
    reopened.close();
    PartitionLog again = open(small);
    fx.assertEveryBlockReadable(again, 0);
    fx.assertSequentialReadMatches(again, 0, Integer.MAX_VALUE, Integer.MAX_VALUE);
  }

  @Test
  void shouldKeepEveryAcknowledgedRecordAfterAnAbruptStop() throws Exception {
    PartitionLog crashed = open(small);
    for (int i = 0; i < 40; i++) fx.append(crashed, T0, 3, 200);
    crashed.awaitSeals(); // a crash stops the seal thread too; here it finishes before recovery reads
    opened.remove(crashed); // never closed: no index for the active segment, writer left open

    PartitionLog recovered = open(small);
    assertEquals(120, recovered.endOffset());
    fx.assertEveryBlockReadable(recovered, 0);
    fx.append(recovered, T0, 1, 10);
    fx.assertSequentialReadMatches(recovered, 0, 50, 5000);
  }

  @Test
  void shouldCutBackGarbageAppendedAfterTheLastRecord() throws Exception {
    PartitionLog crashed = open(small);
    for (int i = 0; i < 5; i++) fx.append(crashed, T0, 2, 100);
    java.nio.file.Path active = activeFile(crashed);
    long validBytes = Files.size(active);
    crashed.awaitSeals(); // a crash stops the seal thread too; here it finishes before recovery reads
    opened.remove(crashed);
    byte[] garbage = new byte[777];
    new Random(1).nextBytes(garbage);
    garbage[0] = RecordFormat.MAGIC_V1; // looks like the start of a record
    Files.write(active, garbage, StandardOpenOption.APPEND);

    PartitionLog recovered = open(small);
    assertEquals(10, recovered.endOffset());
    assertEquals(validBytes, recovered.segments().get(0).validBytes());
    fx.assertEveryBlockReadable(recovered, 0);
    fx.append(recovered, T0, 1, 10);
    assertEquals(11, recovered.endOffset());
    recovered.close();
    PartitionLog again = open(small);
    fx.assertSequentialReadMatches(again, 0, 100, 100_000);
  }

  @Test
  void shouldCutBackARecordTruncatedInTheMiddle() throws Exception {
    PartitionLog crashed = open(small);
    for (int i = 0; i < 5; i++) fx.append(crashed, T0, 2, 100);
    java.nio.file.Path active = activeFile(crashed);
    crashed.awaitSeals(); // a crash stops the seal thread too; here it finishes before recovery reads
    opened.remove(crashed);
    try (RandomAccessFile f = new RandomAccessFile(active.toFile(), "rw")) {
      f.setLength(f.length() - 60); // the last 149-byte record loses its end
    }
    fx.forgetFrom(8);

    PartitionLog recovered = open(small);
    assertEquals(8, recovered.endOffset());
    fx.assertEveryBlockReadable(recovered, 0);
    assertEquals(8, fx.append(recovered, T0, 1, 10));
    recovered.close();
    fx.assertSequentialReadMatches(open(small), 0, 100, 100_000);
  }

  @Test
  void shouldCutBackALastRecordWhoseCrcFails() throws Exception {
    PartitionLog crashed = open(small);
    for (int i = 0; i < 5; i++) fx.append(crashed, T0, 2, 100);
    java.nio.file.Path active = activeFile(crashed);
    crashed.awaitSeals(); // a crash stops the seal thread too; here it finishes before recovery reads
    opened.remove(crashed);
    byte[] bytes = Files.readAllBytes(active);
    bytes[bytes.length - 5] ^= 0x40; // in the payload of the last record
    Files.write(active, bytes);
    fx.forgetFrom(8);

    PartitionLog recovered = open(small);
    assertEquals(8, recovered.endOffset());
    fx.assertEveryBlockReadable(recovered, 0);
    assertEquals(8, fx.append(recovered, T0, 1, 10));
    fx.assertSequentialReadMatches(recovered, 0, 100, 100_000);
  }

  @Test
  void shouldReplaceANewestSegmentThatHoldsNoWholeRecord() throws Exception {
    PartitionLog crashed = open(small);
    for (int i = 0; i < 5; i++) fx.append(crashed, T0, 1, 951); // rolls at offset 4
    java.nio.file.Path active = activeFile(crashed);
    assertEquals("00000000000000000004.log", active.getFileName().toString());
    crashed.awaitSeals(); // a crash stops the seal thread too; here it finishes before recovery reads
    opened.remove(crashed);
    try (RandomAccessFile f = new RandomAccessFile(active.toFile(), "rw")) {
      f.setLength(30);
    }
    fx.forgetFrom(4);

    PartitionLog recovered = open(small);
    assertEquals(4, recovered.endOffset());
    assertEquals(2, recovered.segmentCount());
    assertEquals(0, Files.size(activeFile(recovered)));
    assertEquals(4, fx.append(recovered, T0, 1, 10));
    fx.assertSequentialReadMatches(recovered, 0, 100, 100_000);
  }

  /**
   * A corrupt record followed by valid ones is damage, not a torn tail: the valid records after it
   * prove their offsets were handed out (acknowledged). Cutting back there would hand them out
   * again, serving other messages under offsets a consumer may already have read. The log refuses
   * to open until an operator resets the partition, which then continues after them.
   */
  @Test
  void shouldRefuseANewestSegmentWithACorruptRecordInTheMiddleAndNeverReuseItsOffsets() throws Exception {
    PartitionLog crashed = open(small);
    for (int i = 0; i < 5; i++) fx.append(crashed, T0, 2, 100); // 149-byte records [0,2) ... [8,10)
    java.nio.file.Path active = activeFile(crashed);
    crashed.awaitSeals(); // a crash stops the seal thread too; here it finishes before recovery reads
    opened.remove(crashed);
    byte[] bytes = Files.readAllBytes(active);
    bytes[2 * 149 + 60] ^= 1; // payload of the third record, [4,6)
    Files.write(active, bytes);

    PartitionDataMissingException e = assertThrows(PartitionDataMissingException.class, () -> open(small));
    assertTrue(e.getMessage().contains("offset 4") && e.getMessage().contains("10"), e.getMessage());

    PartitionLog reset = PartitionLog.open(raw, dir, small, clock, TailCache.DISABLED, NextOffsetStore.NONE, "", 0, true);
    opened.add(reset);
    assertEquals(10, reset.endOffset(), "continues after the last valid record: no offset handed out twice");
    assertEquals(10, fx.append(reset, T0, 1, 10));
    assertEquals(2, reset.read(0, 100, 100_000).size(), "the records before the damage stay readable");
    assertThrows(CorruptRecordException.class, () -> reset.read(4, 1, 0), "the lost offsets are refused, not skipped");
  }

  @Test
  void shouldReportCorruptionInASealedSegmentInsteadOfSkippingIt() throws Exception {
    PartitionLog log = open(small);
    for (int i = 0; i < 12; i++) fx.append(log, T0, 1, 951); // segments [0,4) [4,8) [8,12)
    log.close();
    java.nio.file.Path first = local(LogSegment.logPath(dir, 0));
    byte[] bytes = Files.readAllBytes(first);
    bytes[2 * 1000 + 500] ^= 1; // the record of offset 2
    Files.write(first, bytes);

    // the index is valid, so the segment is not scanned: the read finds the bad record
    PartitionLog reopened = open(small);
    CorruptRecordException e = assertThrows(CorruptRecordException.class, () -> reopened.read(2, 1, 0));
    assertTrue(e.getMessage().contains("CRC32C"), e.getMessage());
    assertEquals(2, reopened.read(0, 100, 100_000).size(), "blocks before the bad one are returned");
    fx.assertEveryBlockReadable(reopened, 4);
    reopened.close();

    // without the index the segment is scanned: the loss is found on open, and reads of it fail
    Files.delete(local(LogSegment.indexPath(dir, 0)));
    PartitionLog rescanned = open(small);
    assertEquals(0, rescanned.startOffset());
    assertEquals(2, rescanned.segments().get(0).nextOffset());
    assertTrue(rescanned.segments().get(0).lostTail().contains("CRC32C"));
    CorruptRecordException lost = assertThrows(CorruptRecordException.class, () -> rescanned.read(3, 1, 0));
    assertTrue(lost.getMessage().contains("[2, 4)"), lost.getMessage());
    assertEquals(2, rescanned.read(0, 100, 100_000).size());
    fx.assertEveryBlockReadable(rescanned, 4);
    assertEquals(12, fx.append(rescanned, T0, 1, 10));
  }

  @Test
  void shouldRecoverTheLeaseOfSegmentsLeftOpenOnFileSystemsWithLeases() throws Exception {
    PartitionLog crashed = open(small);
    for (int i = 0; i < 6; i++) fx.append(crashed, T0, 1, 951);
    crashed.awaitSeals(); // a crash stops the seal thread too; here it finishes before recovery reads
    opened.remove(crashed);

    LeaseFileSystem leases = new LeaseFileSystem(raw, activeFile(crashed).getFileName().toString());
    PartitionLog recovered = open(leases, small);
    assertEquals(List.of("00000000000000000004.log"), leases.recovered);
    fx.assertEveryBlockReadable(recovered, 0);
  }

  @Test
  void shouldClaimANewOwnerEpochAndDropEmptySegmentsLeftByAFencedOwner() throws Exception {
    LeaseFileSystem leases = new LeaseFileSystem(raw, "none");
    PartitionLog first = open(leases, small);
    for (int i = 0; i < 6; i++) fx.append(first, T0, 1, 951); // segments at 0 (4 records) and 4
    first.close();
    assertEquals(List.of("00000000000000000000-00000000000000000001.index",
        "00000000000000000000-00000000000000000001.log", "00000000000000000000-00000000000000000001.timeindex",
        "00000000000000000001.owner",
        "00000000000000000004-00000000000000000001.index", "00000000000000000004-00000000000000000001.log",
        "00000000000000000004-00000000000000000001.timeindex"),
        filesInDir());
    // what a fenced owner may leave behind: an empty segment inside another's range, and an empty
    // lower-epoch file with the same base offset as a real segment
    Files.write(local(LogSegment.logPath(dir, 2, 1)), new byte[0]);
    Files.write(local(LogSegment.logPath(dir, 4, 0)), new byte[0]);

    PartitionLog second = open(leases, small);
    assertEquals(6, second.endOffset());
    fx.assertEveryBlockReadable(second, 0);
    assertEquals(List.of("00000000000000000000-00000000000000000001.index",
        "00000000000000000000-00000000000000000001.log", "00000000000000000000-00000000000000000001.timeindex",
        "00000000000000000002.owner",
        "00000000000000000004-00000000000000000001.index", "00000000000000000004-00000000000000000001.log",
        "00000000000000000004-00000000000000000001.timeindex",
        "00000000000000000006-00000000000000000002.log"), filesInDir());
    assertFalse(second.isFenced());
  }

  /** Reports one file as still open until its lease is recovered. */
  static final class LeaseFileSystem extends FaultInjectingFileSystem implements LeaseRecoverable {
    private final String openFile;
    final List<String> recovered = new ArrayList<>();

    LeaseFileSystem(FileSystem raw, String openFile) {
      super(raw);
      this.openFile = openFile;
    }

    @Override
    public boolean recoverLease(Path file) {
      recovered.add(file.getName());
      return true;
    }

    @Override
    public boolean isFileClosed(Path file) {
      return !file.getName().equals(openFile) || recovered.contains(file.getName());
    }
  }

  // ---- failed appends ----

  @Test
  void shouldNotExposeAPartlyWrittenAppendAndStayWritable() throws Exception {
    PartitionLog log = open(faulty, small);
    for (int i = 0; i < 3; i++) fx.append(log, T0, 2, 100);
    faulty.nextWriteFault = FaultInjectingFileSystem.WriteFault.HALF_THEN_IOEXCEPTION;
    IOException e = assertThrows(IOException.class,
        () -> log.append(List.of(LogFixture.block(6, 2, 500), LogFixture.block(8, 1, 500)), T0));
    assertTrue(e.getMessage().contains("injected write failure"), e.getMessage());
    assertEquals(6, log.endOffset());
    assertEquals(List.of(), log.read(6, 10, 10_000));
    assertThrows(OffsetOutOfRangeException.class, () -> log.read(7, 1, 1));
    assertEquals(2, log.segmentCount(), "a new segment starts at the unchanged end offset");
    assertEquals(6, log.segments().get(1).baseOffset());

    assertEquals(6, fx.append(log, T0, 3, 50));
    fx.assertSequentialReadMatches(log, 0, 100, 100_000);
    log.close();
    PartitionLog reopened = open(small);
    fx.assertSequentialReadMatches(reopened, 0, 100, 100_000);
  }

  @Test
  void shouldIgnoreAWholeWriteWhoseFlushFailedAlsoAfterRestartWithoutIndexes() throws Exception {
    PartitionLog log = open(faulty, small);
    for (int i = 0; i < 3; i++) fx.append(log, T0, 2, 100);
    faulty.failNextFlushes.set(1);
    assertThrows(IOException.class, () -> log.append(List.of(LogFixture.block(6, 5, 100)), T0));
    assertEquals(6, log.endOffset());
    assertEquals(List.of(), log.read(6, 10, 10_000));
    // the failed record is whole and valid in the old file, but never read: the log moved on
    assertEquals(3 * 149 + 149, Files.size(local(LogSegment.logPath(dir, 0))));
    assertEquals(6, fx.append(log, T0, 1, 77));
    fx.assertSequentialReadMatches(log, 0, 100, 100_000);
    log.awaitSeals(); // a crash stops the seal thread too; here it finishes before recovery reads
    opened.remove(log); // crash

    PartitionLog reopened = open(small);
    fx.assertSequentialReadMatches(reopened, 0, 100, 100_000);
    reopened.close();
    try (var s = Files.list(local(dir))) {
      for (java.nio.file.Path p : s.filter(p -> p.toString().endsWith(".index")).toList()) Files.delete(p);
    }
    PartitionLog rescanned = open(small);
    assertEquals(7, rescanned.endOffset());
    fx.assertSequentialReadMatches(rescanned, 0, 100, 100_000);
    fx.assertEveryBlockReadable(rescanned, 0);
  }

  @Test
  void shouldReplaceTheActiveSegmentWhenItsFirstAppendFails() throws Exception {
    PartitionLog log = open(faulty, small);
    faulty.failNextFlushes.set(1);
    assertThrows(IOException.class, () -> log.append(List.of(LogFixture.block(0, 1, 10)), T0));
    assertEquals(0, log.endOffset());
    assertEquals(1, log.segmentCount());
    assertEquals(0, Files.size(activeFile(log)), "the failed segment file was replaced");
    assertEquals(0, fx.append(log, T0, 1, 10));
    fx.assertSequentialReadMatches(log, 0, 100, 100_000);
  }

  @Test
  void shouldRetryStartingASegmentOnTheNextAppendWhenThatFailedToo() throws Exception {
    PartitionLog log = open(faulty, small);
    fx.append(log, T0, 1, 10);
    faulty.nextWriteFault = FaultInjectingFileSystem.WriteFault.HALF_THEN_IOEXCEPTION;
    // The new segment and its retry; the old one's index files are written by the seal thread,
    // at a time of its own, so they are not counted.
    faulty.failCreatesOf = p -> p.getName().endsWith(".log");
    faulty.failNextCreates.set(2);
    IOException first = assertThrows(IOException.class, () -> log.append(List.of(LogFixture.block(1, 1, 10)), T0));
    assertEquals(1, first.getSuppressed().length, "the failed roll is attached");
    IOException second = assertThrows(IOException.class, () -> log.append(List.of(LogFixture.block(1, 1, 10)), T0));
    assertTrue(second.getMessage().contains("injected create failure"), second.getMessage());
    assertEquals(1, log.endOffset());
    assertEquals(1, fx.append(log, T0, 1, 10));
    assertEquals(2, log.segmentCount());
    fx.assertSequentialReadMatches(log, 0, 100, 100_000);
  }

  @Test
  void shouldTurnADiskErrorIntoAnIOExceptionAndStayWritable() throws Exception {
    PartitionLog log = open(faulty, small);
    fx.append(log, T0, 1, 10);
    faulty.nextWriteFault = FaultInjectingFileSystem.WriteFault.NOTHING_THEN_FSERROR;
    IOException e = assertThrows(IOException.class, () -> log.append(List.of(LogFixture.block(1, 1, 10)), T0));
    assertTrue(e.getMessage().contains("disk error"), e.getMessage());
    assertEquals(1, fx.append(log, T0, 1, 10));
    fx.assertSequentialReadMatches(log, 0, 100, 100_000);
  }

  // ---- durability and file system behaviour ----

  @Test
  void shouldHflushOrHsyncOncePerAppendPerDurability() throws Exception {
    PartitionLog flushed = open(faulty, small);
    fx.append(flushed, T0, new int[] {1, 2, 3}, new int[] {10, 20, 30});
    fx.append(flushed, T0, 1, 10);
    assertEquals(2, faulty.hflushes.get());
    assertEquals(0, faulty.hsyncs.get());
    flushed.close();

    PartitionLog synced = open(faulty, small.toBuilder().durability(Durability.SYNC).build());
    fx.append(synced, T0, new int[] {1, 2}, new int[] {10, 20});
    assertEquals(1, faulty.hsyncs.get());
    assertEquals(2, faulty.hflushes.get());
    fx.assertSequentialReadMatches(synced, 0, 100, 100_000);
  }

  @Test
  void shouldWriteNoChecksumFilesEvenWhenGivenTheChecksummedLocalFileSystem() throws Exception {
    FileSystem checksummed = FileSystem.getLocal(new Configuration());
    PartitionLog log = open(checksummed, small.toBuilder().durability(Durability.SYNC).build());
    fx.append(log, T0, 1, 10);
    log.close();
    for (String name : filesInDir()) assertFalse(name.endsWith(".crc"), name);
  }

  @Test
  void shouldReopenReaderStreamsThatOnlySeeTheLengthAtOpenTimeLikeHdfs() throws Exception {
    faulty.snapshotReads = true;
    PartitionLog log = open(faulty, small.toBuilder().segmentBytes(1 << 20).build());
    fx.append(log, T0, 1, 10);
    fx.assertEveryBlockReadable(log, 0);
    int opensBefore = faulty.opens.get();
    for (int i = 0; i < 5; i++) {
      fx.append(log, T0, 1, 100_000); // beyond the 64 KiB read chunk and the snapshot
      fx.assertEveryBlockReadable(log, 0);
    }
    assertTrue(faulty.opens.get() > opensBefore);
    assertEquals(1, log.segmentCount());
  }

  // ---- concurrency ----

  @Test
  void shouldLetReadersSeeAConsistentPrefixWhileAppending() throws Exception {
    PartitionLog log = open(small.toBuilder().segmentBytes(8 * 1024).build());
    AtomicBoolean done = new AtomicBoolean();
    AtomicLong reads = new AtomicLong();
    ExecutorService pool = Executors.newFixedThreadPool(3);
    try {
      List<Future<?>> readers = new ArrayList<>();
      for (int r = 0; r < 2; r++) {
        int seed = r;
        readers.add(pool.submit(() -> {
          Random rnd = new Random(seed);
          while (!done.get()) {
            long end = log.endOffset();
            long from = end == 0 ? 0 : (long) (rnd.nextDouble() * end);
            List<StoredBlock> got = log.read(from, 1 + rnd.nextInt(50), rnd.nextInt(20_000));
            if (from < end && got.isEmpty()) throw new AssertionError("nothing read at " + from + " < " + end);
            long expect = -1;
            for (StoredBlock b : got) {
              if (expect >= 0 && b.startOffset() != expect) throw new AssertionError("gap at " + expect);
              if (b.messageCount() != 2) throw new AssertionError("bad block at " + b.startOffset());
              assertArrayEquals(LogFixture.payloadFor(b.startOffset(), 10 + (int) (b.startOffset() % 300)),
                  b.payload());
              expect = b.nextOffset();
            }
            if (!got.isEmpty() && got.get(0).startOffset() > from) throw new AssertionError("skipped " + from);
            if (expect > log.endOffset()) throw new AssertionError("read past the end offset");
            reads.incrementAndGet();
          }
          return null;
        }));
      }
      for (int i = 0; i < 1000; i++) {
        long offset = log.endOffset();
        log.append(List.of(new BlockToAppend(2, 0, -1, -1, LogFixture.payloadFor(offset, 10 + (int) (offset % 300)))),
            T0);
      }
      done.set(true);
      for (Future<?> f : readers) f.get();
    } finally {
      done.set(true);
      pool.shutdownNow();
    }
    assertEquals(2000, log.endOffset());
    assertTrue(log.segmentCount() > 10);
    assertTrue(reads.get() > 0);
  }

  // ---- deletion ----

  @Test
  void shouldDeleteTheWholeDirectory() throws Exception {
    PartitionLog log = open(small);
    fx.append(log, T0, 1, 10);
    log.deleteAll();
    assertFalse(Files.exists(local(dir)));
    assertTrue(log.isClosed());
    assertThrows(IOException.class, () -> log.read(0, 1, 1));
  }

  @Test
  void shouldCleanUpLeftoverIndexFilesOnOpen() throws Exception {
    PartitionLog log = open(small);
    fx.append(log, T0, 1, 10);
    log.close();
    Files.write(local(LogSegment.indexPath(dir, 999)), new byte[] {1});
    Files.write(local(new Path(dir, "00000000000000000000.index.tmp")), new byte[] {1});
    PartitionLog reopened = open(small);
    assertFalse(Files.exists(local(LogSegment.indexPath(dir, 999))));
    assertFalse(Files.exists(local(new Path(dir, "00000000000000000000.index.tmp"))));
    assertNull(reopened.segments().get(0).lostTail());
    fx.assertEveryBlockReadable(reopened, 0);
  }

  private static List<PartitionLog.Put> onePut(long offset) {
    return List.of(new PartitionLog.Put(List.of(LogFixture.block(offset, 1, 10)), PartitionLog.NO_PRODUCER, -1));
  }

  @Test
  void shouldFlushALoneAsyncAppendOnTheCallingThreadOnALocalFileSystemWithFlushDurability() throws Exception {
    PartitionLog log = open(small); // FLUSH on the raw local file system
    Thread[] completedOn = new Thread[1];
    java.util.concurrent.CompletableFuture<PartitionLog.PutResult[]> first = log.appendPutsAsync(onePut(0), T0);
    assertTrue(first.isDone(), "written, flushed and acknowledged before appendPutsAsync returned");
    first.whenComplete((r, e) -> completedOn[0] = Thread.currentThread());
    assertEquals(Thread.currentThread(), completedOn[0]);
    assertEquals(0, first.join()[0].firstOffset());
    assertEquals(1, log.endOffset(), "published: readable");
    assertEquals(1, log.appendPutsAsync(onePut(1), T0).join()[0].firstOffset());
    assertEquals(2, log.endOffset());
  }

  @Test
  void shouldHandTheFlushToAFlushThreadOnOtherFileSystems() throws Exception {
    PartitionLog log = open(faulty, small); // not the raw local file system: pipelined
    faulty.flushGate = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CompletableFuture<PartitionLog.PutResult[]> f = log.appendPutsAsync(onePut(0), T0);
    assertTrue(faulty.flushEntered.await(10, java.util.concurrent.TimeUnit.SECONDS), "a flush thread flushes");
    assertFalse(f.isDone(), "acknowledged only after the flush");
    assertEquals(0, log.endOffset());
    faulty.flushGate.countDown();
    assertEquals(0, f.get(10, java.util.concurrent.TimeUnit.SECONDS)[0].firstOffset());
    assertEquals(1, log.endOffset());
  }

  /**
   * A read at the tail starts at the record it asks for (the recent batches know where each
   * starts), not at the sparse index entry before it; older offsets start at a record boundary at
   * or before theirs. Every offset still reads back its own block.
   */
  @Test
  void aTailReadStartsAtItsRecordNotAtTheIndexEntryBeforeIt() throws Exception {
    PartitionLog log = open(LogConfig.builder().segmentBytes(1 << 20).indexIntervalBytes(4096).build());
    for (int i = 0; i < 30; i++) fx.append(log, T0 + i, new int[] {1 + i % 3}, new int[] {100}); // one batch each
    LogSegment seg = log.segments().get(log.segmentCount() - 1);
    List<long[]> records = new ArrayList<>(); // {start offset, next offset, position}
    LogSegment.RecordCursor c = seg.cursor(0, seg.validBytes());
    RecordFormat.Header h;
    while ((h = c.next()) != null) {
      records.add(new long[] {h.startOffset(), h.nextOffset(), c.position()});
      c.advance(h);
    }
    assertEquals(30, records.size());
    for (int r = 0; r < records.size(); r++) {
      long[] rec = records.get(r);
      for (long o = rec[0]; o < rec[1]; o++) {
        long start = seg.readStart(o);
        if (r >= records.size() - LogSegment.RECENT_BATCHES) {
          assertEquals(rec[2], start, "offset " + o + " of a recent batch starts at its record");
        } else {
          assertTrue(start <= rec[2] && start >= seg.index().lookup(o), "offset " + o + ": " + start);
          assertTrue(records.stream().anyMatch(x -> x[2] == start), "a record boundary: " + start);
        }
      }
    }
    assertEquals(0, seg.readStart(0), "the first offset: the start of the file");
    fx.assertEveryBlockReadable(log, 0);
    fx.assertSequentialReadMatches(log, 0, 1, Integer.MAX_VALUE);
  }
}
