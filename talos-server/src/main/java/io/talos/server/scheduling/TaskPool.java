package io.talos.server.scheduling;

import com.codahale.metrics.MetricRegistry;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A key-affinity task pool with priority classes, deadlines, group commit and back-pressure.
 *
 * <p><b>Choosing a worker.</b> The pool keeps a key table: for each key with tasks waiting or
 * running, its worker and how many. A task whose key is in the table goes to that worker
 * (affinity); otherwise the configured {@link WorkerSelector} chooses (fewest waiting tasks, ties
 * to the lowest id, or the hash of the key) and the key enters the table. The entry is
 * decremented once each task has been answered and removed at zero, so a key moves only when
 * nothing of it is waiting or running. Choosing and enqueueing happen inside the key's table entry
 * update ({@link ConcurrentHashMap#compute}), atomically with respect to every other submit and
 * release of the same key: two tasks of one key can never be on two workers at once.
 *
 * <p><b>Guarantees.</b> Tasks of one key never run concurrently; tasks of one key and one priority
 * class start in submission order (group commit only merges tasks that would be served next for
 * their key, see {@link MergeableTask}); an accepted task gets exactly one of run (or one batch
 * run), {@link Task#expire()} or {@link Task#fail(Throwable)} (plus {@code fail} if its run threw).
 * There is no ordering between priority classes or between keys.
 *
 * <p><b>Back-pressure.</b> At most {@link PoolConfig#maxWaitingTasks()} tasks wait in the whole
 * pool; {@link #submit} refuses more with {@link Admission#REJECTED_FULL} at once, never blocking
 * and never queueing without limit.
 *
 * <p><b>Deadlines.</b> A task dequeued after its deadline is {@linkplain Task#expire() expired}
 * without running; one that has started is never interrupted.
 *
 * <p><b>Closing.</b> {@link #close()} refuses new submissions ({@link Admission#REJECTED_CLOSED}),
 * fails every waiting task with a {@link TaskPoolClosedException} (the request was not served, the
 * client may retry; draining instead could hold shutdown for up to the longest deadline), then
 * waits up to {@link PoolConfig#closeTimeoutMs()} for running tasks to finish. Running tasks are
 * not interrupted (interrupting a file-system write can break the stream).
 *
 * <p><b>Time.</b> Deadlines use {@code clock.millis()}; queue wait, service time and busy ratio
 * use {@code clock.instant()} (microsecond resolution with the system clock, clamped at zero if
 * the clock steps back). Tests inject a clock they move by hand.
 *
 * <p><b>Stepping.</b> Created without threads, the pool does nothing by itself: tests call {@link
 * Worker#runOnce()}. Created with threads, each worker thread blocks on its lock's condition when
 * idle.
 *
 * <p>Thread-safety: {@link #submit}, {@link #close} and the read methods are safe from any thread.
 */
public final class TaskPool implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TaskPool.class);

  private final PoolConfig config;
  private final Clock clock;
  private final PoolMetrics metrics;
  private final List<Worker> workers;
  private final List<Thread> threads;
  private final ConcurrentHashMap<Object, KeyState> keys = new ConcurrentHashMap<>();
  private final AtomicInteger waiting = new AtomicInteger();
  private volatile boolean closed;
  /** Notified when the last task of the pool is answered ({@link #awaitIdle}). */
  private final Object idle = new Object();

  /** A key's entry in the key table; mutated only inside that entry's {@code compute}. */
  private static final class KeyState {
    final Worker worker;
    volatile int tasks; // waiting + running

    KeyState(Worker worker) {
      this.worker = worker;
    }
  }

  private TaskPool(PoolConfig config, Clock clock, MetricRegistry registry, boolean startThreads) {
    this.config = Objects.requireNonNull(config, "config");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.metrics = new PoolMetrics(Objects.requireNonNull(registry, "metrics"));
    List<Worker> list = new ArrayList<>(config.workers());
    for (int id = 0; id < config.workers(); id++) list.add(new Worker(id, this, startThreads));
    this.workers = Collections.unmodifiableList(list);
    List<Thread> started = new ArrayList<>();
    if (startThreads) {
      for (Worker worker : workers) {
        Thread thread = new Thread(worker::runLoop, "talos-pool-worker-" + worker.id());
        thread.setDaemon(true);
        started.add(thread);
      }
    }
    this.threads = Collections.unmodifiableList(started);
  }

  /**
   * Creates a pool and registers its metrics in {@code metrics}.
   *
   * @param clock the source of deadlines and durations
   * @param startThreads true to start one thread per worker (a server); false for a pool that only
   *     runs when {@link Worker#runOnce()} is called (tests)
   */
  public static TaskPool create(PoolConfig config, Clock clock, MetricRegistry metrics,
      boolean startThreads) {
    TaskPool pool = new TaskPool(config, clock, metrics, startThreads);
    pool.metrics.registerGauges(pool);
    for (Thread thread : pool.threads) thread.start();
    return pool;
  }

  /**
   * Offers a task to the pool; never blocks (beyond the short locks of the key's table entry and of
   * the chosen worker's queue) and never throws for an expected outcome.
   *
   * @return {@link Admission#ACCEPTED} if queued, after which the pool answers through the task;
   *     otherwise the task is untouched and the caller answers
   * @throws NullPointerException if the task or its key is null
   * @throws IllegalArgumentException if its priority is not a class index
   */
  public Admission submit(Task task) {
    Object key = Objects.requireNonNull(Objects.requireNonNull(task, "task").key(), "task.key()");
    int priority = task.priority();
    if (priority < 0 || priority >= config.priorityClasses().size()) {
      throw new IllegalArgumentException("task priority " + priority + " is not a class index of "
          + config.priorityClasses());
    }
    long taskDeadlineMs = task.deadlineMs();
    if (closed) return reject(Admission.REJECTED_CLOSED);
    if (waiting.incrementAndGet() > config.maxWaitingTasks()) {
      waiting.decrementAndGet();
      return reject(Admission.REJECTED_FULL);
    }
    boolean[] accepted = new boolean[1];
    try {
      long nowMs = clock.millis();
      long deadlineMs = taskDeadlineMs > 0 ? taskDeadlineMs : saturatedAdd(nowMs, config.defaultDeadlineMs());
      QueuedTask queued = new QueuedTask(task, key, priority, deadlineMs, nowNanos());
      keys.compute(key, (k, state) -> {
        Worker worker = state != null ? state.worker : workers.get(select(k));
        if (!worker.enqueue(queued)) return state; // closed meanwhile; a null state stays absent
        KeyState updated = state != null ? state : new KeyState(worker);
        updated.tasks++;
        accepted[0] = true;
        return updated;
      });
    } finally {
      if (!accepted[0]) waiting.decrementAndGet();
    }
    return accepted[0] ? Admission.ACCEPTED : reject(Admission.REJECTED_CLOSED);
  }

  /**
   * As {@link #submit}, except that a task whose key has nothing waiting or running, and whose
   * worker (the one the selector chooses) is idle, is served at once on the calling thread instead
   * of waking that worker: the worker is lent to the caller for the run ({@link Worker}, "Lending")
   * and the key is in the key table meanwhile, so every guarantee of the class holds as if the
   * worker had run it. A lone request thus costs no thread hand-off. The caller then also serves
   * what was queued for that worker during its run, of any key and class, up to {@link
   * PoolConfig#maxLentRuns()} runs in all. Otherwise the task is queued as by {@link #submit}.
   *
   * <p>Only for callers that may block for those runs (their storage work included): a request
   * thread, never an event loop or a timer.
   *
   * @return {@link Admission#ACCEPTED} once the task and the runs after it have been served here,
   *     or the task queued; otherwise as {@link #submit}
   */
  public Admission submitOrRun(Task task) {
    Object key = Objects.requireNonNull(Objects.requireNonNull(task, "task").key(), "task.key()");
    int priority = task.priority();
    if (closed || keys.containsKey(key) || priority < 0 || priority >= config.priorityClasses().size()) {
      return submit(task);
    }
    long nowMs = clock.millis();
    long taskDeadlineMs = task.deadlineMs();
    long deadlineMs = taskDeadlineMs > 0 ? taskDeadlineMs : saturatedAdd(nowMs, config.defaultDeadlineMs());
    if (nowMs > deadlineMs) return submit(task); // the worker expires it, as any task
    QueuedTask queued = new QueuedTask(task, key, priority, deadlineMs, nowNanos());
    Worker[] lent = new Worker[1];
    keys.compute(key, (k, state) -> {
      if (state != null) return state; // a task of the key came first: queue behind it
      Worker worker = workers.get(select(k));
      if (!worker.tryLend(priority)) return null;
      KeyState entry = new KeyState(worker);
      entry.tasks = 1;
      lent[0] = worker;
      return entry;
    });
    if (lent[0] == null) return submit(task);
    metrics.ranOnCaller.mark();
    lent[0].serveLent(queued); // releases the key when answered, as a worker's run does
    return Admission.ACCEPTED;
  }

  private int select(Object key) {
    int id = config.selector().select(key, workers);
    if (id < 0 || id >= workers.size()) {
      throw new IllegalStateException(config.selector() + " chose worker " + id + " of " + workers.size());
    }
    return id;
  }

  private Admission reject(Admission admission) {
    metrics.rejected.mark();
    return admission;
  }

  private static long saturatedAdd(long a, long b) {
    long sum = a + b;
    return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE : sum;
  }

  /** The workers, by id. */
  public List<Worker> workers() {
    return workers;
  }

  public Worker worker(int id) {
    return workers.get(id);
  }

  /** Tasks waiting in the whole pool (running ones excluded). */
  public int waitingTasks() {
    return waiting.get();
  }

  /** The id of the worker holding tasks of {@code key}, or -1 if none is waiting or running. */
  public int workerOf(Object key) {
    KeyState state = keys.get(key);
    return state == null ? -1 : state.worker.id();
  }

  /** Tasks of {@code key} waiting or running. */
  public int tasksOf(Object key) {
    KeyState state = keys.get(key);
    return state == null ? 0 : state.tasks;
  }

  int tasksOf(Object key, Worker worker) {
    KeyState state = keys.get(key);
    return state == null || state.worker != worker ? 0 : state.tasks;
  }

  public PoolConfig config() {
    return config;
  }

  public boolean isClosed() {
    return closed;
  }

  /**
   * Refuses new tasks, fails every waiting task with a {@link TaskPoolClosedException}, removes the
   * gauges and waits up to {@link PoolConfig#closeTimeoutMs()} for the worker threads to finish
   * their running task. Idempotent; safe from any thread, a task's included (its own worker is then
   * not waited for).
   */
  @Override
  public void close() {
    synchronized (this) {
      if (closed) return;
      closed = true;
    }
    TaskPoolClosedException cause = new TaskPoolClosedException();
    for (Worker worker : workers) {
      List<QueuedTask> drained = worker.closeAndDrain();
      for (QueuedTask task : drained) {
        Worker.failQuietly(task.task, cause);
        release(task.key, 1);
      }
    }
    metrics.removeGauges();
    long deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.closeTimeoutMs());
    for (Thread thread : threads) {
      if (thread == Thread.currentThread()) continue; // closed by one of its own tasks
      try {
        long leftMs = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
        if (leftMs > 0) thread.join(leftMs);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
      if (thread.isAlive()) {
        LOG.warn("{} still running a task {} ms after close(); leaving it", thread.getName(),
            config.closeTimeoutMs());
      }
    }
  }

  // --- for the workers

  Clock clock() {
    return clock;
  }

  PoolMetrics metrics() {
    return metrics;
  }

  long nowNanos() {
    Instant now = clock.instant();
    return now.getEpochSecond() * 1_000_000_000L + now.getNano();
  }

  void dequeued(int tasks) {
    waiting.addAndGet(-tasks);
  }

  /** {@code tasks} tasks of {@code key} have been answered: the key may move once none is left. */
  void release(Object key, int tasks) {
    KeyState left = keys.computeIfPresent(key, (k, state) -> {
      state.tasks -= tasks;
      return state.tasks > 0 ? state : null;
    });
    if (left == null && keys.isEmpty()) {
      synchronized (idle) {
        idle.notifyAll();
      }
    }
  }

  /**
   * Waits until no task is waiting or running (every accepted task answered), at most {@code
   * timeoutMs}. Tasks submitted meanwhile are waited for too. A clean shutdown's drain calls it
   * after new requests are refused.
   *
   * @return true if the pool was idle in time
   */
  public boolean awaitIdle(long timeoutMs) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    synchronized (idle) {
      while (!keys.isEmpty()) {
        long leftMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        if (leftMs <= 0) return false;
        idle.wait(leftMs);
      }
      return true;
    }
  }

  @Override
  public String toString() {
    return "TaskPool{" + config + ", waiting=" + waiting.get() + ", keys=" + keys.size()
        + (closed ? ", closed" : "") + "}";
  }
}
