package io.talos.bench.scheduling;

import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Reservoir;
import com.codahale.metrics.SlidingTimeWindowArrayReservoir;
import com.codahale.metrics.Snapshot;
import com.codahale.metrics.Timer;
import io.talos.server.scheduling.Admission;
import io.talos.server.scheduling.HashedWorkerSelector;
import io.talos.server.scheduling.LeastLoadedWorkerSelector;
import io.talos.server.scheduling.PoolConfig;
import io.talos.server.scheduling.PoolMetrics;
import io.talos.server.scheduling.Task;
import io.talos.server.scheduling.TaskPool;
import io.talos.server.scheduling.Worker;
import java.time.Clock;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
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
import org.openjdk.jmh.infra.Blackhole;

/**
 * The 2.1.5 thread model (each partition hashed to a fixed worker) against the 2.1.6 one (key
 * affinity, else the worker with the fewest waiting tasks, ties to the lowest id), on the same
 * {@link TaskPool}, under uniform and skewed partition choice.
 *
 * <p>Load: {@code @Threads} closed-loop clients (16 by default, change with {@code -t}), each
 * submitting one task at a time, half puts and half gets, over {@code partitions} partitions, and
 * waiting for it to complete. A task's service is a calibrated busy-wait ({@link
 * Blackhole#consumeCPU}), puts {@code putTokens}, gets {@code getTokens} (about 4 times cheaper by
 * default), plus {@code putParkMicros} of parking per put to model a flush that waits on I/O (0 by
 * default). Tasks are plain tasks: group commit is off, so only the choice of worker differs.
 *
 * <p>Output: JMH's SampleTime distribution of submit-to-completion latency (p0.99, p0.999), and, at
 * the end of each trial, the pool's own {@code pool.queue.wait} and {@code pool.service}
 * percentiles over the last measurement iteration, and each worker's busy ratio.
 *
 * <p>Keys: UNIFORM picks any partition; SKEWED sends 80% of tasks to the first 20% of partitions.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 3)
@Measurement(iterations = 3, time = 4)
@Fork(1)
@Threads(16)
@State(Scope.Benchmark)
public class TaskPoolBenchmark {

  /** Which worker a free partition goes to. */
  public enum Selection { HASHED, LEAST_LOADED }

  /** How clients choose partitions. */
  public enum Keys { UNIFORM, SKEWED }

  private static final int PUT = 1;
  private static final int GET = 2;

  @Param({"HASHED", "LEAST_LOADED"})
  public Selection mode;

  @Param({"UNIFORM", "SKEWED"})
  public Keys keys;

  @Param("120")
  public int partitions;

  @Param("8")
  public int workers;

  @Param("20000")
  public long putTokens;

  @Param("5000")
  public long getTokens;

  @Param("0")
  public long putParkMicros;

  private TaskPool pool;
  private MetricRegistry registry;
  private ClearableReservoir queueWait;
  private ClearableReservoir service;
  private int hotPartitions;

  @Setup(Level.Trial)
  public void startPool() {
    registry = new MetricRegistry();
    queueWait = new ClearableReservoir();
    service = new ClearableReservoir();
    // registered first, so the pool records into these rather than into default reservoirs
    registry.register(PoolMetrics.QUEUE_WAIT, new Timer(queueWait));
    registry.register(PoolMetrics.SERVICE, new Timer(service));
    PoolConfig config = PoolConfig.builder()
        .workers(workers)
        .selector(mode == Selection.HASHED ? new HashedWorkerSelector() : new LeastLoadedWorkerSelector())
        .busyRatioWindowMs(1000)
        .build();
    pool = TaskPool.create(config, Clock.systemUTC(), registry, true);
    hotPartitions = Math.max(1, partitions / 5);
  }

  /** Keeps only the last iteration's samples in the pool's timers. */
  @Setup(Level.Iteration)
  public void clearPoolTimers() {
    queueWait.clear();
    service.clear();
  }

  @TearDown(Level.Trial)
  public void stopPool() {
    StringBuilder busy = new StringBuilder();
    for (Worker worker : pool.workers()) {
      busy.append(String.format(Locale.ROOT, " %.2f", worker.busyRatio()));
    }
    System.out.printf(Locale.ROOT, "%n[pool %s %s] queue wait us: %s | service us: %s | rejected %d | busy ratio per worker:%s%n",
        mode, keys, describe(queueWait.getSnapshot()), describe(service.getSnapshot()),
        registry.meter(PoolMetrics.REJECTED).getCount(), busy);
    pool.close();
  }

  private static String describe(Snapshot s) {
    return String.format(Locale.ROOT, "n=%d mean=%.1f p50=%.1f p75=%.1f p99=%.1f p999=%.1f max=%.1f",
        s.size(), s.getMean() / 1e3, s.getMedian() / 1e3, s.get75thPercentile() / 1e3,
        s.get99thPercentile() / 1e3, s.get999thPercentile() / 1e3, s.getMax() / 1e3);
  }

  /** One client: its own random stream. */
  @State(Scope.Thread)
  public static class Client {
    final SplittableRandom random = new SplittableRandom(Thread.currentThread().getId() * 0x9E3779B97F4A7C15L);
  }

  /** Submits one put or get and waits for it to complete: the latency a request would see. */
  @Benchmark
  public long putOrGet(Client client) {
    SplittableRandom random = client.random;
    int partition;
    if (keys == Keys.SKEWED && random.nextInt(10) < 8) {
      partition = random.nextInt(hotPartitions);
    } else if (keys == Keys.SKEWED) {
      partition = hotPartitions + random.nextInt(partitions - hotPartitions);
    } else {
      partition = random.nextInt(partitions);
    }
    boolean put = random.nextBoolean();
    SimulatedRequest task = new SimulatedRequest(partition, put ? PUT : GET,
        put ? putTokens : getTokens, put ? putParkMicros : 0, Thread.currentThread());
    while (pool.submit(task) == Admission.REJECTED_FULL) Thread.onSpinWait();
    return task.await();
  }

  /** A request whose service is simulated; the client parks until a worker completes it. */
  static final class SimulatedRequest implements Task {
    private final Integer partition;
    private final int priority;
    private final long tokens;
    private final long parkMicros;
    private final Thread client;
    private volatile long result;
    private volatile boolean done;

    SimulatedRequest(int partition, int priority, long tokens, long parkMicros, Thread client) {
      this.partition = partition;
      this.priority = priority;
      this.tokens = tokens;
      this.parkMicros = parkMicros;
      this.client = client;
    }

    @Override
    public Object key() {
      return partition;
    }

    @Override
    public int priority() {
      return priority;
    }

    @Override
    public long deadlineMs() {
      return NO_DEADLINE;
    }

    @Override
    public void run() {
      Blackhole.consumeCPU(tokens);
      if (parkMicros > 0) LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(parkMicros));
      complete(tokens);
    }

    @Override
    public void expire() {
      complete(-1);
    }

    @Override
    public void fail(Throwable cause) {
      complete(-2);
    }

    private void complete(long value) {
      result = value;
      done = true;
      LockSupport.unpark(client);
    }

    long await() {
      while (!done) LockSupport.park(this);
      return result;
    }
  }

  /**
   * A reservoir of every sample since the last {@link #clear()} (bounded to the last minute), so
   * the pool's percentiles at teardown cover the last measurement iteration only.
   */
  static final class ClearableReservoir implements Reservoir {
    private volatile SlidingTimeWindowArrayReservoir delegate = fresh();

    private static SlidingTimeWindowArrayReservoir fresh() {
      return new SlidingTimeWindowArrayReservoir(60, TimeUnit.SECONDS);
    }

    void clear() {
      delegate = fresh();
    }

    @Override
    public int size() {
      return delegate.size();
    }

    @Override
    public void update(long value) {
      delegate.update(value);
    }

    @Override
    public Snapshot getSnapshot() {
      return delegate.getSnapshot();
    }
  }
}
