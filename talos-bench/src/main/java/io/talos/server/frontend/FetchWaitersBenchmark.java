package io.talos.server.frontend;

import com.codahale.metrics.MetricRegistry;
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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Long poll at the tail: a get parks on its partition ({@link FetchWaiters#park}) and the next
 * append wakes it ({@link FetchWaiters#appended}), the cycle of a consumer that keeps up, with
 * the wait the bench's consumer asks for. In the server's package because the class is internal
 * to it. Its baseline is the same benchmark on the build before the change (the server jar of
 * that build first on the class path), which scheduled and cancelled a timer task per get.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
@Fork(1)
@State(Scope.Benchmark)
public class FetchWaitersBenchmark {
  @Param({"5000"})
  public long waitMs;

  private FetchWaiters waiters;
  private FetchWaiters.Slot slot;
  private long woken;

  @Setup
  public void setUp() {
    waiters = new FetchWaiters(30_000, 10_000, new MetricRegistry());
    slot = waiters.slot("bench", 0);
  }

  @TearDown
  public void tearDown() {
    waiters.close();
  }

  @Benchmark
  public long parkThenWake() {
    FetchWaiters.Waiter w = new FetchWaiters.Waiter(() -> woken++, () -> {});
    waiters.park(slot, slot.appends(), w, waitMs);
    waiters.appended("bench", 0);
    return woken;
  }
}
