package io.talos.client.producer.internals;

import io.talos.client.codec.CompressionType;
import io.talos.client.codec.MessageBlockEncoder;
import io.talos.client.producer.Callback;
import io.talos.client.producer.Partitioner;
import io.talos.client.producer.RecordMetadata;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntSupplier;
import java.util.function.Predicate;
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
 *
 * <p>Thread-safety: each partition's queue has its own lock (its monitor), as Kafka's producer
 * has one per partition deque, so that {@code send} appending to one partition does not wait for
 * I/O threads completing or draining batches of others. Lock order: {@code drainLock} (drains
 * are serialized, which keeps the in-flight count within {@code maxInFlight}) before a queue's
 * monitor; {@code workLock} (the sender's wake-up) is taken with no other lock held or after a
 * queue's monitor, never the other way round. The batches waiting or in flight are exactly those
 * in the queues (an in-flight head stays in its queue), so flush takes its list from the queues.
 * {@link #awaitWork} lets the sender sleep until an append opens or closes a batch, a completion,
 * a flush or a close.
 */
public final class RecordAccumulator {
  private static final Logger LOG = LoggerFactory.getLogger(RecordAccumulator.class);
  private static final PartitionQueue[] NO_QUEUES = new PartitionQueue[0];

  /** One partition's batches, oldest first. Guarded by its own monitor. */
  private static final class PartitionQueue {
    final ArrayDeque<ProducerBatch> batches = new ArrayDeque<>();
    /** Serialized bytes of the last batch the queue had when it opened a new one: its buffer's first size. */
    int lastBatchBytes;
  }

  private final int batchMaxRecords;
  private final int batchMaxBytes;
  private final long lingerMs;
  private final CompressionType compression;
  private final BufferMemory memory;
  private final Partitioner partitioner;
  private final IntSupplier partitionCount;
  /** Indexed by partition; replaced (grown, under growLock) when a higher partition appears. */
  private volatile PartitionQueue[] queues = NO_QUEUES;
  private final Object growLock = new Object();
  private final ReentrantLock drainLock = new ReentrantLock();
  private final ReentrantLock workLock = new ReentrantLock();
  private final Condition work = workLock.newCondition();
  private final AtomicInteger inFlight = new AtomicInteger();
  /** Batches waiting or in flight, for the metrics and the sender's exit test. */
  private final AtomicInteger batches = new AtomicInteger();
  private final AtomicInteger flushesInProgress = new AtomicInteger();
  private volatile boolean closed;
  /** Written under workLock; read without it by {@link #signal} to skip a wake-up already pending. */
  private volatile boolean workPending;
  /** Where the next drain starts, so that low partitions do not always go first. Guarded by drainLock. */
  private int drainStart;

  /**
   * @param partitioner told when batches close ({@link Partitioner#onBatchClosed}); called under
   *     a partition queue's lock, from the threads appending and draining (several at once), so
   *     it must be thread-safe and must not call back into the producer
   * @param partitionCount the topic's current partition count, for that call
   */
  public RecordAccumulator(int batchMaxRecords, int batchMaxBytes, long lingerMs,
      Partitioner partitioner, IntSupplier partitionCount) {
    this(batchMaxRecords, batchMaxBytes, lingerMs, CompressionType.NONE,
        new BufferMemory(Long.MAX_VALUE), partitioner, partitionCount);
  }

  /**
   * @param compression of the blocks the batches make
   * @param memory where the batches' buffers are accounted: {@link #append} takes a record's
   *     size, reserved by the caller, and reserves or gives back the difference to what the
   *     batch's buffer grows by; a completed batch's {@link ProducerBatch#heldBytes} are the
   *     caller's to release
   */
  public RecordAccumulator(int batchMaxRecords, int batchMaxBytes, long lingerMs,
      CompressionType compression, BufferMemory memory, Partitioner partitioner,
      IntSupplier partitionCount) {
    this.batchMaxRecords = batchMaxRecords;
    this.batchMaxBytes = batchMaxBytes;
    this.lingerMs = lingerMs;
    this.compression = compression;
    this.memory = memory;
    this.partitioner = partitioner;
    this.partitionCount = partitionCount;
  }

  /**
   * Serializes a record into its partition's open batch, opening a new batch if needed.
   *
   * <p>The caller has reserved {@code reservedBytes} in the memory: either the record's
   * {@code serializedBytes}, which pay for the room the record takes in the batch's buffer, or
   * none, and then the record is appended only if its open batch has room for it already. A
   * buffer is sized from the partition's previous batch and doubles (up to
   * {@code batch.max.bytes}) when a record does not fit; what it grows by beyond the record's
   * bytes is reserved without waiting, and what the record does not need (it fit in room already
   * reserved) is given back. If the memory has no bytes free for the buffer to grow, the batch is
   * closed as it is and the record opens the next one.
   *
   * @param reservedBytes {@code serializedBytes} or 0
   * @return the batch the record went to; null if {@code reservedBytes} was 0 and the record
   *     needed more room (nothing changed)
   * @throws IllegalArgumentException if the encoder refuses the record (the caller keeps its reservation)
   * @throws IllegalStateException if the accumulator is closed (the caller keeps its reservation)
   */
  public ProducerBatch append(int partition, byte[] value, String sequenceNumber,
      long createTimestampMs, int serializedBytes, int reservedBytes,
      CompletableFuture<RecordMetadata> future, Callback callback, long nowMs) {
    // before anything changes: a record the encoder refused would leave a batch half made
    MessageBlockEncoder.checkMessage(value, sequenceNumber);
    PartitionQueue queue = queue(partition);
    ProducerBatch batch;
    boolean wake = false;
    long unused = reservedBytes; // of the caller's reservation
    synchronized (queue) {
      // read under the queue's lock: close() passes every queue's lock after setting it, so no
      // append that saw it false is still running when close() returns
      if (closed) throw new IllegalStateException("the producer is closed; the record was not sent");
      batch = queue.batches.peekLast();
      // an open buffer is never larger than batch.max.bytes: room in it is room in the batch
      boolean fits = batch != null && !batch.closed && batch.freeBytes() >= serializedBytes;
      if (!fits && reservedBytes == 0) return null;
      if (batch != null && !batch.closed && !batch.entries.isEmpty()
          && batch.serializedBytes + (long) serializedBytes > batchMaxBytes) {
        close(batch);
      }
      if (batch != null && !batch.closed && !fits) {
        int grown = (int) Math.min(batchMaxBytes, Math.max(2L * batch.heldBytes,
            (long) batch.serializedBytes + serializedBytes));
        long extra = grown - batch.heldBytes;
        if (extra <= unused || memory.tryReserve(extra - unused)) {
          batch.growTo(grown);
          unused = Math.max(0, unused - extra); // the rest of the record's bytes are not needed
        } else {
          close(batch); // goes as it is; copying the buffer for every record would cost more
        }
      }
      // else the record fits in room reserved when the buffer grew to it: its bytes go back
      if (batch == null || batch.closed) {
        if (batch != null) queue.lastBatchBytes = batch.serializedBytes;
        int wanted = Math.max(serializedBytes, Math.min(batchMaxBytes, queue.lastBatchBytes));
        int capacity = serializedBytes + (int) memory.tryReserveUpTo(wanted - serializedBytes);
        unused = 0; // the record's bytes pay for the start of the new buffer
        batch = new ProducerBatch(partition, nowMs, compression, capacity);
        queue.batches.addLast(batch);
        batches.incrementAndGet();
        wake = true; // the sender must learn when this batch's linger ends
      }
      batch.add(value, sequenceNumber, createTimestampMs, serializedBytes, future, callback);
      if (batch.entries.size() >= batchMaxRecords || batch.serializedBytes >= batchMaxBytes) {
        close(batch);
        wake = true; // ready now
      }
    }
    if (unused > 0) memory.release(unused);
    // a record added to an open batch changes no deadline: no need to wake the sender
    if (wake) signal();
    return batch;
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
   * in flight (decided under the drain lock, so threads draining at once never exceed it:
   * completions only lower the count).
   */
  public List<ProducerBatch> drain(long nowMs, int max, int maxInFlight) {
    drainLock.lock();
    try {
      max = Math.min(max, maxInFlight - inFlight.get());
      if (max <= 0) return List.of();
      List<ProducerBatch> out = null;
      PartitionQueue[] all = queues;
      int n = all.length;
      boolean flushing = flushesInProgress.get() > 0 || closed;
      for (int i = 0; i < n && (out == null || out.size() < max); i++) {
        PartitionQueue queue = all[(drainStart + i) % n];
        synchronized (queue) {
          ProducerBatch head = queue.batches.peekFirst();
          if (head == null || head.inFlight || head.retryAtMs > nowMs
              || !ready(head, queue, nowMs, flushing)) {
            continue;
          }
          close(head);
          head.inFlight = true;
          inFlight.incrementAndGet();
          if (out == null) out = new ArrayList<>(Math.min(max, n));
          out.add(head);
        }
      }
      if (n > 0) drainStart = (drainStart + 1) % n;
      return out == null ? List.of() : out;
    } finally {
      drainLock.unlock();
    }
  }

  /**
   * Removes the batches not in flight that were created {@code deliveryTimeoutMs} or longer ago;
   * the caller fails them.
   */
  public List<ProducerBatch> expire(long nowMs, long deliveryTimeoutMs) {
    List<ProducerBatch> out = removeNotInFlight(b -> nowMs - b.createdMs >= deliveryTimeoutMs);
    if (!out.isEmpty()) signal();
    return out;
  }

  /** The in-flight batch completed for good (stored or failed): removes it from its queue. */
  public void completed(ProducerBatch batch) {
    PartitionQueue queue = inFlightQueue(batch);
    synchronized (queue) {
      if (queue.batches.peekFirst() != batch || !batch.inFlight) {
        throw new IllegalStateException("batch of partition " + batch.partition + " is not in flight");
      }
      queue.batches.pollFirst();
      batch.inFlight = false;
    }
    inFlight.decrementAndGet();
    batches.decrementAndGet();
    signal();
  }

  /** The in-flight batch failed retriably: it stays the head, sent again from {@code retryAtMs}. */
  public void retryLater(ProducerBatch batch, long retryAtMs) {
    PartitionQueue queue = inFlightQueue(batch);
    synchronized (queue) {
      if (!batch.inFlight) throw new IllegalStateException("batch is not in flight");
      batch.inFlight = false;
      batch.retryAtMs = retryAtMs;
    }
    inFlight.decrementAndGet();
    signal();
  }

  /**
   * When the sender should look again: now if a head is ready, else the earliest end of a
   * linger or backoff; {@code Long.MAX_VALUE} when nothing waits.
   */
  public long nextReadyMs(long nowMs) {
    long next = Long.MAX_VALUE;
    boolean flushing = flushesInProgress.get() > 0 || closed;
    for (PartitionQueue queue : queues) {
      synchronized (queue) {
        ProducerBatch head = queue.batches.peekFirst();
        if (head == null || head.inFlight) continue;
        long at = head.retryAtMs > nowMs ? head.retryAtMs
            : ready(head, queue, nowMs, flushing) ? nowMs : head.createdMs + lingerMs;
        next = Math.min(next, at);
      }
    }
    return next;
  }

  /** Makes every batch ready until {@link #endFlush}; returns the batches to wait for. */
  public List<ProducerBatch> beginFlush() {
    flushesInProgress.incrementAndGet();
    // every record whose append returned before this call is in a queue, or already completed
    List<ProducerBatch> out = new ArrayList<>();
    for (PartitionQueue queue : queues) {
      synchronized (queue) {
        out.addAll(queue.batches);
      }
    }
    signal();
    return out;
  }

  public void endFlush() {
    flushesInProgress.decrementAndGet();
  }

  /** Refuses further appends and makes every batch ready. */
  public void close() {
    closed = true;
    // a barrier: an append that read closed == false under a queue's lock has finished once we
    // got that lock, so after this loop no record can join a queue any more
    for (PartitionQueue queue : queues) {
      synchronized (queue) {
        queue.batches.size(); // nothing to do under the lock: taking it is the point
      }
    }
    signal();
  }

  public boolean isClosed() {
    return closed;
  }

  /** Removes every batch not in flight; the caller fails them. */
  public List<ProducerBatch> abortUnsent() {
    List<ProducerBatch> out = removeNotInFlight(b -> true);
    signal();
    return out;
  }

  /** Removes (and closes) the batches not in flight that {@code which} picks. */
  private List<ProducerBatch> removeNotInFlight(Predicate<ProducerBatch> which) {
    List<ProducerBatch> out = new ArrayList<>();
    for (PartitionQueue queue : queues) {
      synchronized (queue) {
        for (Iterator<ProducerBatch> it = queue.batches.iterator(); it.hasNext(); ) {
          ProducerBatch b = it.next();
          if (!b.inFlight && which.test(b)) {
            it.remove();
            close(b);
            batches.decrementAndGet();
            out.add(b);
          }
        }
      }
    }
    return out;
  }

  /** No batch waiting or in flight. */
  public boolean isEmpty() {
    return batches.get() == 0;
  }

  public int inFlightCount() {
    return inFlight.get();
  }

  /** Batches waiting or in flight. */
  public int batchCount() {
    return batches.get();
  }

  /** Wakes {@link #awaitWork}. */
  public void wakeup() {
    signal();
  }

  /** Sleeps up to {@code maxWaitMs} or until something changed since the last call. */
  public void awaitWork(long maxWaitMs) throws InterruptedException {
    workLock.lock();
    try {
      long nanos = TimeUnit.MILLISECONDS.toNanos(Math.max(0, maxWaitMs));
      while (!workPending && nanos > 0) nanos = work.awaitNanos(nanos);
      workPending = false;
    } finally {
      workLock.unlock();
    }
  }

  /** The queue of a partition, made (with any lower missing ones) on first use. */
  private PartitionQueue queue(int partition) {
    PartitionQueue[] all = queues;
    if (partition < all.length) return all[partition];
    synchronized (growLock) {
      all = queues;
      if (partition < all.length) return all[partition];
      int size = Math.max(partition + 1, partitionCount.getAsInt());
      PartitionQueue[] grown = Arrays.copyOf(all, size);
      for (int i = all.length; i < size; i++) grown[i] = new PartitionQueue();
      queues = grown;
      return grown[partition];
    }
  }

  private PartitionQueue inFlightQueue(ProducerBatch batch) {
    PartitionQueue[] all = queues;
    if (batch.partition >= all.length) {
      throw new IllegalStateException("batch of partition " + batch.partition + " is not in flight");
    }
    return all[batch.partition];
  }

  /** Called under the queue's lock. */
  private boolean ready(ProducerBatch head, PartitionQueue queue, long nowMs, boolean flushing) {
    return head.closed || queue.batches.size() > 1 || nowMs - head.createdMs >= lingerMs || flushing;
  }

  /** Called under the batch's queue's lock. */
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
    // A wake-up still pending (the sender has not yet reset it in awaitWork) covers this change
    // too: the sender resets it before its next look at the queues, so that look comes after
    // the change. Skipping the lock then spares the appending and I/O threads a lock and an
    // unpark of the sender per batch opened, filled or completed.
    if (workPending) return;
    workLock.lock();
    try {
      workPending = true;
      work.signalAll();
    } finally {
      workLock.unlock();
    }
  }
}
