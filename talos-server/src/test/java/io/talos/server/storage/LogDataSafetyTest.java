package io.talos.server.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.server.ManualClock;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the local partition log promises about offsets when files cannot be deleted or created and
 * when the machine loses power: an acknowledged offset is never handed out again (at {@code
 * sync}), and the start offset never goes backwards.
 */
class LogDataSafetyTest {
  private static final long T0 = 1_700_000_000_000L;

  @TempDir java.nio.file.Path tmp;

  private RawLocalFileSystem raw;
  private FaultInjectingFileSystem faulty;
  private Path dir;
  private ManualClock clock;
  private LogFixture fx;
  private final List<PartitionLog> opened = new ArrayList<>();
  /** One record (100-byte payload) per segment. */
  private final LogConfig oneRecordSegments = LogConfig.builder().segmentBytes(200).indexIntervalBytes(256).build();

  @BeforeEach
  void setUp() throws IOException {
    raw = (RawLocalFileSystem) PartitionLogs.fileSystemFor(URI.create("file:///"), new Configuration());
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

  private PartitionLog open(FileSystem fs, LogConfig config) throws IOException {
    PartitionLog log = PartitionLog.open(fs, dir, config, clock);
    opened.add(log);
    return log;
  }

  @Test
  void shouldKeepTheStartOffsetWhenRetentionCannotDeleteASegment() throws Exception {
    PartitionLog log = open(faulty, oneRecordSegments);
    for (int i = 0; i < 4; i++) fx.append(log, clock.millis(), 1, 100);
    clock.advanceMs(10_000);
    faulty.refuseDelete = p -> p.equals(LogSegment.logPath(dir, 1));

    IOException e = assertThrows(IOException.class, () -> log.deleteExpiredSegments(1000));
    assertTrue(e.getMessage().contains(LogSegment.logPath(dir, 1).getName()), e.getMessage());
    assertEquals(1, log.startOffset(), "deleted oldest first, stopped at the segment that could not go");
    fx.assertEveryBlockReadable(log, 1);
    log.close();

    faulty.refuseDelete = p -> false;
    PartitionLog reopened = open(faulty, oneRecordSegments);
    assertEquals(1, reopened.startOffset(), "the start offset does not go backwards over a restart");
    fx.assertSequentialReadMatches(reopened, 1, Integer.MAX_VALUE, Integer.MAX_VALUE);
    assertEquals(3, reopened.deleteExpiredSegments(1000), "the next pass deletes the rest");
    assertEquals(4, reopened.startOffset());
    assertEquals(4, reopened.endOffset());
  }

  @Test
  void shouldOpenDespiteALeftoverFileThatCannotBeDeleted() throws Exception {
    PartitionLog log = open(raw, oneRecordSegments);
    for (int i = 0; i < 3; i++) fx.append(log, T0, 1, 100);
    log.close();
    Path leftover = new Path(dir, LogSegment.fileName(0, ".index") + ".tmp");
    raw.create(leftover).close();
    faulty.refuseDelete = p -> p.getName().endsWith(".tmp");

    PartitionLog reopened = open(faulty, oneRecordSegments);
    assertEquals(3, reopened.endOffset());
    fx.assertSequentialReadMatches(reopened, 0, Integer.MAX_VALUE, Integer.MAX_VALUE);
    assertTrue(raw.exists(leftover), "refused: kept, ignored, tried again on the next open");
  }

  @Test
  void shouldNotRestartAtZeroWhenReplacingTheOnlyEmptySegmentFails() throws Exception {
    PartitionLog log = open(raw, oneRecordSegments);
    for (int i = 0; i < 5; i++) fx.append(log, clock.millis(), 1, 100);
    clock.advanceMs(10_000);
    assertEquals(5, log.deleteExpiredSegments(1000));
    assertEquals(5, log.startOffset());
    log.close(); // the directory now holds one empty segment, at offset 5

    faulty.failNextCreates.set(1);
    assertThrows(IOException.class, () -> open(faulty, oneRecordSegments));

    PartitionLog reopened = open(raw, oneRecordSegments);
    assertEquals(5, reopened.endOffset(), "the end offset never goes backwards");
    assertEquals(5, reopened.append(List.of(LogFixture.block(5, 1, 10)), T0));
  }

  @Test
  void shouldNotHandOutAnAcknowledgedOffsetAgainAfterAPowerCutAtSync() throws Exception {
    SyncTrackingFileSystem fs = new SyncTrackingFileSystem(raw);
    LogConfig sync = oneRecordSegments.toBuilder().segmentBytes(700).durability(Durability.SYNC).build();
    PartitionLog log = PartitionLog.open(fs, dir, sync, clock); // never closed: the power goes
    for (int i = 0; i < 20; i++) fx.append(log, T0, 2, 100);
    long acknowledged = log.endOffset();
    assertTrue(log.segmentCount() > 3, "rolled: " + log.segmentCount());
    log.awaitSeals(); // the seal thread stops with the power too; here it finishes first

    fs.powerCut();
    PartitionLog after = open(raw, sync);
    assertEquals(acknowledged, after.endOffset());
    fx.assertSequentialReadMatches(after, 0, Integer.MAX_VALUE, Integer.MAX_VALUE);
    assertEquals(acknowledged, after.append(List.of(LogFixture.block(acknowledged, 1, 10)), T0));
  }

  /** What docs/storage-format.md says flush does not survive: a power cut (or OS crash) on the local disk. */
  @Test
  void shouldLoseAcknowledgedOffsetsInAPowerCutAtFlush() throws Exception {
    SyncTrackingFileSystem fs = new SyncTrackingFileSystem(raw);
    LogConfig flush = oneRecordSegments.toBuilder().segmentBytes(700).durability(Durability.FLUSH).build();
    PartitionLog log = PartitionLog.open(fs, dir, flush, clock); // never closed: the power goes
    for (int i = 0; i < 20; i++) fx.append(log, T0, 2, 100);
    long acknowledged = log.endOffset();
    // The seal thread stops with the power too; here it finishes first, or its index writes would
    // land after the cut, or in the directory while the test's cleanup deletes it.
    log.awaitSeals();

    fs.powerCut();
    PartitionLog after = open(raw, flush);
    assertTrue(after.endOffset() < acknowledged, "flush leaves acknowledged records in the page cache only: "
        + after.endOffset() + " < " + acknowledged);
    assertTrue(after.append(List.of(LogFixture.block(0, 1, 10)), T0) < acknowledged,
        "without a recorded next offset, a lost offset is handed out again");
  }
}
