package io.talos.client.producer.internals;

import io.talos.client.producer.BufferExhaustedException;
import io.talos.client.producer.ProducerConfig;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.AbstractQueuedLongSynchronizer;

/**
 * The producer's memory bound: a count of bytes reserved by the buffers of batches that are
 * waiting or in flight, never more than {@code buffer.memory.bytes}. A record reserves its
 * serialized size before it is accepted; the accumulator turns that into room in a batch's buffer
 * (reserving, without waiting, what a buffer grows by beyond it, and giving back what it does
 * not need), and a batch's buffer is given back when the batch completes (stored or failed), so
 * the buffers never exceed the bound.
 *
 * <p>Thread-safety: a fair counting semaphore of bytes (the JDK's queued synchronizer with a
 * {@code long} state, the free bytes, as {@link java.util.concurrent.Semaphore} is with an
 * {@code int}). Taking and giving back bytes is a compare-and-set, without a lock: the
 * application thread and the I/O threads would otherwise meet on one once per record and once
 * per batch. A caller that must wait joins a FIFO queue and sleeps; a release wakes the head of
 * the queue, which takes its bytes if they fit and wakes the next one if more are left. Waiters
 * are served in arrival order, and a caller arriving while others wait queues behind them, so a
 * large record is not starved by a stream of small ones. The queue does the wake-ups: none is
 * lost between a waiter's last look at the free bytes and its sleep.
 */
public final class BufferMemory {
  private final long totalBytes;
  private final FreeBytes free;

  /** State: the free bytes. Acquire takes {@code bytes} if they fit and nobody is queued before. */
  private static final class FreeBytes extends AbstractQueuedLongSynchronizer {
    private final long total;

    FreeBytes(long total) {
      this.total = total;
      setState(total);
    }

    @Override
    protected long tryAcquireShared(long bytes) {
      while (true) {
        if (hasQueuedPredecessors()) return -1;
        long available = getState();
        long remaining = available - bytes;
        if (remaining < 0) return -1;
        if (compareAndSetState(available, remaining)) return remaining;
      }
    }

    @Override
    protected boolean tryReleaseShared(long bytes) {
      while (true) {
        long available = getState();
        long next = available + bytes;
        if (next > total) {
          throw new IllegalStateException("released more than reserved: " + (total - next));
        }
        if (compareAndSetState(available, next)) return true;
      }
    }

    /** Takes up to {@code max} bytes, as many as are free, unless others wait; returns how many. */
    long tryAcquireUpTo(long max) {
      while (true) {
        if (hasQueuedPredecessors()) return 0;
        long available = getState();
        long taken = Math.min(max, available);
        if (taken <= 0) return 0;
        if (compareAndSetState(available, available - taken)) return taken;
      }
    }

    long available() {
      return getState();
    }
  }

  public BufferMemory(long totalBytes) {
    this.totalBytes = totalBytes;
    this.free = new FreeBytes(totalBytes);
  }

  /**
   * Reserves {@code bytes}, waiting up to {@code maxBlockMs} for them to be freed.
   *
   * @throws IllegalArgumentException if {@code bytes} exceeds the whole buffer (could never fit)
   * @throws BufferExhaustedException if they were not freed in time
   * @throws InterruptedException if interrupted while waiting; nothing is reserved
   */
  public void reserve(long bytes, long maxBlockMs) throws InterruptedException {
    if (bytes > totalBytes) {
      throw new IllegalArgumentException("a record of " + bytes + " bytes (serialized) can never fit"
          + " in " + ProducerConfig.BUFFER_MEMORY_BYTES + "=" + totalBytes);
    }
    // first without the interrupt check of the waiting path: only a wait should react to interrupts
    if (free.tryAcquireShared(bytes) >= 0) return;
    if (!free.tryAcquireSharedNanos(bytes, TimeUnit.MILLISECONDS.toNanos(maxBlockMs))) {
      throw new BufferExhaustedException("the producer's buffer is full: " + usedBytes() + " of "
          + ProducerConfig.BUFFER_MEMORY_BYTES + "=" + totalBytes + " bytes are taken by records"
          + " not yet delivered, and " + bytes + " more were not freed within "
          + ProducerConfig.MAX_BLOCK_MS + "=" + maxBlockMs + "; the record was not sent"
          + " (the server is slow or unreachable, or records are sent faster than it takes them)");
    }
  }

  /**
   * Reserves {@code bytes} if they are free now and nobody waits in {@link #reserve}; never waits.
   *
   * @return whether they were reserved
   */
  public boolean tryReserve(long bytes) {
    return free.tryAcquireShared(bytes) >= 0;
  }

  /**
   * Reserves up to {@code maxBytes}, as many as are free now, none if somebody waits in
   * {@link #reserve}; never waits.
   *
   * @return the bytes reserved, 0 to {@code maxBytes}
   */
  public long tryReserveUpTo(long maxBytes) {
    return maxBytes <= 0 ? 0 : free.tryAcquireUpTo(maxBytes);
  }

  /** @throws IllegalStateException if more is released than is reserved (nothing is released) */
  public void release(long bytes) {
    free.releaseShared(bytes);
  }

  public long totalBytes() {
    return totalBytes;
  }

  public long usedBytes() {
    return totalBytes - free.available();
  }

  /** Threads blocked in {@link #reserve} (an estimate while they come and go). */
  public int waitingThreads() {
    return free.getQueueLength();
  }
}
