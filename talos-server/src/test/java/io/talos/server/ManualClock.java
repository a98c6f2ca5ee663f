package io.talos.server;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/** A clock that moves only when a test tells it to (ms or ns steps), for stepping time-based code. Thread-safe. */
public final class ManualClock extends Clock {
  private final AtomicLong nanos;

  public ManualClock(long startMs) {
    this.nanos = new AtomicLong(startMs * 1_000_000L);
  }

  public void advanceMs(long ms) {
    nanos.addAndGet(ms * 1_000_000L);
  }

  public void advanceNanos(long ns) {
    nanos.addAndGet(ns);
  }

  @Override
  public long millis() {
    return nanos.get() / 1_000_000L;
  }

  @Override
  public Instant instant() {
    long now = nanos.get();
    return Instant.ofEpochSecond(now / 1_000_000_000L, now % 1_000_000_000L);
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    throw new UnsupportedOperationException();
  }
}
