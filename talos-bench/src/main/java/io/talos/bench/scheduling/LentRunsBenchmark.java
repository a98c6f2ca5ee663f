package io.talos.bench.scheduling;

import com.codahale.metrics.MetricRegistry;
import io.talos.server.scheduling.Admission;
import io.talos.server.scheduling.PoolConfig;
import io.talos.server.scheduling.Task;
import io.talos.server.scheduling.TaskPool;
import java.time.Clock;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A put served on the submitting thread, its partition's idle worker lent to it ({@link
 * TaskPool#submitOrRun}), whose run queues a get of the same partition, as an append wakes a
 * long-polling get at the tail: the time from the submission until both are answered.
 *
 * <p>{@code maxLentRuns=1} is the baseline: the loan ends with the put, and the worker's own thread
 * is woken to serve the get. With 2 (the server's default) the submitting thread serves the get
 * itself once the put is answered. The benchmark thread waits for the get by spinning (the real
 * caller is a client waiting on the network), so the score is the hand-off itself: waking the
 * worker's thread and its run, or none. Tasks do no work of their own.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@Threads(1)
@State(Scope.Thread)
public class LentRunsBenchmark {
  private static final int PUT = 1;
  private static final int GET = 2;

  @Param({"1", "2"})
  public int maxLentRuns;

  private TaskPool pool;
  private final AtomicLong getsAnswered = new AtomicLong();
  private long expected;
  private Get get;
  private Put put;

  @Setup(Level.Trial)
  public void start() {
    pool = TaskPool.create(PoolConfig.builder().workers(1).maxLentRuns(maxLentRuns).build(), Clock.systemUTC(),
        new MetricRegistry(), true);
    get = new Get();
    put = new Put();
  }

  @TearDown(Level.Trial)
  public void stop() {
    pool.close();
  }

  @Benchmark
  public long putWakesGet() {
    expected++;
    if (pool.submitOrRun(put) != Admission.ACCEPTED) throw new IllegalStateException("put refused");
    while (getsAnswered.get() < expected) Thread.onSpinWait();
    return expected;
  }

  private abstract static class BenchTask implements Task {
    @Override
    public Object key() {
      return "partition-0";
    }

    @Override
    public long deadlineMs() {
      return Task.NO_DEADLINE;
    }

    @Override
    public void expire() {
      throw new IllegalStateException(this + " expired");
    }

    @Override
    public void fail(Throwable cause) {
      throw new IllegalStateException(this + " failed", cause);
    }
  }

  /** The put: its append wakes the partition's parked get, which goes back to the pool. */
  private final class Put extends BenchTask {
    @Override
    public int priority() {
      return PUT;
    }

    @Override
    public void run() {
      if (pool.submit(get) != Admission.ACCEPTED) throw new IllegalStateException("get refused");
    }
  }

  private final class Get extends BenchTask {
    @Override
    public int priority() {
      return GET;
    }

    @Override
    public void run() {
      getsAnswered.incrementAndGet();
    }
  }
}
