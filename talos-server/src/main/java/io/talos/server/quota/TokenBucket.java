package io.talos.server.quota;

/**
 * A token bucket that may go into debt: {@code rate} tokens per second accrue up to {@code
 * capacity}; a request takes its tokens at once and, if there were not enough, the bucket goes
 * negative and the request must wait until the balance is back at zero ({@link #reserve}). So the
 * long-run rate of everything admitted is the bucket's rate, whatever the request sizes, and a
 * request larger than the capacity is admitted too (after its wait), never refused forever.
 *
 * <p>Time is passed in by the caller (nanoseconds of an injected clock), so tests step it. A
 * bucket whose rate is 0 or less is unlimited. Thread-safe (synchronized; the work is a few
 * arithmetic operations).
 */
public final class TokenBucket {
  private final double ratePerSec;
  private final double capacity;
  private double tokens;
  private long lastNanos;

  /**
   * @param ratePerSec tokens per second; 0 or less: unlimited
   * @param burstMs how many milliseconds of rate the bucket holds when full (its capacity)
   * @param nowNanos the clock at creation: the bucket starts full
   */
  public TokenBucket(double ratePerSec, long burstMs, long nowNanos) {
    this.ratePerSec = ratePerSec;
    this.capacity = Math.max(1, ratePerSec * burstMs / 1000.0);
    this.tokens = capacity;
    this.lastNanos = nowNanos;
  }

  public double ratePerSec() {
    return ratePerSec;
  }

  private void refill(long nowNanos) {
    if (nowNanos > lastNanos) {
      tokens = Math.min(capacity, tokens + (nowNanos - lastNanos) * ratePerSec / 1e9);
      lastNanos = nowNanos;
    }
  }

  /**
   * How long a request of {@code units} would wait if it took its tokens now, in nanoseconds
   * (0: at once). Takes nothing. A request larger than the capacity waits only until the bucket
   * is full (it could never wait for more) and then takes it into debt, which the requests after
   * it pay by waiting: so it is admitted with the throttle's bounded delay, not refused forever.
   */
  public synchronized long waitNanos(long units, long nowNanos) {
    if (ratePerSec <= 0) return 0;
    refill(nowNanos);
    double after = tokens - Math.min(units, capacity);
    return after >= 0 ? 0 : (long) Math.ceil(-after * 1e9 / ratePerSec);
  }

  /** Takes {@code units} (possibly into debt). */
  public synchronized void take(long units, long nowNanos) {
    if (ratePerSec <= 0) return;
    refill(nowNanos);
    tokens -= units;
  }

  /** The current balance (negative: in debt), for tests and metrics. */
  public synchronized double tokens(long nowNanos) {
    refill(nowNanos);
    return tokens;
  }
}
