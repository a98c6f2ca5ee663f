package io.talos.client.producer.internals;

import io.talos.client.producer.BufferExhaustedException;
import io.talos.client.producer.ProducerConfig;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The producer's memory bound: a count of bytes reserved by records that are waiting or in
 * flight, never more than {@code buffer.memory.bytes}. A record reserves its serialized size
 * before it is accepted and gives it back when its batch completes (stored or failed), so the
 * buffered payloads never exceed the bound.
 *
 * <p>Waiters are served in arrival order (a fair lock), so a large record is not starved by a
 * stream of small ones. Thread-safe.
 */
public final class BufferMemory {
  private final long totalBytes;
  private final ReentrantLock lock = new ReentrantLock(true);
  private final Condition freed = lock.newCondition();
  private long usedBytes;
  private int waiters;

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
    lock.lock(); // not interruptibly: only the wait below should react to interrupts
    try {
      long remainingNanos = TimeUnit.MILLISECONDS.toNanos(maxBlockMs);
      waiters++;
      try {
        while (usedBytes + bytes > totalBytes) {
          if (remainingNanos <= 0) {
            throw new BufferExhaustedException("the producer's buffer is full: " + usedBytes + " of "
                + ProducerConfig.BUFFER_MEMORY_BYTES + "=" + totalBytes + " bytes are taken by records"
                + " not yet delivered, and " + bytes + " more were not freed within "
                + ProducerConfig.MAX_BLOCK_MS + "=" + maxBlockMs + "; the record was not sent"
                + " (the server is slow or unreachable, or records are sent faster than it takes them)");
          }
          remainingNanos = freed.awaitNanos(remainingNanos);
        }
      } finally {
        waiters--;
      }
      usedBytes += bytes;
    } finally {
      lock.unlock();
    }
  }

  public void release(long bytes) {
    lock.lock();
    try {
      usedBytes -= bytes;
      if (usedBytes < 0) throw new IllegalStateException("released more than reserved: " + usedBytes);
      freed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  public long totalBytes() {
    return totalBytes;
  }

  public long usedBytes() {
    lock.lock();
    try {
      return usedBytes;
    } finally {
      lock.unlock();
    }
  }

  /** Threads blocked in {@link #reserve}. */
  public int waitingThreads() {
    lock.lock();
    try {
      return waiters;
    } finally {
      lock.unlock();
    }
  }
}
