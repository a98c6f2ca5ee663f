package io.talos.server.frontend;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The bytes of getMessage answers the server holds at once, over all gets
 * ({@code message.get.inflight.max.bytes}): from the read of a get until its answer has been
 * written to the connection. Without it, concurrent large fetches (each up to
 * {@code message.get.max.bytes}, one per HTTP thread) can together ask for more than the heap.
 *
 * <p>A get reserves what it may read before reading; when less is free it is granted what is
 * free and reads that much (at least one block is always returned, so the reservation is
 * resized to the real answer once read: the budget is exceeded by at most one block per get
 * being read, and a get that found little holds little while its answer is sent). When nothing
 * is free only because of gets still reading (their grants are what they may read, not what they
 * will), a get is granted one block; it is refused (retriable) only when answers already read
 * fill the budget. The reservation is released once the answer is sent, or dropped.
 *
 * <p>Thread-safe (lock-free); a {@link Reservation} belongs to one get at a time.
 */
final class GetReplyBudget {
  private final long maxBytes;
  private final int maxPerGet;
  private final AtomicLong used = new AtomicLong();
  /** The part of {@link #used} granted to gets still reading (not yet resized to their answer). */
  private final AtomicLong reading = new AtomicLong();

  /**
   * @param maxBytes most answer bytes held at once
   * @param maxPerGet the most one get reads ({@code message.get.max.bytes}), what a get that does
   *     not say how much it wants is given
   */
  GetReplyBudget(long maxBytes, int maxPerGet) {
    if (maxBytes < 1 || maxPerGet < 1) {
      throw new IllegalArgumentException("maxBytes=" + maxBytes + " and maxPerGet=" + maxPerGet + " must be >= 1");
    }
    this.maxBytes = maxBytes;
    this.maxPerGet = maxPerGet;
  }

  /**
   * Reserves room for a get that asks for at most {@code requestedMax} bytes (0 or less: as much
   * as the server allows).
   *
   * @return the reservation, possibly of fewer bytes than asked; null when nothing is free
   */
  Reservation reserve(int requestedMax) {
    long wanted = requestedMax > 0 ? Math.min(requestedMax, maxPerGet) : maxPerGet;
    for (long u = used.get(); ; u = used.get()) {
      long free = maxBytes - u;
      long grant;
      if (free > 0) {
        grant = Math.min(wanted, free);
      } else if (u - reading.get() < maxBytes) {
        grant = 1; // full of grants, not of answers: one block
      } else {
        return null;
      }
      if (used.compareAndSet(u, u + grant)) {
        reading.addAndGet(grant);
        return new Reservation(grant);
      }
    }
  }

  long usedBytes() {
    return used.get();
  }

  long maxBytes() {
    return maxBytes;
  }

  /** Room held for one get's answer. */
  final class Reservation {
    private final AtomicBoolean released = new AtomicBoolean();
    private final AtomicBoolean read = new AtomicBoolean();
    private volatile long bytes;

    private Reservation(long bytes) {
      this.bytes = bytes;
    }

    /** What the get may read (its maxGetMessageBytes from now on). */
    int grantedBytes() {
      return (int) Math.min(Integer.MAX_VALUE, bytes);
    }

    /**
     * Holds what the answer really takes once it has been read: less than granted when the
     * partition had less, more when its one block was larger than the grant.
     */
    void resizeTo(long answerBytes) {
      if (released.get() || !read.compareAndSet(false, true)) return;
      reading.addAndGet(-bytes);
      used.addAndGet(answerBytes - bytes);
      bytes = answerBytes;
    }

    /** Gives the room back; only the first call counts. */
    void release() {
      if (!released.compareAndSet(false, true)) return;
      if (read.compareAndSet(false, true)) reading.addAndGet(-bytes);
      used.addAndGet(-bytes);
    }
  }
}
