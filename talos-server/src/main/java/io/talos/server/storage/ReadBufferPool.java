package io.talos.server.storage;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Direct buffers of {@link #BUFFER_BYTES} that getMessage reads segment records into, bounded in
 * total bytes.
 *
 * <p>Why: a read into a heap array costs, besides the kernel's copy out of the page cache, the
 * zeroing of a new array (its blocks are handed out as slices, so the array cannot be reused), the
 * JDK's copy from its temporary direct buffer into the array, and a copy back into a direct buffer
 * when the reply is written to the socket. A pooled direct buffer is read into by the file system
 * itself and written to the socket as it is: one copy in, one copy out.
 *
 * <p>A buffer is taken by a {@link ReadLease} and comes back when the lease is released (after the
 * reply that refers to it was written). At most {@code maxBytes} are out or idle at once: when
 * they are all out, {@link #tryAcquire} answers null and the reader uses a heap array (as it
 * would without a pool), so the pool never waits and never grows past its bound. Idle buffers are
 * kept for the next read: direct memory is costly to allocate and to free.
 *
 * <p>Thread-safe.
 */
public final class ReadBufferPool {
  /**
   * Each buffer's size, the most one positioned read of a segment takes: several producers'
   * batches (a record larger than this is read into a heap array of its own).
   */
  public static final int BUFFER_BYTES = 1024 * 1024;
  /** No buffers: every read uses heap arrays. */
  public static final ReadBufferPool NONE = new ReadBufferPool(0);

  private final int maxBuffers;
  private final ArrayDeque<ByteBuffer> idle = new ArrayDeque<>();
  /** Buffers allocated (out or idle); under the lock. */
  private int allocated;
  private final AtomicLong exhausted = new AtomicLong();

  /** @param maxBytes the most bytes of buffers out or idle at once (rounded down to whole buffers) */
  public ReadBufferPool(long maxBytes) {
    if (maxBytes < 0) throw new IllegalArgumentException("maxBytes=" + maxBytes + " must be >= 0");
    this.maxBuffers = (int) Math.min(Integer.MAX_VALUE, maxBytes / BUFFER_BYTES);
  }

  /**
   * A cleared buffer of {@link #BUFFER_BYTES} (its content is left over from an earlier read), or
   * null when {@code maxBytes} of buffers are out.
   */
  ByteBuffer tryAcquire() {
    ByteBuffer b;
    synchronized (this) {
      b = idle.pollFirst();
      if (b == null) {
        if (allocated >= maxBuffers) {
          exhausted.incrementAndGet();
          return null;
        }
        allocated++;
      }
    }
    if (b == null) b = ByteBuffer.allocateDirect(BUFFER_BYTES); // outside the lock: it zeroes
    return b.clear();
  }

  /** Takes back a buffer from {@link #tryAcquire}; nobody may use it or a slice of it afterwards. */
  synchronized void release(ByteBuffer b) {
    idle.addFirst(b); // most recently used first: its pages are the warmest
  }

  /** The bound, in bytes. */
  public long maxBytes() {
    return (long) maxBuffers * BUFFER_BYTES;
  }

  /** Bytes of buffers taken by leases and not given back yet. */
  public synchronized long outBytes() {
    return (long) (allocated - idle.size()) * BUFFER_BYTES;
  }

  /** Bytes of buffers allocated so far (out or idle). */
  public synchronized long allocatedBytes() {
    return (long) allocated * BUFFER_BYTES;
  }

  /** Buffers asked for while every one was out (the reader used a heap array instead). */
  public long exhaustedCount() {
    return exhausted.get();
  }
}
