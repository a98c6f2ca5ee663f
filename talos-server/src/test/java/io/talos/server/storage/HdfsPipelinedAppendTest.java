package io.talos.server.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.server.ManualClock;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Pipelined appends ({@link PartitionLog#appendPutsAsync}) on real hdfs (one MiniDFSCluster
 * DataNode): many partitions written at once, each by one writer that keeps writing while its
 * flush is in flight, are acknowledged in order with contiguous offsets and read back; a flush that
 * fails fails every append not yet durable and acknowledges none of them; a write that fails
 * while a flush is in flight fails only what that flush did not cover.
 */
class HdfsPipelinedAppendTest {
  private static final long T0 = 1_700_000_000_000L;
  private static MiniHdfs hdfs;
  private static FileSystem client;

  private final List<PartitionLog> opened = new ArrayList<>();
  private final ManualClock clock = new ManualClock(T0);

  @BeforeAll
  static void startCluster() throws IOException {
    hdfs = MiniHdfs.start("pipelined-append", 1, 1);
    client = hdfs.newClient();
  }

  @AfterAll
  static void stopCluster() throws IOException {
    if (client != null) client.close();
    if (hdfs != null) hdfs.close();
  }

  @AfterEach
  void closeLogs() {
    for (PartitionLog log : opened) log.close();
  }

  private PartitionLog open(FileSystem fs, Path dir) throws IOException {
    PartitionLog log = PartitionLog.open(fs, dir, LogConfig.builder().segmentBytes(16 * 1024).build(), clock);
    opened.add(log);
    return log;
  }

  private static List<PartitionLog.Put> put(long startOffset) {
    return List.of(new PartitionLog.Put(List.of(LogFixture.block(startOffset, 10, 300)), PartitionLog.NO_PRODUCER, -1));
  }

  private static PartitionLog.Put idempotent(long startOffset, long producerId, int sequence) {
    return new PartitionLog.Put(List.of(LogFixture.block(startOffset, 10, 300)), producerId, sequence);
  }

  @Test
  void shouldAcknowledgeConcurrentPipelinedAppendsOfSixteenPartitionsInOrderWithContiguousOffsets()
      throws Exception {
    int partitions = 16;
    int appends = 80;
    List<PartitionLog> logs = new ArrayList<>();
    for (int p = 0; p < partitions; p++) logs.add(open(client, new Path("/pipelined/concurrent/" + p)));
    List<List<Long>> acked = new ArrayList<>();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<Thread> writers = new ArrayList<>();
    for (int p = 0; p < partitions; p++) {
      PartitionLog log = logs.get(p);
      List<Long> order = Collections.synchronizedList(new ArrayList<>());
      acked.add(order);
      Thread t = new Thread(() -> {
        Semaphore window = new Semaphore(16);
        try {
          for (int i = 0; i < appends; i++) {
            window.acquire();
            // the block's payload is derived from the offset it must get
            CompletableFuture<PartitionLog.PutResult[]> f = log.appendPutsAsync(put(i * 10L), T0);
            f.whenComplete((r, e) -> {
              if (e != null) failure.compareAndSet(null, e);
              else order.add(r[0].firstOffset());
              window.release();
            });
          }
          window.acquire(16);
        } catch (Throwable e) {
          failure.compareAndSet(null, e);
        }
      });
      writers.add(t);
      t.start();
    }
    for (Thread t : writers) t.join(60_000);
    assertNull(failure.get());
    for (int p = 0; p < partitions; p++) {
      List<Long> expected = new ArrayList<>();
      for (int i = 0; i < appends; i++) expected.add(i * 10L);
      assertEquals(expected, acked.get(p), "partition " + p + ": acknowledged in append order, contiguous");
      assertEquals(appends * 10L, logs.get(p).endOffset());
      assertTrue(logs.get(p).segmentCount() > 1, "rolled while pipelining");
    }
    // read back through another client, from the files
    for (PartitionLog log : logs) log.close();
    try (FileSystem reader = hdfs.newClient()) {
      for (int p = 0; p < partitions; p++) {
        PartitionLog log = open(reader, new Path("/pipelined/concurrent/" + p));
        assertEquals(appends * 10L, log.endOffset());
        long offset = 0;
        while (offset < log.endOffset()) {
          for (StoredBlock b : log.read(offset, 1000, 1 << 20)) {
            assertEquals(offset, b.startOffset());
            assertArrayEquals(LogFixture.payloadFor(offset, 300), b.payload());
            offset = b.nextOffset();
          }
        }
        log.close();
      }
    }
  }

  @Test
  void shouldFailEveryAppendNotYetDurableWhenAFlushFailsAndAcknowledgeNone() throws Exception {
    FaultInjectingFileSystem fs = new FaultInjectingFileSystem(client);
    Path dir = new Path("/pipelined/flush-fails/0");
    PartitionLog log = open(fs, dir);
    assertEquals(0, log.append(put(0).get(0).blocks(), T0)); // durable before the failure

    fs.flushEntered = new CountDownLatch(1);
    fs.flushGate = new CountDownLatch(1);
    CompletableFuture<PartitionLog.PutResult[]> a = log.appendPutsAsync(put(10), T0);
    assertTrue(fs.flushEntered.await(10, TimeUnit.SECONDS));
    // written behind the flush in flight
    CompletableFuture<PartitionLog.PutResult[]> b = log.appendPutsAsync(put(20), T0);
    CompletableFuture<PartitionLog.PutResult[]> c = log.appendPutsAsync(put(30), T0);
    assertFalse(a.isDone() || b.isDone() || c.isDone());
    assertEquals(10, log.endOffset(), "nothing pending is readable");
    fs.failNextFlushes.set(1);
    openGate(fs);

    for (CompletableFuture<PartitionLog.PutResult[]> f : List.of(a, b, c)) {
      ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
      assertInstanceOf(IOException.class, e.getCause());
    }
    assertEquals(10, log.endOffset());
    // the log goes on at the end of what was acknowledged, in a new segment
    assertEquals(10, log.appendPutsAsync(put(10), T0).get(10, TimeUnit.SECONDS)[0].firstOffset());
    assertEquals(20, log.endOffset());
    log.close();
    try (FileSystem reader = hdfs.newClient()) {
      PartitionLog reopened = open(reader, dir);
      assertEquals(20, reopened.endOffset());
      List<StoredBlock> blocks = reopened.read(0, 1000, 1 << 20);
      assertEquals(2, blocks.size());
      assertArrayEquals(LogFixture.payloadFor(10, 300), blocks.get(1).payload());
    }
  }

  @Test
  void shouldAcknowledgeWhatTheFlushInFlightCoveredWhenALaterWriteFails() throws Exception {
    FaultInjectingFileSystem fs = new FaultInjectingFileSystem(client);
    Path dir = new Path("/pipelined/write-fails/0");
    PartitionLog log = open(fs, dir);
    fs.flushEntered = new CountDownLatch(1);
    fs.flushGate = new CountDownLatch(1);
    CompletableFuture<PartitionLog.PutResult[]> a = log.appendPutsAsync(put(0), T0);
    assertTrue(fs.flushEntered.await(10, TimeUnit.SECONDS));
    fs.nextWriteFault = FaultInjectingFileSystem.WriteFault.NOTHING_THEN_FSERROR;
    assertThrows(IOException.class, () -> log.appendPutsAsync(put(10), T0));
    openGate(fs);
    assertEquals(0, a.get(10, TimeUnit.SECONDS)[0].firstOffset(), "durable before the write failed");
    assertEquals(10, log.appendPutsAsync(put(10), T0).get(10, TimeUnit.SECONDS)[0].firstOffset());
    assertEquals(20, log.endOffset());
    log.close();
    try (FileSystem reader = hdfs.newClient()) {
      PartitionLog reopened = open(reader, dir);
      assertEquals(20, reopened.endOffset());
      long offset = 0;
      for (StoredBlock blk : reopened.read(0, 1000, 1 << 20)) {
        assertArrayEquals(LogFixture.payloadFor(offset, 300), blk.payload());
        offset = blk.nextOffset();
      }
      assertEquals(20, offset);
    }
  }

  @Test
  void shouldAcceptTheNextSequenceAndAnswerARepeatOnlyOnceThePendingPutIsDurable() throws Exception {
    FaultInjectingFileSystem fs = new FaultInjectingFileSystem(client);
    PartitionLog log = open(fs, new Path("/pipelined/idempotent/0"));
    long producer = 42;
    fs.flushEntered = new CountDownLatch(1);
    fs.flushGate = new CountDownLatch(1);
    CompletableFuture<PartitionLog.PutResult[]> s0 = log.appendPutsAsync(List.of(idempotent(0, producer, 0)), T0);
    assertTrue(fs.flushEntered.await(10, TimeUnit.SECONDS));
    CompletableFuture<PartitionLog.PutResult[]> s1 = log.appendPutsAsync(List.of(idempotent(10, producer, 1)), T0);
    CompletableFuture<PartitionLog.PutResult[]> repeat =
        log.appendPutsAsync(List.of(idempotent(0, producer, 0)), T0);
    CompletableFuture<PartitionLog.PutResult[]> gap = log.appendPutsAsync(List.of(idempotent(0, producer, 5)), T0);
    assertFalse(repeat.isDone(), "a repeat of a pending put waits for it");
    openGate(fs);
    assertEquals(0, s0.get(10, TimeUnit.SECONDS)[0].firstOffset());
    assertEquals(10, s1.get(10, TimeUnit.SECONDS)[0].firstOffset());
    PartitionLog.PutResult r = repeat.get(10, TimeUnit.SECONDS)[0];
    assertTrue(r.duplicate());
    assertEquals(0, r.firstOffset());
    assertTrue(gap.get(10, TimeUnit.SECONDS)[0].outOfOrder() != null);
    assertEquals(20, log.endOffset());
    assertEquals(1, log.producersTracked());
  }

  @Test
  void shouldFailARepeatOfAPendingPutWhoseFlushFails() throws Exception {
    FaultInjectingFileSystem fs = new FaultInjectingFileSystem(client);
    PartitionLog log = open(fs, new Path("/pipelined/idempotent-fails/0"));
    long producer = 7;
    fs.flushEntered = new CountDownLatch(1);
    fs.flushGate = new CountDownLatch(1);
    CompletableFuture<PartitionLog.PutResult[]> s0 = log.appendPutsAsync(List.of(idempotent(0, producer, 0)), T0);
    assertTrue(fs.flushEntered.await(10, TimeUnit.SECONDS));
    CompletableFuture<PartitionLog.PutResult[]> repeat =
        log.appendPutsAsync(List.of(idempotent(0, producer, 0)), T0);
    fs.failNextFlushes.set(1);
    openGate(fs);
    assertThrows(ExecutionException.class, () -> s0.get(10, TimeUnit.SECONDS));
    assertThrows(ExecutionException.class, () -> repeat.get(10, TimeUnit.SECONDS),
        "a repeat of a put that failed is not acknowledged");
    // the producer's retry is a new append at the same offset
    PartitionLog.PutResult retried = log.appendPutsAsync(List.of(idempotent(0, producer, 0)), T0)
        .get(10, TimeUnit.SECONDS)[0];
    assertFalse(retried.duplicate());
    assertEquals(0, retried.firstOffset());
  }

  private static void openGate(FaultInjectingFileSystem fs) {
    CountDownLatch gate = fs.flushGate;
    fs.flushGate = null;
    if (gate != null) gate.countDown();
  }
}
