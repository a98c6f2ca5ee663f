package io.talos.client.producer.internals;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.client.producer.Partitioner;
import io.talos.client.producer.ProducerRecord;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** Steps the accumulator with explicit times: no threads, no clock. */
class RecordAccumulatorTest {
  private final List<Integer> closedBatches = new ArrayList<>();
  private final Partitioner partitioner = new Partitioner() {
    @Override
    public int partition(ProducerRecord record, int partitionCount) {
      return 0;
    }

    @Override
    public void onBatchClosed(int partition, int partitionCount) {
      closedBatches.add(partition);
    }
  };

  private RecordAccumulator accumulator(int maxRecords, int maxBytes, long lingerMs) {
    return new RecordAccumulator(maxRecords, maxBytes, lingerMs, partitioner, () -> 4);
  }

  /** Appends a record that takes {@code bytes} serialized (at least 21: 20 of them are overhead). */
  private static ProducerBatch append(RecordAccumulator acc, int partition, int bytes, long nowMs) {
    return acc.append(partition, new byte[bytes - 20], null, 0, bytes, bytes, new CompletableFuture<>(),
        null, nowMs);
  }

  @Test
  void aBatchWaitsForLingerUnlessFull() {
    RecordAccumulator acc = accumulator(3, 1000, 50);
    append(acc, 0, 21, 1000);
    assertTrue(acc.drain(1049, 10).isEmpty(), "lingering");
    assertEquals(1050, acc.nextReadyMs(1049));
    List<ProducerBatch> sent = acc.drain(1050, 10);
    assertEquals(1, sent.size());
    assertEquals(List.of(0), closedBatches, "draining closes the batch");

    append(acc, 1, 21, 2000);
    append(acc, 1, 21, 2000);
    ProducerBatch full = append(acc, 1, 21, 2000);
    assertEquals(List.of(0, 1), closedBatches, "full at 3 records");
    assertEquals(List.of(full), acc.drain(2000, 10), "full: no linger");
  }

  @Test
  void closesABatchByBytesAndGivesALargeRecordItsOwnBatch() {
    RecordAccumulator acc = accumulator(100, 100, 1_000_000);
    ProducerBatch a = append(acc, 0, 60, 0);
    ProducerBatch b = append(acc, 0, 60, 0); // 120 > 100: a new batch
    ProducerBatch c = append(acc, 0, 500, 0); // alone, and full at once
    assertEquals(1, a.recordCount());
    assertEquals(1, b.recordCount());
    assertEquals(1, c.recordCount());
    assertTrue(a != b && b != c);
    assertEquals(3, acc.batchCount());
  }

  @Test
  void onlyOneBatchPerPartitionIsInFlightAndRetriesKeepOrder() {
    RecordAccumulator acc = accumulator(1, 1000, 0);
    ProducerBatch first = append(acc, 0, 21, 0);
    ProducerBatch second = append(acc, 0, 21, 0);
    ProducerBatch other = append(acc, 1, 21, 0);
    List<ProducerBatch> sent = acc.drain(0, 10);
    assertEquals(2, sent.size(), "one per partition");
    assertTrue(sent.contains(first) && sent.contains(other));
    assertTrue(acc.drain(0, 10).isEmpty(), "partition 0 busy, partition 1 empty");

    acc.retryLater(first, 100);
    assertTrue(acc.drain(99, 10).isEmpty(), "backing off; the second batch must not overtake");
    assertEquals(100, acc.nextReadyMs(99));
    assertEquals(List.of(first), acc.drain(100, 10));
    acc.completed(first);
    assertEquals(List.of(second), acc.drain(100, 10));
    assertThrows(IllegalStateException.class, () -> acc.completed(first));
  }

  @Test
  void drainHonoursTheInFlightLimit() {
    RecordAccumulator acc = accumulator(1, 1000, 0);
    for (int p = 0; p < 4; p++) append(acc, p, 21, 0);
    assertEquals(2, acc.drain(0, 2).size());
    assertEquals(2, acc.inFlightCount());
    assertEquals(2, acc.drain(0, 5).size());
  }

  @Test
  void expiresWaitingBatchesButNotTheOneInFlight() {
    RecordAccumulator acc = accumulator(1, 1000, 0);
    ProducerBatch inFlight = append(acc, 0, 21, 0);
    ProducerBatch waiting = append(acc, 0, 21, 10);
    assertSame(inFlight, acc.drain(0, 10).get(0));
    assertTrue(acc.expire(1009, 1000).isEmpty());
    assertEquals(List.of(waiting), acc.expire(1010, 1000));
    assertEquals(1, acc.batchCount());
  }

  @Test
  void flushAndCloseMakeLingeringBatchesReady() {
    RecordAccumulator acc = accumulator(100, 1000, 1_000_000);
    ProducerBatch b = append(acc, 0, 21, 0);
    assertTrue(acc.drain(1, 10).isEmpty());
    List<ProducerBatch> pending = acc.beginFlush();
    assertEquals(List.of(b), pending);
    assertEquals(List.of(b), acc.drain(1, 10));
    acc.endFlush();
    acc.completed(b);
    assertTrue(acc.isEmpty());

    ProducerBatch c = append(acc, 0, 21, 5);
    acc.close();
    assertThrows(IllegalStateException.class, () -> append(acc, 0, 21, 5));
    assertEquals(List.of(c), acc.drain(6, 10));
    assertFalse(acc.isEmpty());
  }

  @Test
  void abortRemovesAllButInFlight() {
    RecordAccumulator acc = accumulator(1, 1000, 0);
    ProducerBatch a = append(acc, 0, 21, 0);
    ProducerBatch b = append(acc, 0, 21, 0);
    ProducerBatch c = append(acc, 1, 21, 0);
    acc.drain(0, 1); // one of the partitions
    List<ProducerBatch> aborted = acc.abortUnsent();
    assertEquals(2, aborted.size());
    assertEquals(1, acc.batchCount());
    assertTrue(aborted.contains(b));
    assertTrue(aborted.contains(a) != aborted.contains(c));
  }
}
