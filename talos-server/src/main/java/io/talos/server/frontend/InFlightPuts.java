package io.talos.server.frontend;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.util.Callback;

/**
 * The putMessage requests this node's front-end received and has not answered yet, whatever
 * serves them: queued or running in the task pool, throttled, or forwarded to the partition's
 * owner and waiting for its reply. A put counts from the moment its request arrives until its
 * answer has been written to the connection (or the write failed), so a shutdown that waits for
 * none to be left never closes a connection whose put may still take effect.
 *
 * <p>{@link #stop} marks the node as stopping: the front-end then refuses new puts and gets
 * (retriable, nothing done) and {@link #awaitNone} waits for those accepted before.
 *
 * <p>Thread-safe: the count and the stop flag are read and written under one monitor, which
 * {@link #awaitNone} waits on.
 */
final class InFlightPuts {
  private final Object lock = new Object();
  private int count;
  private volatile boolean stopped;

  /**
   * {@code callback}, counting one put until it completes (once, either way). Every request
   * whose callback is wrapped here must have it completed: Jetty's handling guarantees it.
   */
  Callback track(Callback callback) {
    synchronized (lock) {
      count++;
    }
    AtomicBoolean done = new AtomicBoolean();
    Runnable release = () -> {
      if (!done.compareAndSet(false, true)) return;
      synchronized (lock) {
        if (--count == 0) lock.notifyAll();
      }
    };
    return Callback.from(callback.getInvocationType(), () -> {
      try {
        callback.succeeded();
      } finally {
        release.run();
      }
    }, failure -> {
      try {
        callback.failed(failure);
      } finally {
        release.run();
      }
    });
  }

  /** From now on new puts and gets are refused. Idempotent. */
  void stop() {
    stopped = true;
  }

  boolean stopped() {
    return stopped;
  }

  /** Puts received and not yet answered. */
  int count() {
    synchronized (lock) {
      return count;
    }
  }

  /**
   * Waits at most {@code timeoutMs} for every put received to be answered.
   *
   * @return true if none is left
   */
  boolean awaitNone(long timeoutMs) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    synchronized (lock) {
      while (count > 0) {
        long leftMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        if (leftMs <= 0) return false;
        lock.wait(leftMs);
      }
      return true;
    }
  }
}
