package io.talos.server.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.server.ManualClock;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The read-only view on the local file system: a second {@link PartitionLogs} on the same root
 * (as a reading server would be) reads another instance's open log without opening it for
 * writing, sees its appends after a refresh, and keeps the next-offset rule.
 */
class PartitionReaderTest {
  private static final long T0 = 1_700_000_000_000L;
  private static final String ORDERS = "CL123#orders#a1b2";

  @TempDir java.nio.file.Path tmp;

  private FileSystem fs;
  private ManualClock clock;
  private final Map<String, Long> recorded = new ConcurrentHashMap<>();
  private final NextOffsetStore nextOffsets = new NextOffsetStore() {
    @Override
    public long nextOffset(String topic, int partition) {
      return recorded.getOrDefault(topic + "/" + partition, 0L);
    }

    @Override
    public void raiseNextOffset(String topic, int partition, long next) {
      recorded.merge(topic + "/" + partition, next, Math::max);
    }
  };
  private final LogConfig config = LogConfig.builder().segmentBytes(4096).readerRefreshMs(1_000).build();
  private PartitionLogs writer;
  private PartitionLogs reader;

  @BeforeEach
  void setUp() throws IOException {
    fs = PartitionLogs.fileSystemFor(URI.create("file:///"), new Configuration());
    clock = new ManualClock(T0);
    writer = newLogs();
    reader = newLogs();
  }

  @AfterEach
  void tearDown() throws IOException {
    writer.close();
    reader.close();
    fs.close();
  }

  private PartitionLogs newLogs() {
    return new PartitionLogs(fs, new Path(new Path(tmp.toUri()), "data"), config, clock, 0,
        PartitionLogs.Limits.UNBOUNDED, nextOffsets);
  }

  private static void append(PartitionLog log, int records) throws IOException {
    for (int i = 0; i < records; i++) log.append(List.of(LogFixture.block(log.endOffset(), 1, 951)), T0);
  }

  private List<String> files() throws IOException {
    try (Stream<java.nio.file.Path> s = Files.list(tmp.resolve("data/CL123.23orders.23a1b2/0"))) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  private static long readAll(ReadablePartition p, long from) throws Exception {
    long next = from;
    while (next < p.endOffset()) {
      List<StoredBlock> blocks = p.read(next, 100, Integer.MAX_VALUE);
      for (StoredBlock b : blocks) {
        assertEquals(next, b.startOffset());
        assertEquals(1, b.messageCount());
        next = b.nextOffset();
      }
    }
    return next;
  }

  @Test
  void shouldReadAnotherInstancesOpenLogReadOnlyAndSeeItsAppendsAfterARefresh() throws Exception {
    PartitionLog log = writer.log(ORDERS, 0);
    append(log, 10); // rolls: sealed segments + an unsealed active one
    log.awaitSeals(); // the writer's seal thread writes index files at a time of its own
    List<String> before = files();

    ReadablePartition view = reader.readable(ORDERS, 0);
    assertInstanceOf(PartitionReader.class, view);
    assertEquals(0, reader.openedLogs(), "no log opened for writing");
    assertEquals(10, view.endOffset());
    assertEquals(10, readAll(view, 0));
    assertEquals(before, files(), "the view wrote, renamed or deleted nothing");

    append(log, 3);
    assertEquals(List.of(), view.read(10, 10, Integer.MAX_VALUE), "within the refresh interval: not listed again");
    clock.advanceMs(1_000);
    assertEquals(3, view.read(10, 10, Integer.MAX_VALUE).size(), "beyond its end: refreshed");
    assertEquals(13, view.endOffset());
    assertEquals(13, readAll(view, 0));
    append(log, 1); // the writer still owns it
    assertEquals(1, reader.openReaderCount());
    assertEquals(((PartitionReader) view).segmentCount() + 1, reader.openFileCount(), "counted in the file limit");

    // a write on the reading instance opens the log and retires the view
    writer.close();
    PartitionLog own = reader.log(ORDERS, 0);
    assertTrue(view.isClosed());
    assertEquals(0, reader.openReaderCount());
    assertEquals(own, reader.readable(ORDERS, 0));
    assertEquals(14, readAll(own, 0));
  }

  @Test
  void shouldAnswerDataMissingWhenTheViewEndsBelowTheRecordedNextOffset() throws Exception {
    append(writer.log(ORDERS, 0), 2);
    recorded.put(ORDERS + "/0", 50L);
    PartitionDataMissingException e = assertThrows(PartitionDataMissingException.class,
        () -> reader.readable(ORDERS, 0));
    assertTrue(e.getMessage().contains("up to 50"), e.getMessage());
    assertEquals(0, reader.openReaderCount());
    assertFalse(reader.runEvictionOnce() > 0);
  }

  @Test
  void shouldCloseIdleViewsInTheSweep() throws Exception {
    reader.close();
    reader = new PartitionLogs(fs, new Path(new Path(tmp.toUri()), "data"), config, clock, 0,
        new PartitionLogs.Limits(100, Integer.MAX_VALUE, 1_000, 0, 0, 60_000), nextOffsets);
    append(writer.log(ORDERS, 0), 2);
    ReadablePartition view = reader.readable(ORDERS, 0);
    assertEquals(1, reader.openLogCount(), "a view counts as an open log");
    clock.advanceMs(1_000);
    assertEquals(1, reader.runEvictionOnce());
    assertTrue(view.isClosed());
    assertEquals(2, readAll(reader.readable(ORDERS, 0), 0), "reopened on use");
  }
}
