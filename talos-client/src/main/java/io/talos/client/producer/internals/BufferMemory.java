package io.talos.client.producer.internals;

import io.talos.client.producer.BufferExhaustedException;
import io.talos.client.producer.ProducerConfig;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The producer's memory bound: a count of bytes reserved by records that are waiting or in
 * flight, never more than {@code buffer.memory.bytes}. A record reserves its serialized size
 * before it is accepted and gives it back when its batch completes (stored or failed), so the
 * buffered payloads never exceed the bound.
 *
 * <p>Thread-safety: the count is an atomic. While nobody waits, {@link #reserve} takes its bytes
 * with a compare-and-set and {@link #release} gives them back with an add, without a lock (the
 * application thread and the I/O threads would otherwise meet on it once per record and once per
 * batch). A caller that must wait registers as a waiter, then takes the fair lock and sleeps on
 * its condition; while anyone waits, new callers queue behind on that lock, so waiters are
 * served in arrival order and a large record is not starved by a stream of small ones. No lost
 * wake-up: a waiter counts itself in {@code waiters} before it looks at the free bytes, and a
 * release lowers the count before it looks at {@code waiters}; of these two atomic steps one
 * comes first, so either the waiter sees the bytes freed or the releaser sees the waiter and
 * signals it under the lock (which the waiter holds from its look until its sleep).
 */
public final class BufferMemory {
  private final long totalBytes;
  private final AtomicLong usedBytes = new AtomicLong();
  /** Threads between registering in {@link #reserve}'s slow path and leaving it. */
  private final AtomicInteger waiters = new AtomicInteger();
  private final ReentrantLock lock = new ReentrantLock(true);
  private final Condition freed = lock.newCondition();

  public BufferMemory(long totalBytes) {
    this.totalBytes = totalBytes;
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
    if (waiters.get() == 0 && tryTake(bytes)) return;
    reserveSlowly(bytes, maxBlockMs);
  }

  private void reserveSlowly(long bytes, long maxBlockMs) throws InterruptedException {
    waiters.incrementAndGet();
    try {
      lock.lock(); // not interruptibly: only the wait below should react to interrupts
      try {
        long remainingNanos = TimeUnit.MILLISECONDS.toNanos(maxBlockMs);
        while (!tryTake(bytes)) {
          if (remainingNanos <= 0) {
            throw new BufferExhaustedException("the producer's buffer is full: " + usedBytes.get()
                + " of " + ProducerConfig.BUFFER_MEMORY_BYTES + "=" + totalBytes + " bytes are taken"
                + " by records not yet delivered, and " + bytes + " more were not freed within "
                + ProducerConfig.MAX_BLOCK_MS + "=" + maxBlockMs + "; the record was not sent"
                + " (the server is slow or unreachable, or records are sent faster than it takes them)");
          }
          remainingNanos = freed.awaitNanos(remainingNanos);
        }
      } finally {
        lock.unlock();
      }
    } finally {
      waiters.decrementAndGet();
    }
  }

  private boolean tryTake(long bytes) {
    while (true) {
      long used = usedBytes.get();
      if (used + bytes > totalBytes) return false;
      if (usedBytes.compareAndSet(used, used + bytes)) return true;
    }
  }

  public void release(long bytes) {
    long used = usedBytes.addAndGet(-bytes);
    if (used < 0) throw new IllegalStateException("released more than reserved: " + used);
    if (waiters.get() > 0) {
      lock.lock();
      try {
        freed.signalAll();
      } finally {
        lock.unlock();
      }
    }
  }

  public long totalBytes() {
    return totalBytes;
  }

  public long usedBytes() {
    return usedBytes.get();
  }

  /** Threads blocked (or about to block) in {@link #reserve}. */
  public int waitingThreads() {
    return waiters.get();
  }
}
