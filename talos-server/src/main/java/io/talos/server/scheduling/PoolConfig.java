package io.talos.server.scheduling;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Settings of a {@link TaskPool}, validated together by {@link Builder#build()}: every problem is
 * reported in one {@link IllegalArgumentException} that names each setting, e.g. {@code
 * "workers=0 must be between 1 and 4096"}.
 *
 * <table>
 *   <caption>Settings and defaults</caption>
 *   <tr><th>setting</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>workers</td><td>8</td><td>worker threads; a fixed number rather than one per core
 *       because tasks mostly wait on the file system (flush to the HDFS pipeline), not on CPU, and
 *       a default that does not depend on the machine keeps the configuration file stable</td></tr>
 *   <tr><td>maxWaitingTasks</td><td>10000</td><td>tasks waiting in the whole pool (running ones
 *       excluded); beyond it submissions are {@link Admission#REJECTED_FULL}</td></tr>
 *   <tr><td>priorityClasses</td><td>admin, put, get</td><td>class names in priority order:
 *       admin work is rare and cheap, puts come next (producers hold their buffers until
 *       acknowledged), gets last (cheaper to retry). Priority picks the first run of a worker whose
 *       queues were empty; while several classes have tasks waiting they are served in turn (see
 *       {@link Worker}), so a saturated class cannot starve another</td></tr>
 *   <tr><td>maxBatchCount</td><td>64</td><td>most tasks in one group-commit batch</td></tr>
 *   <tr><td>maxBatchBytes</td><td>4 MiB</td><td>most bytes ({@link MergeableTask#sizeBytes()})
 *       in one batch; a task larger than this alone still runs, alone</td></tr>
 *   <tr><td>defaultDeadlineMs</td><td>10000</td><td>deadline after submission of a task that
 *       gives none ({@link Task#NO_DEADLINE})</td></tr>
 *   <tr><td>selector</td><td>{@link LeastLoadedWorkerSelector}</td><td>worker choice for a free
 *       key; {@link HashedWorkerSelector} is the old model</td></tr>
 *   <tr><td>closeTimeoutMs</td><td>30000</td><td>how long {@link TaskPool#close()} waits for the
 *       running tasks to finish</td></tr>
 *   <tr><td>busyRatioWindowMs</td><td>10000</td><td>window of the {@code
 *       pool.worker.<i>.busy.ratio} gauges</td></tr>
 *   <tr><td>maxLentRuns</td><td>2</td><td>most runs (a task or a batch) a submitting thread
 *       serves on an idle worker lent to it ({@link TaskPool#submitOrRun}): its own task, then what
 *       was queued for that worker meanwhile (a long-poll get its put woke), before the worker's
 *       own thread takes over; 1: its own task only</td></tr>
 *   <tr><td>threadSlices</td><td>{@link ThreadSlicePolicy#NONE}</td><td>the scheduler slice
 *       each worker thread moves to before each task; the pool does not start or close it</td></tr>
 * </table>
 *
 * <p>Thread-safety: immutable.
 */
public final class PoolConfig {
  public static final int DEFAULT_WORKERS = 8;
  public static final int MAX_WORKERS = 4096;
  public static final int DEFAULT_MAX_WAITING_TASKS = 10_000;
  public static final List<String> DEFAULT_PRIORITY_CLASSES = List.of("admin", "put", "get");
  public static final int DEFAULT_MAX_BATCH_COUNT = 64;
  public static final long DEFAULT_MAX_BATCH_BYTES = 4L * 1024 * 1024;
  public static final long DEFAULT_DEADLINE_MS = 10_000L;
  public static final long DEFAULT_CLOSE_TIMEOUT_MS = 30_000L;
  public static final long DEFAULT_BUSY_RATIO_WINDOW_MS = 10_000L;
  public static final int DEFAULT_MAX_LENT_RUNS = 2;
  public static final int MAX_LENT_RUNS = 1_000;

  private final int workers;
  private final int maxWaitingTasks;
  private final List<String> priorityClasses;
  private final int maxBatchCount;
  private final int maxLentRuns;
  private final long maxBatchBytes;
  private final long defaultDeadlineMs;
  private final WorkerSelector selector;
  private final long closeTimeoutMs;
  private final long busyRatioWindowMs;
  private final ThreadSlicePolicy threadSlices;

  private PoolConfig(Builder b) {
    this.workers = b.workers;
    this.maxWaitingTasks = b.maxWaitingTasks;
    this.priorityClasses = List.copyOf(b.priorityClasses);
    this.maxBatchCount = b.maxBatchCount;
    this.maxLentRuns = b.maxLentRuns;
    this.maxBatchBytes = b.maxBatchBytes;
    this.defaultDeadlineMs = b.defaultDeadlineMs;
    this.selector = b.selector;
    this.closeTimeoutMs = b.closeTimeoutMs;
    this.busyRatioWindowMs = b.busyRatioWindowMs;
    this.threadSlices = b.threadSlices;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Every setting at its default. */
  public static PoolConfig defaults() {
    return builder().build();
  }

  public int workers() {
    return workers;
  }

  public int maxWaitingTasks() {
    return maxWaitingTasks;
  }

  /** Class names in priority order; a task's {@link Task#priority()} is an index into this list. */
  public List<String> priorityClasses() {
    return priorityClasses;
  }

  /**
   * The {@link Task#priority()} of the class {@code name}.
   *
   * @throws IllegalArgumentException if no class has that name
   */
  public int priorityOf(String name) {
    int index = priorityClasses.indexOf(name);
    if (index < 0) {
      throw new IllegalArgumentException(
          "Unknown priority class '" + name + "': priorityClasses=" + priorityClasses);
    }
    return index;
  }

  public int maxBatchCount() {
    return maxBatchCount;
  }

  /** Most runs a thread serves on a worker lent to it, its own task's included. */
  public int maxLentRuns() {
    return maxLentRuns;
  }

  public long maxBatchBytes() {
    return maxBatchBytes;
  }

  public long defaultDeadlineMs() {
    return defaultDeadlineMs;
  }

  public WorkerSelector selector() {
    return selector;
  }

  public long closeTimeoutMs() {
    return closeTimeoutMs;
  }

  public long busyRatioWindowMs() {
    return busyRatioWindowMs;
  }

  /** The scheduler slice a worker thread moves to before each task. */
  public ThreadSlicePolicy threadSlices() {
    return threadSlices;
  }

  /** A builder starting from this configuration. */
  public Builder toBuilder() {
    return new Builder()
        .workers(workers)
        .maxWaitingTasks(maxWaitingTasks)
        .priorityClasses(priorityClasses)
        .maxBatchCount(maxBatchCount)
        .maxLentRuns(maxLentRuns)
        .maxBatchBytes(maxBatchBytes)
        .defaultDeadlineMs(defaultDeadlineMs)
        .selector(selector)
        .closeTimeoutMs(closeTimeoutMs)
        .busyRatioWindowMs(busyRatioWindowMs)
        .threadSlices(threadSlices);
  }

  @Override
  public String toString() {
    return "PoolConfig{workers=" + workers + ", maxWaitingTasks=" + maxWaitingTasks
        + ", priorityClasses=" + priorityClasses + ", maxBatchCount=" + maxBatchCount
        + ", maxLentRuns=" + maxLentRuns + ", maxBatchBytes=" + maxBatchBytes + ", defaultDeadlineMs=" + defaultDeadlineMs
        + ", selector=" + selector + ", closeTimeoutMs=" + closeTimeoutMs
        + ", busyRatioWindowMs=" + busyRatioWindowMs + ", threadSlices=" + threadSlices + "}";
  }

  /** Not thread-safe; {@link #build()} validates and copies, so a builder can be reused. */
  public static final class Builder {
    private int workers = DEFAULT_WORKERS;
    private int maxWaitingTasks = DEFAULT_MAX_WAITING_TASKS;
    private List<String> priorityClasses = DEFAULT_PRIORITY_CLASSES;
    private int maxBatchCount = DEFAULT_MAX_BATCH_COUNT;
    private int maxLentRuns = DEFAULT_MAX_LENT_RUNS;
    private long maxBatchBytes = DEFAULT_MAX_BATCH_BYTES;
    private long defaultDeadlineMs = DEFAULT_DEADLINE_MS;
    private WorkerSelector selector = new LeastLoadedWorkerSelector();
    private long closeTimeoutMs = DEFAULT_CLOSE_TIMEOUT_MS;
    private long busyRatioWindowMs = DEFAULT_BUSY_RATIO_WINDOW_MS;
    private ThreadSlicePolicy threadSlices = ThreadSlicePolicy.NONE;

    private Builder() {}

    public Builder workers(int workers) {
      this.workers = workers;
      return this;
    }

    public Builder maxWaitingTasks(int maxWaitingTasks) {
      this.maxWaitingTasks = maxWaitingTasks;
      return this;
    }

    /** Class names in priority order, highest first. */
    public Builder priorityClasses(List<String> priorityClasses) {
      this.priorityClasses = priorityClasses;
      return this;
    }

    public Builder priorityClasses(String... priorityClasses) {
      return priorityClasses(List.of(priorityClasses));
    }

    public Builder maxBatchCount(int maxBatchCount) {
      this.maxBatchCount = maxBatchCount;
      return this;
    }

    public Builder maxLentRuns(int maxLentRuns) {
      this.maxLentRuns = maxLentRuns;
      return this;
    }

    public Builder maxBatchBytes(long maxBatchBytes) {
      this.maxBatchBytes = maxBatchBytes;
      return this;
    }

    public Builder defaultDeadlineMs(long defaultDeadlineMs) {
      this.defaultDeadlineMs = defaultDeadlineMs;
      return this;
    }

    public Builder selector(WorkerSelector selector) {
      this.selector = selector;
      return this;
    }

    public Builder closeTimeoutMs(long closeTimeoutMs) {
      this.closeTimeoutMs = closeTimeoutMs;
      return this;
    }

    public Builder busyRatioWindowMs(long busyRatioWindowMs) {
      this.busyRatioWindowMs = busyRatioWindowMs;
      return this;
    }

    public Builder threadSlices(ThreadSlicePolicy threadSlices) {
      this.threadSlices = threadSlices;
      return this;
    }

    /**
     * Validates every setting and returns the configuration.
     *
     * @throws IllegalArgumentException naming every invalid setting and its value
     */
    public PoolConfig build() {
      List<String> errors = new ArrayList<>();
      if (workers < 1 || workers > MAX_WORKERS) {
        errors.add("workers=" + workers + " must be between 1 and " + MAX_WORKERS);
      }
      if (maxWaitingTasks < 1) errors.add("maxWaitingTasks=" + maxWaitingTasks + " must be at least 1");
      if (priorityClasses == null || priorityClasses.isEmpty()) {
        errors.add("priorityClasses=" + priorityClasses + " must name at least one class");
      } else {
        Set<String> seen = new HashSet<>();
        for (String name : priorityClasses) {
          if (name == null || name.isBlank()) {
            errors.add("priorityClasses=" + priorityClasses + " must not contain a blank name");
          } else if (!seen.add(name)) {
            errors.add("priorityClasses=" + priorityClasses + " names '" + name + "' twice");
          }
        }
      }
      if (maxBatchCount < 1) errors.add("maxBatchCount=" + maxBatchCount + " must be at least 1");
      if (maxLentRuns < 1 || maxLentRuns > MAX_LENT_RUNS) {
        errors.add("maxLentRuns=" + maxLentRuns + " must be between 1 and " + MAX_LENT_RUNS);
      }
      if (maxBatchBytes < 1) errors.add("maxBatchBytes=" + maxBatchBytes + " must be at least 1");
      if (defaultDeadlineMs < 1) {
        errors.add("defaultDeadlineMs=" + defaultDeadlineMs + " must be at least 1");
      }
      if (selector == null) errors.add("selector must be set");
      if (closeTimeoutMs < 0) errors.add("closeTimeoutMs=" + closeTimeoutMs + " must be at least 0");
      if (busyRatioWindowMs < 1) {
        errors.add("busyRatioWindowMs=" + busyRatioWindowMs + " must be at least 1");
      }
      if (threadSlices == null) errors.add("threadSlices must be set");
      if (!errors.isEmpty()) {
        throw new IllegalArgumentException("Invalid task pool configuration: " + String.join("; ", errors));
      }
      return new PoolConfig(this);
    }
  }
}
