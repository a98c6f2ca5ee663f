package io.talos.client.producer.internals;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.client.producer.Partitioner;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The accumulator under threads, as the producer uses it: threads appending (the callers of
 * send) while other threads drain and complete batches (the I/O threads). Checks the promises
 * that the per-partition locks must keep: every record delivered once, a partition's records in
 * the order one thread appended them, one batch per partition in flight, at most
 * {@code maxInFlight} in flight, flush making every batch ready, no append after close.
 */
class RecordAccumulatorThreadsTest {
  private static final int PARTITIONS = 8;
  private static final int APPENDERS = 2;
  private static final int RECORDS = 20_000; // per appender
  private static final int MAX_IN_FLIGHT = 3;

  private static final Partitioner NO_PARTITIONER = (record, count) -> 0;

  @Test
  void appendersAndDrainersKeepOrderAndInFlightBounds() throws Exception {
    // linger that never ends: only full batches are ready until the flush at the end
    RecordAccumulator acc = new RecordAccumulator(50, 1 << 20, 1_000_000, NO_PARTITIONER,
        () -> PARTITIONS);
    List<List<Long>> delivered = new ArrayList<>();
    AtomicBoolean[] partitionInFlight = new AtomicBoolean[PARTITIONS];
    for (int p = 0; p < PARTITIONS; p++) {
      delivered.add(new ArrayList<>());
      partitionInFlight[p] = new AtomicBoolean();
    }
    AtomicInteger held = new AtomicInteger();
    AtomicInteger maxHeld = new AtomicInteger();
    AtomicInteger violations = new AtomicInteger();
    AtomicBoolean appendersDone = new AtomicBoolean();
    AtomicLong total = new AtomicLong();
    ExecutorService pool = Executors.newFixedThreadPool(APPENDERS + 2);
    try {
      List<CompletableFuture<Void>> appenders = new ArrayList<>();
      for (int t = 0; t < APPENDERS; t++) {
        long thread = t;
        appenders.add(CompletableFuture.runAsync(() -> {
          for (int i = 0; i < RECORDS; i++) {
            // the create timestamp carries who appended it and in which order
            acc.append(i % PARTITIONS, new byte[1], null, (thread << 32) | i, 21, 21,
                new CompletableFuture<>(), null, 0);
          }
        }, pool));
      }
      List<CompletableFuture<Void>> drainers = new ArrayList<>();
      for (int d = 0; d < 2; d++) {
        drainers.add(CompletableFuture.runAsync(() -> {
          while (!(appendersDone.get() && acc.isEmpty())) {
            List<ProducerBatch> got = acc.drain(0, 1, MAX_IN_FLIGHT);
            if (got.isEmpty()) {
              Thread.onSpinWait();
              continue;
            }
            ProducerBatch b = got.get(0);
            maxHeld.accumulateAndGet(held.incrementAndGet(), Math::max);
            if (!partitionInFlight[b.partition()].compareAndSet(false, true)) violations.incrementAndGet();
            List<Long> sink = delivered.get(b.partition());
            synchronized (sink) {
              for (ProducerBatch.Entry e : b.entries()) sink.add(e.createTimestampMs());
            }
            total.addAndGet(b.recordCount());
            partitionInFlight[b.partition()].set(false);
            held.decrementAndGet();
            acc.completed(b);
          }
        }, pool));
      }
      CompletableFuture.allOf(appenders.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
      // the partial batches never linger out: without the flush making them ready, the drainers
      // would not finish
      acc.beginFlush();
      appendersDone.set(true);
      CompletableFuture.allOf(drainers.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
      acc.endFlush();

      assertEquals(0, violations.get(), "two batches of one partition in flight at once");
      assertTrue(maxHeld.get() <= MAX_IN_FLIGHT, "in flight at once: " + maxHeld.get());
      assertEquals((long) APPENDERS * RECORDS, total.get());
      assertEquals(0, acc.inFlightCount());
      assertEquals(0, acc.batchCount());
      for (int p = 0; p < PARTITIONS; p++) {
        long[] last = new long[APPENDERS];
        Arrays.fill(last, -1);
        for (long id : delivered.get(p)) {
          int thread = (int) (id >>> 32);
          long seq = id & 0xffffffffL;
          assertEquals(p, seq % PARTITIONS, "record went to its partition");
          assertTrue(seq > last[thread], "partition " + p + ": " + seq + " after " + last[thread]);
          last[thread] = seq;
        }
        for (int t = 0; t < APPENDERS; t++) {
          assertEquals(RECORDS - PARTITIONS + p, last[t], "last record of thread " + t + " in " + p);
        }
      }

      acc.close();
      assertThrows(IllegalStateException.class, () -> acc.append(0, new byte[1], null, 0, 21, 21,
          new CompletableFuture<>(), null, 0));
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void appendsFromTheHighestPartitionGrowTheQueues() {
    AtomicInteger count = new AtomicInteger(2);
    RecordAccumulator acc = new RecordAccumulator(10, 1000, 0, NO_PARTITIONER, count::get);
    append(acc, 1);
    count.set(6); // the topic grew
    append(acc, 5);
    List<ProducerBatch> drained = acc.drain(0, 10);
    assertEquals(2, drained.size());
    for (ProducerBatch b : drained) acc.completed(b);
    assertTrue(acc.isEmpty());
  }

  private static void append(RecordAccumulator acc, int partition) {
    acc.append(partition, new byte[1], null, 0, 21, 21, new CompletableFuture<>(), null, 0);
  }
}
