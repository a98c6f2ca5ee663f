package io.talos.bench.storage;

import io.talos.server.storage.OffsetIndex;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The sparse offset index of a segment ({@link OffsetIndex}): lookup of a random offset in an
 * index of {@code entries} entries (a 256 MiB segment with the default 4 KiB interval holds
 * ~65,536), beside the lookup of the newest offset (a consumer at the tail) and the append path
 * ({@code maybeAppend} per record).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
@Fork(1)
@State(Scope.Benchmark)
public class OffsetIndexBenchmark {
  private static final int INTERVAL = 4096;
  private static final int OFFSETS_PER_ENTRY = 40;

  @Param({"1000", "65536"})
  public int entries;

  private OffsetIndex index;
  private long maxOffset;
  private OffsetIndex appending;
  private long appendOffset;
  private long appendPosition;

  @Setup
  public void setUp() {
    index = new OffsetIndex(0, INTERVAL);
    for (int i = 1; i <= entries; i++) index.maybeAppend((long) i * OFFSETS_PER_ENTRY, (long) i * INTERVAL);
    maxOffset = (long) entries * OFFSETS_PER_ENTRY;
    appending = new OffsetIndex(0, INTERVAL);
  }

  @Benchmark
  public long lookupRandom() {
    return index.lookup(ThreadLocalRandom.current().nextLong(maxOffset));
  }

  @Benchmark
  public long lookupTail() {
    return index.lookup(maxOffset - 1);
  }

  /** One record of 1 KiB appended: an index entry every 4th call. */
  @Benchmark
  public int maybeAppend() {
    appendOffset += 10;
    appendPosition += 1024;
    appending.maybeAppend(appendOffset, appendPosition);
    if (appending.entryCount() > 1_000_000) {
      appending = new OffsetIndex(0, INTERVAL);
      appendOffset = 0;
      appendPosition = 0;
    }
    return appending.entryCount();
  }
}
