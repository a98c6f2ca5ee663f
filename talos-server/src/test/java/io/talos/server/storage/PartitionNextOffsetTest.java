package io.talos.server.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.server.ManualClock;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A partition's next offset is recorded outside its directory, and the logs never hand out an
 * offset below it: a partition whose files are gone fails with {@link
 * PartitionDataMissingException} until an operator resets it, and then continues at the recorded
 * offset.
 */
class PartitionNextOffsetTest {
  private static final long T0 = 1_700_000_000_000L;
  private static final String TOPIC = "CL1#orders#0123";

  @TempDir java.nio.file.Path tmp;

  private FileSystem raw;
  private Path root;
  private ManualClock clock;
  private final LogFixture fx = new LogFixture();
  private final InMemoryNextOffsets store = new InMemoryNextOffsets();
  private final LogConfig oneRecordSegments = LogConfig.builder().segmentBytes(200).indexIntervalBytes(256).build();

  /** The metadata store's part, in memory. */
  static class InMemoryNextOffsets implements NextOffsetStore {
    final Map<String, Long> next = new ConcurrentHashMap<>();

    @Override
    public long nextOffset(String topicResourceName, int partitionId) {
      return next.getOrDefault(topicResourceName + "/" + partitionId, 0L);
    }

    @Override
    public void raiseNextOffset(String topicResourceName, int partitionId, long nextOffset) {
      next.merge(topicResourceName + "/" + partitionId, nextOffset, Math::max);
    }
  }

  @BeforeEach
  void setUp() throws IOException {
    raw = PartitionLogs.fileSystemFor(URI.create("file:///"), new Configuration());
    root = new Path(new Path(tmp.toUri()), "log");
    clock = new ManualClock(T0);
  }

  @AfterEach
  void tearDown() throws IOException {
    raw.close();
  }

  private PartitionLogs logs() {
    return new PartitionLogs(raw, root, oneRecordSegments, clock, 0, store);
  }

  @Test
  void shouldRecordTheNextOffsetOnRollAndCleanClose() throws Exception {
    try (PartitionLogs logs = logs()) {
      PartitionLog log = logs.log(TOPIC, 0);
      assertEquals(0, store.nextOffset(TOPIC, 0));
      fx.append(log, T0, 1, 100);
      fx.append(log, T0, 1, 100); // rolls: the directory now names offset 1
      assertEquals(1, logs.nextOffsets().nextOffset(TOPIC, 0), "the logs' view has the roll's raise at once");
      logs.storeNextOffsetRaises();
      assertEquals(1, store.nextOffset(TOPIC, 0));
      fx.append(log, T0, 2, 10);
    }
    assertEquals(4, store.nextOffset(TOPIC, 0), "a clean close records the end offset");
  }

  /** A store whose raises above offset 0 wait until released (a metadata store waiting for its fsync). */
  static final class SlowNextOffsets implements NextOffsetStore {
    final InMemoryNextOffsets stored = new InMemoryNextOffsets();
    final CountDownLatch release = new CountDownLatch(1);

    @Override
    public long nextOffset(String topicResourceName, int partitionId) {
      return stored.nextOffset(topicResourceName, partitionId);
    }

    @Override
    public void raiseNextOffset(String topicResourceName, int partitionId, long nextOffset) throws IOException {
      try {
        if (nextOffset > 0 && !release.await(30, TimeUnit.SECONDS)) throw new IOException("never released");
      } catch (InterruptedException e) {
        throw new InterruptedIOException();
      }
      stored.raiseNextOffset(topicResourceName, partitionId, nextOffset);
    }
  }

  @Test
  void shouldRollWithoutWaitingForTheMetadataStore() throws Exception {
    SlowNextOffsets slow = new SlowNextOffsets();
    ExecutorService putThread = Executors.newSingleThreadExecutor();
    try (PartitionLogs logs = new PartitionLogs(raw, root, oneRecordSegments, clock, 0, slow)) {
      PartitionLog log = logs.log(TOPIC, 3);
      fx.append(log, T0, 1, 100);
      Future<Long> rolling = putThread.submit(() -> fx.append(log, T0, 1, 100)); // rolls at offset 1
      assertEquals(1, rolling.get(10, TimeUnit.SECONDS), "the roll's put waited for the metadata store");
      assertEquals(0, slow.nextOffset(TOPIC, 3), "not stored yet: the store is still waiting");
      assertEquals(1, logs.nextOffsets().nextOffset(TOPIC, 3), "but the logs see it");
      slow.release.countDown();
      fx.append(log, T0, 1, 100);
    } finally {
      putThread.shutdownNow();
    }
    assertEquals(3, slow.nextOffset(TOPIC, 3), "closing stored every raise");
  }

  @Test
  void shouldRefuseAPartitionWhoseDirectoryIsGoneUntilItIsReset() throws Exception {
    try (PartitionLogs logs = logs()) {
      for (int i = 0; i < 5; i++) fx.append(logs.log(TOPIC, 0), T0, 1, 100);
    }
    Path dir = logs().partitionDir(TOPIC, 0);
    assertTrue(raw.delete(dir, true));

    try (PartitionLogs logs = logs()) {
      PartitionDataMissingException e = assertThrows(PartitionDataMissingException.class, () -> logs.log(TOPIC, 0));
      assertTrue(e.getMessage().contains("missing") && e.getMessage().contains("offsets up to 5")
          && e.getMessage().contains("partition reset"), e.getMessage());
      assertFalse(raw.exists(dir), "nothing recreated at offset 0");
      assertThrows(PartitionDataMissingException.class, () -> logs.log(TOPIC, 0), "stays refused");

      PartitionLog reset = logs.resetPartition(TOPIC, 0);
      assertEquals(5, reset.startOffset());
      assertEquals(5, reset.endOffset());
      assertEquals(5, reset.append(List.of(LogFixture.block(5, 1, 10)), T0));
      assertResetDroppedTheLostOffsets(reset);
    }
    try (PartitionLogs logs = logs()) {
      assertEquals(6, logs.log(TOPIC, 0).endOffset(), "after the reset the partition opens normally");
    }
  }

  private static void assertResetDroppedTheLostOffsets(PartitionLog log) {
    assertThrows(OffsetOutOfRangeException.class, () -> log.read(4, 1, 0), "offsets below the reset are gone");
  }

  @Test
  void shouldRefuseAPartitionWhoseSegmentsWereEmptied() throws Exception {
    try (PartitionLogs logs = logs()) {
      for (int i = 0; i < 5; i++) fx.append(logs.log(TOPIC, 1), T0, 1, 100);
    }
    Path dir = logs().partitionDir(TOPIC, 1);
    for (FileStatus st : raw.listStatus(dir)) assertTrue(raw.delete(st.getPath(), false));

    try (PartitionLogs logs = logs()) {
      PartitionDataMissingException e = assertThrows(PartitionDataMissingException.class, () -> logs.log(TOPIC, 1));
      assertTrue(e.getMessage().contains("holds no segment"), e.getMessage());
      assertEquals(5, logs.resetPartition(TOPIC, 1).endOffset());
    }
  }

  @Test
  void shouldRefuseALogThatEndsBelowTheRecordedNextOffset() throws Exception {
    try (PartitionLogs logs = logs()) {
      for (int i = 0; i < 5; i++) fx.append(logs.log(TOPIC, 2), T0, 1, 100);
    }
    // the newest segments are gone (say, a restored backup that is too old)
    Path dir = logs().partitionDir(TOPIC, 2);
    for (FileStatus st : raw.listStatus(dir)) {
      if (!st.getPath().getName().startsWith(String.format("%020d", 0))) assertTrue(raw.delete(st.getPath(), false));
    }
    try (PartitionLogs logs = logs()) {
      PartitionDataMissingException e = assertThrows(PartitionDataMissingException.class, () -> logs.log(TOPIC, 2));
      assertTrue(e.getMessage().contains("ends at offset 1"), e.getMessage());
      PartitionLog reset = logs.resetPartition(TOPIC, 2);
      assertEquals(0, reset.startOffset());
      assertEquals(5, reset.endOffset());
      assertEquals(1, reset.read(0, 10, 1 << 20).size(), "offset 0 survived");
      assertThrows(CorruptRecordException.class, () -> reset.read(1, 1, 0), "offsets [1, 5) are reported lost");
      assertEquals(5, reset.append(List.of(LogFixture.block(5, 1, 10)), T0));
    }
  }
}
