package io.talos.server.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.server.ManualClock;
import io.talos.server.storage.PartitionLog.Put;
import io.talos.server.storage.PartitionLog.PutResult;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Idempotent puts in the partition log: repeats are answered with the first offsets, and the
 * producer state comes back from the records after a crash (the log opened again without being
 * closed) across segments.
 */
class PartitionLogIdempotenceTest {
  private static final long T0 = 1_700_000_000_000L;

  @TempDir java.nio.file.Path tmp;

  private FileSystem raw;
  private Path dir;
  private ManualClock clock;
  private final List<PartitionLog> opened = new ArrayList<>();
  private final LogConfig small = LogConfig.builder().segmentBytes(2048).indexIntervalBytes(256).build();

  @BeforeEach
  void setUp() throws IOException {
    raw = PartitionLogs.fileSystemFor(URI.create("file:///"), new Configuration());
    dir = new Path(new Path(tmp.toUri()), "topic/0");
    clock = new ManualClock(T0);
  }

  @AfterEach
  void tearDown() throws IOException {
    for (PartitionLog log : opened) log.close();
    raw.close();
  }

  private PartitionLog open(LogConfig config) throws IOException {
    PartitionLog log = PartitionLog.open(raw, dir, config, clock);
    opened.add(log);
    return log;
  }

  private static Put put(long producer, int seq, int... messages) {
    List<BlockToAppend> blocks = new ArrayList<>();
    for (int m : messages) blocks.add(LogFixture.block(seq * 1000L + m, m, 100));
    return new Put(blocks, producer, seq);
  }

  private static PutResult one(PartitionLog log, Put p) throws IOException {
    return log.appendPuts(List.of(p), T0)[0];
  }

  @Test
  void repeatIsNotWrittenAndGetsTheFirstOffsets() throws Exception {
    PartitionLog log = open(LogConfig.defaults());
    log.append(List.of(LogFixture.block(0, 3, 10)), T0); // a plain put first: offsets 0-2
    assertEquals(new PutResult(3, false, null), one(log, put(9, 0, 2, 3)));
    assertEquals(8, log.endOffset());
    assertEquals(new PutResult(3, true, null), one(log, put(9, 0, 2, 3)));
    assertEquals(8, log.endOffset(), "nothing written for the repeat");
    assertEquals(new PutResult(8, false, null), one(log, put(9, 1, 1)));
    PutResult gap = one(log, put(9, 3, 1));
    assertEquals(-1, gap.firstOffset());
    assertNotNull(gap.outOfOrder());
    assertEquals(9, log.endOffset());
    // version 1 for the plain put, version 2 for the idempotent ones: all readable
    assertEquals(List.of(0L, 3L, 5L, 8L), log.read(0, 100, 1 << 20).stream().map(StoredBlock::startOffset).toList());
  }

  @Test
  void oneGroupCommitAnswersEachPutOnItsOwn() throws IOException {
    PartitionLog log = open(LogConfig.defaults());
    one(log, put(9, 0, 1));
    PutResult[] r = log.appendPuts(List.of(put(9, 1, 2), put(9, 1, 2), put(9, 0, 1), put(9, 5, 1),
        new Put(List.of(LogFixture.block(0, 1, 10)), PartitionLog.NO_PRODUCER, -1), put(9, 2, 1)), T0);
    assertEquals(new PutResult(1, false, null), r[0]);
    assertEquals(new PutResult(1, true, null), r[1], "a repeat within the same append");
    assertEquals(new PutResult(0, true, null), r[2]);
    assertNotNull(r[3].outOfOrder());
    assertEquals(new PutResult(3, false, null), r[4]);
    assertEquals(new PutResult(4, false, null), r[5]);
    assertEquals(5, log.endOffset());
  }

  @Test
  void stateIsRecoveredFromTheLogAfterACrashAcrossSegments() throws IOException {
    PartitionLog log = open(small);
    int puts = 40;
    for (int seq = 0; seq < puts; seq++) {
      assertEquals(new PutResult(seq * 2L, false, null), one(log, put(5, seq, 2)));
    }
    one(log, put(6, 0, 1));
    assertTrue(log.segmentCount() > 3, "several segments: " + log.segmentCount());
    long end = log.endOffset();
    // "crash": open the directory again without closing the first log
    PartitionLog again = open(small);
    assertEquals(end, again.endOffset());
    for (int seq = puts - ProducerState.RETAINED_PUTS; seq < puts; seq++) {
      assertEquals(new PutResult(seq * 2L, true, null), one(again, put(5, seq, 2)), "seq " + seq);
    }
    assertEquals(new PutResult(end - 1, true, null), one(again, put(6, 0, 1)));
    assertNotNull(one(again, put(5, puts - ProducerState.RETAINED_PUTS - 1, 2)).outOfOrder());
    assertNotNull(one(again, put(5, puts + 1, 2)).outOfOrder());
    assertEquals(end, again.endOffset(), "nothing written");
    assertEquals(new PutResult(end, false, null), one(again, put(5, puts, 2)));
    assertEquals(2, again.producersTracked());
  }

  @Test
  void recoveryReadsBackOnlyTheExpiryWindow() throws IOException {
    LogConfig config = small.toBuilder().producerStateExpiryMs(60_000).build();
    PartitionLog log = open(config);
    log.appendPuts(List.of(put(5, 0, 2)), T0);
    log.close();
    clock.advanceMs(120_000);
    PartitionLog again = open(config);
    assertEquals(0, again.producersTracked(), "expired");
    assertEquals(new PutResult(2, false, null), again.appendPuts(List.of(put(5, 0, 2)), clock.millis())[0]);
  }

  @Test
  void aPutCutShortByACrashDoesNotCount() throws IOException {
    PartitionLog log = open(LogConfig.defaults());
    one(log, put(5, 0, 1));
    long before = log.endOffset();
    one(log, put(5, 1, 2, 2)); // two records; the crash tears off the second
    java.nio.file.Path file = java.nio.file.Path.of(log.segments().get(log.segmentCount() - 1).path().toUri());
    long size = java.nio.file.Files.size(file);
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      f.setLength(size - 10);
    }
    PartitionLog again = open(LogConfig.defaults());
    assertEquals(before + 2, again.endOffset(), "the whole first record of the torn put is kept");
    PutResult retry = one(again, put(5, 1, 2, 2));
    assertFalse(retry.duplicate(), "not acknowledged before: stored again");
    assertNull(retry.outOfOrder());
  }
}
