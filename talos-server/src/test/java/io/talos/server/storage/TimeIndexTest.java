package io.talos.server.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.server.ManualClock;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Offset for a timestamp: answered from the segments' time indexes, built while appending, read
 * back from {@code .timeindex} files, or rebuilt by a scan for segments without one (written
 * before time indexes existed) or with a damaged one; the read-only view answers the same.
 * Every answer is checked against a brute-force model of the appended batches.
 */
class TimeIndexTest {
  private static final long T0 = 1_700_000_000_000L;

  @TempDir java.nio.file.Path tmp;

  private FileSystem fs;
  private Path dir;
  private final List<PartitionLog> opened = new ArrayList<>();
  /** Segments of ~64 KiB: several time-index entries (one per 16 KiB) in each. */
  private final LogConfig config = LogConfig.builder().segmentBytes(64 * 1024).indexIntervalBytes(1024).build();
  /** Per appended batch: first offset and append time (several batches share a time). */
  private final List<long[]> model = new ArrayList<>();

  @BeforeEach
  void setUp() throws IOException {
    fs = PartitionLogs.fileSystemFor(URI.create("file:///"), new Configuration());
    dir = new Path(new Path(tmp.toUri()), "topic/0");
  }

  @AfterEach
  void tearDown() throws IOException {
    for (PartitionLog log : opened) log.close();
    fs.close();
  }

  private PartitionLog open() throws IOException {
    PartitionLog log = PartitionLog.open(fs, dir, config, new ManualClock(T0));
    opened.add(log);
    return log;
  }

  /** 300 batches of 3 messages, ~700 bytes each; time goes up by 10 ms every 2 batches, and steps back once. */
  private void fill(PartitionLog log) throws IOException {
    LogFixture fx = new LogFixture();
    for (int i = 0; i < 300; i++) {
      long ts = T0 + (i / 2) * 10L - (i == 150 ? 5_000 : 0); // one batch with a clock that stepped back
      model.add(new long[] {log.endOffset(), ts});
      fx.append(log, ts, 3, 700);
    }
  }

  /** The first batch at or after {@code ts}, as the model says, or {@code end}. */
  private long expected(long ts, long end) {
    for (long[] b : model) if (b[1] >= ts) return b[0];
    return end;
  }

  private void assertAllAnswers(ReadablePartition log) throws IOException {
    long end = log.endOffset();
    for (long ts = T0 - 6_000; ts <= T0 + 1_600; ts += 7) {
      assertEquals(expected(ts, end), log.offsetForTimestamp(ts), "timestamp " + (ts - T0) + " ms after T0");
    }
    assertEquals(0, log.offsetForTimestamp(0));
    assertEquals(end, log.offsetForTimestamp(Long.MAX_VALUE));
  }

  private List<java.nio.file.Path> timeIndexFiles() throws IOException {
    try (Stream<java.nio.file.Path> files = Files.list(java.nio.file.Path.of(dir.toUri()))) {
      return files.filter(p -> p.getFileName().toString().endsWith(TimeIndex.SUFFIX)).toList();
    }
  }

  @Test
  void answersFromIndexesBuiltWhileAppending() throws IOException {
    PartitionLog log = open();
    fill(log);
    assertTrue(log.segmentCount() >= 3, "spans several segments: " + log.segmentCount());
    assertAllAnswers(log);
    log.awaitSeals(); // written by the seal thread, at a time of its own
    assertEquals(log.segmentCount() - 1, timeIndexFiles().size(), "every sealed segment has its .timeindex");
  }

  @Test
  void segmentsWithoutOrWithDamagedTimeIndexesAreScanned() throws IOException {
    PartitionLog log = open();
    fill(log);
    log.close();
    List<java.nio.file.Path> files = timeIndexFiles();
    assertTrue(files.size() >= 2);
    Files.delete(files.get(0)); // a segment of an older version: no time index
    Files.write(files.get(1), new byte[] {1, 2, 3, 4, 5}); // damaged: ignored
    PartitionLog reopened = open();
    assertAllAnswers(reopened);
    // the writer rebuilt and persisted the missing and the damaged index
    for (java.nio.file.Path f : timeIndexFiles()) assertTrue(Files.size(f) > 45, f + " is whole");
    assertAllAnswers(reopened);
  }

  @Test
  void readOnlyViewAnswersTheSame() throws IOException {
    PartitionLog log = open();
    fill(log);
    try (PartitionReader view = PartitionReader.open(fs, dir, config, new ManualClock(T0), 0, NextOffsetStore.NONE, "t", 0)) {
      assertAllAnswers(view);
    }
  }

  @Test
  void emptyPartitionAnswersItsEnd() throws IOException {
    PartitionLog log = open();
    assertEquals(0, log.offsetForTimestamp(T0));
  }
}
