package io.talos.server.frontend;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The request-body bytes the front-end holds at once, over all connections
 * ({@code server.request.body.inflight.max.bytes}): bytes are reserved as they arrive, not as a
 * client declares them, so a connection that announces a large body and then sends nothing costs
 * nothing. A body whose next bytes do not fit is refused with 503 and Retry-After.
 *
 * <p>Thread-safe (lock-free).
 */
final class BodyBudget {
  private final long maxBytes;
  private final AtomicLong used = new AtomicLong();

  BodyBudget(long maxBytes) {
    this.maxBytes = maxBytes;
  }

  /** Reserves {@code n} bytes if they fit; the caller releases them when the body is dropped. */
  boolean tryReserve(long n) {
    for (long u = used.get(); ; u = used.get()) {
      if (u + n > maxBytes) return false;
      if (used.compareAndSet(u, u + n)) return true;
    }
  }

  void release(long n) {
    used.addAndGet(-n);
  }

  long usedBytes() {
    return used.get();
  }

  long maxBytes() {
    return maxBytes;
  }
}
