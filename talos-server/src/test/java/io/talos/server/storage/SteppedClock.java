package io.talos.server.storage;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/** A clock that only moves when a test advances it. Thread-safe. */
final class SteppedClock extends Clock {
  private final AtomicLong nowMs;

  SteppedClock(long startMs) {
    this.nowMs = new AtomicLong(startMs);
  }

  void advance(long ms) {
    nowMs.addAndGet(ms);
  }

  @Override
  public long millis() {
    return nowMs.get();
  }

  @Override
  public Instant instant() {
    return Instant.ofEpochMilli(nowMs.get());
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
