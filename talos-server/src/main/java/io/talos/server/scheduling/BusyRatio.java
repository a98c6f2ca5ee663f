package io.talos.server.scheduling;

/**
 * Fraction of wall time a worker spent serving tasks, over fixed windows: the value is that of the
 * last completed window (0 until one completes), so it is at most two windows old. A task still
 * running when a window ends counts for the part of it inside that window.
 *
 * <p>Thread-safety: safe; the worker thread records, metric readers read.
 */
final class BusyRatio {
  private final long windowNanos;
  private long windowStartNanos;
  private long busyNanosInWindow;
  private boolean busy;
  private long busySinceNanos;
  private double lastRatio;

  BusyRatio(long windowNanos, long nowNanos) {
    this.windowNanos = windowNanos;
    this.windowStartNanos = nowNanos;
  }

  synchronized void busy(long nowNanos) {
    roll(nowNanos);
    busy = true;
    busySinceNanos = nowNanos;
  }

  synchronized void idle(long nowNanos) {
    roll(nowNanos);
    if (busy) busyNanosInWindow += Math.max(0, nowNanos - busySinceNanos);
    busy = false;
  }

  synchronized double ratio(long nowNanos) {
    roll(nowNanos);
    return lastRatio;
  }

  private void roll(long nowNanos) {
    long elapsed = nowNanos - windowStartNanos;
    if (elapsed < 0) { // the clock went back: start a new window from here
      windowStartNanos = nowNanos;
      busyNanosInWindow = 0;
      if (busy) busySinceNanos = nowNanos;
      return;
    }
    if (elapsed < windowNanos) return;
    long busyNanos = busyNanosInWindow;
    if (busy) {
      busyNanos += Math.max(0, nowNanos - busySinceNanos);
      busySinceNanos = nowNanos;
    }
    lastRatio = Math.min(1.0, (double) busyNanos / elapsed);
    windowStartNanos = nowNanos;
    busyNanosInWindow = 0;
  }
}
