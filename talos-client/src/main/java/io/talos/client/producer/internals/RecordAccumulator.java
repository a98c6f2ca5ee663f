package io.talos.client.producer.internals;

import io.talos.client.producer.Partitioner;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The per-partition queues of batches between {@code send} and the {@link Sender}.
 *
 * <p>Contract:
 * <ul>
 *   <li>Records are appended to the last batch of their partition's queue; a batch closes (takes
 *       no more records) when it reaches {@code batch.max.records} records or
 *       {@code batch.max.bytes} serialized bytes, or when it is drained for sending. A record
 *       larger than {@code batch.max.bytes} gets a batch of its own.
 *   <li>Only the head of a queue is ever sent, and a partition has at most one batch in flight:
 *       the head stays in the queue while in flight and is removed only when it completes; a
 *       batch to retry stays the head. So a partition's records are stored in send order, also
 *       across retries.
 *   <li>A head is ready to send when it is closed, has a batch behind it, has lingered
 *       {@code linger.ms}, or a flush or close is in progress; and its retry backoff is over.
 * </ul>
 *
 * <p>Time comes in as arguments ({@code nowMs}), so the logic steps without a real clock.
 * Thread-safe: one lock guards all queues; {@link #awaitWork} lets the sender sleep until an
 * append, a completion, a flush or a close.
 */
public final class RecordAccumulator {
  private static final Logger LOG = LoggerFactory.getLogger(RecordAccumulator.class);

  private final int batchMaxRecords;
  private final int batchMaxBytes;
  private final long lingerMs;
  private final Partitioner partitioner;
  private final IntSupplier partitionCount;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition work = lock.newCondition();
  private final Map<Integer, ArrayDeque<ProducerBatch>> queues = new TreeMap<>();
  private final Set<ProducerBatch> incomplete = new LinkedHashSet<>();
  private int inFlight;
  private int flushesInProgress;
  private boolean closed;
  private boolean workPending;
  /** Where the next drain starts, so that low partitions do not always go first. */
  private int drainStart;

  /**
   * @param partitioner told when batches close ({@link Partitioner#onBatchClosed}); called under
   *     this accumulator's lock, so it must not call back into the producer
   * @param partitionCount the topic's current partition count, for that call
   */
  public RecordAccumulator(int batchMaxRecords, int batchMaxBytes, long lingerMs,
      Partitioner partitioner, IntSupplier partitionCount) {
    this.batchMaxRecords = batchMaxRecords;
    this.batchMaxBytes = batchMaxBytes;
    this.lingerMs = lingerMs;
    this.partitioner = partitioner;
    this.partitionCount = partitionCount;
  }

  /**
   * Appends a record to its partition's open batch, opening a new batch if needed.
   *
   * @return the batch the record went to
   * @throws IllegalStateException if the accumulator is closed
   */
  public ProducerBatch append(int partition, ProducerBatch.Entry entry, long nowMs) {
    lock.lock();
    try {
      if (closed) throw new IllegalStateException("the producer is closed; the record was not sent");
      ArrayDeque<ProducerBatch> queue = queues.computeIfAbsent(partition, p -> new ArrayDeque<>());
      ProducerBatch batch = queue.peekLast();
      if (batch != null && !batch.closed && !batch.entries.isEmpty()
          && batch.serializedBytes + (long) entry.serializedBytes() > batchMaxBytes) {
        close(batch);
      }
      boolean wake = false;
      if (batch == null || batch.closed) {
        batch = new ProducerBatch(partition, nowMs);
        queue.addLast(batch);
        incomplete.add(batch);
        wake = true; // the sender must learn when this batch's linger ends
      }
      batch.entries.add(entry);
      batch.serializedBytes += entry.serializedBytes();
      if (batch.entries.size() >= batchMaxRecords || batch.serializedBytes >= batchMaxBytes) {
        close(batch);
        wake = true; // ready now
      }
      // a record added to an open batch changes no deadline: no need to wake the sender
      if (wake) signal();
      return batch;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Takes up to {@code max} ready heads, each of a different partition without a batch in
   * flight, and marks them in flight (and closed).
   */
  public List<ProducerBatch> drain(long nowMs, int max) {
    return drain(nowMs, max, Integer.MAX_VALUE);
  }

  /**
   * As {@link #drain(long, int)}, taking no more than keeps at most {@code maxInFlight} batches
   * in flight (decided under the lock, so threads draining at once never exceed it).
   */
  public List<ProducerBatch> drain(long nowMs, int max, int maxInFlight) {
    lock.lock();
    try {
      max = Math.min(max, maxInFlight - inFlight);
      if (max <= 0) return List.of();
      List<ProducerBatch> out = new ArrayList<>();
      List<ArrayDeque<ProducerBatch>> all = new ArrayList<>(queues.values());
      int n = all.size();
      for (int i = 0; i < n && out.size() < max; i++) {
        ArrayDeque<ProducerBatch> queue = all.get((drainStart + i) % n);
        ProducerBatch head = queue.peekFirst();
        if (head == null || head.inFlight || head.retryAtMs > nowMs || !ready(head, queue, nowMs)) {
          continue;
        }
        close(head);
        head.inFlight = true;
        inFlight++;
        out.add(head);
      }
      if (n > 0) drainStart = (drainStart + 1) % n;
      return out;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Removes the batches not in flight that were created {@code deliveryTimeoutMs} or longer ago;
   * the caller fails them.
   */
  public List<ProducerBatch> expire(long nowMs, long deliveryTimeoutMs) {
    lock.lock();
    try {
      List<ProducerBatch> out = new ArrayList<>();
      for (ArrayDeque<ProducerBatch> queue : queues.values()) {
        for (Iterator<ProducerBatch> it = queue.iterator(); it.hasNext(); ) {
          ProducerBatch b = it.next();
          if (!b.inFlight && nowMs - b.createdMs >= deliveryTimeoutMs) {
            it.remove();
            close(b);
            incomplete.remove(b);
            out.add(b);
          }
        }
      }
      if (!out.isEmpty()) signal();
      return out;
    } finally {
      lock.unlock();
    }
  }

  /** The in-flight batch completed for good (stored or failed): removes it from its queue. */
  public void completed(ProducerBatch batch) {
    lock.lock();
    try {
      ArrayDeque<ProducerBatch> queue = queues.get(batch.partition);
      if (queue == null || queue.peekFirst() != batch || !batch.inFlight) {
        throw new IllegalStateException("batch of partition " + batch.partition + " is not in flight");
      }
      queue.pollFirst();
      batch.inFlight = false;
      inFlight--;
      incomplete.remove(batch);
      signal();
    } finally {
      lock.unlock();
    }
  }

  /** The in-flight batch failed retriably: it stays the head, sent again from {@code retryAtMs}. */
  public void retryLater(ProducerBatch batch, long retryAtMs) {
    lock.lock();
    try {
      if (!batch.inFlight) throw new IllegalStateException("batch is not in flight");
      batch.inFlight = false;
      batch.retryAtMs = retryAtMs;
      inFlight--;
      signal();
    } finally {
      lock.unlock();
    }
  }

  /**
   * When the sender should look again: now if a head is ready, else the earliest end of a
   * linger or backoff; {@code Long.MAX_VALUE} when nothing waits.
   */
  public long nextReadyMs(long nowMs) {
    lock.lock();
    try {
      long next = Long.MAX_VALUE;
      for (ArrayDeque<ProducerBatch> queue : queues.values()) {
        ProducerBatch head = queue.peekFirst();
        if (head == null || head.inFlight) continue;
        long at = head.retryAtMs > nowMs ? head.retryAtMs
            : ready(head, queue, nowMs) ? nowMs : head.createdMs + lingerMs;
        next = Math.min(next, at);
      }
      return next;
    } finally {
      lock.unlock();
    }
  }

  /** Makes every batch ready until {@link #endFlush}; returns the batches to wait for. */
  public List<ProducerBatch> beginFlush() {
    lock.lock();
    try {
      flushesInProgress++;
      signal();
      return new ArrayList<>(incomplete);
    } finally {
      lock.unlock();
    }
  }

  public void endFlush() {
    lock.lock();
    try {
      flushesInProgress--;
    } finally {
      lock.unlock();
    }
  }

  /** Refuses further appends and makes every batch ready. */
  public void close() {
    lock.lock();
    try {
      closed = true;
      signal();
    } finally {
      lock.unlock();
    }
  }

  public boolean isClosed() {
    lock.lock();
    try {
      return closed;
    } finally {
      lock.unlock();
    }
  }

  /** Removes every batch not in flight; the caller fails them. */
  public List<ProducerBatch> abortUnsent() {
    lock.lock();
    try {
      List<ProducerBatch> out = new ArrayList<>();
      for (ArrayDeque<ProducerBatch> queue : queues.values()) {
        for (Iterator<ProducerBatch> it = queue.iterator(); it.hasNext(); ) {
          ProducerBatch b = it.next();
          if (!b.inFlight) {
            it.remove();
            b.closed = true;
            incomplete.remove(b);
            out.add(b);
          }
        }
      }
      signal();
      return out;
    } finally {
      lock.unlock();
    }
  }

  /** No batch waiting or in flight. */
  public boolean isEmpty() {
    lock.lock();
    try {
      return incomplete.isEmpty();
    } finally {
      lock.unlock();
    }
  }

  public int inFlightCount() {
    lock.lock();
    try {
      return inFlight;
    } finally {
      lock.unlock();
    }
  }

  /** Batches waiting or in flight. */
  public int batchCount() {
    lock.lock();
    try {
      return incomplete.size();
    } finally {
      lock.unlock();
    }
  }

  /** Wakes {@link #awaitWork}. */
  public void wakeup() {
    lock.lock();
    try {
      signal();
    } finally {
      lock.unlock();
    }
  }

  /** Sleeps up to {@code maxWaitMs} or until something changed since the last call. */
  public void awaitWork(long maxWaitMs) throws InterruptedException {
    lock.lock();
    try {
      long nanos = TimeUnit.MILLISECONDS.toNanos(Math.max(0, maxWaitMs));
      while (!workPending && nanos > 0) nanos = work.awaitNanos(nanos);
      workPending = false;
    } finally {
      lock.unlock();
    }
  }

  private boolean ready(ProducerBatch head, ArrayDeque<ProducerBatch> queue, long nowMs) {
    return head.closed || queue.size() > 1 || nowMs - head.createdMs >= lingerMs
        || flushesInProgress > 0 || closed;
  }

  private void close(ProducerBatch batch) {
    if (batch.closed) return;
    batch.closed = true;
    try {
      partitioner.onBatchClosed(batch.partition, partitionCount.getAsInt());
    } catch (RuntimeException e) {
      // a faulty partitioner must not stop the sender; it only loses its notification
      LOG.warn("partitioner {} threw in onBatchClosed; ignored", partitioner.getClass().getName(), e);
    }
  }

  private void signal() {
    workPending = true;
    work.signalAll();
  }
}
