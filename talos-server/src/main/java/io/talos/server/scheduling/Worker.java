package io.talos.server.scheduling;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One worker of a {@link TaskPool}: a queue per priority class and, in a pool created with
 * threads, one thread serving them. Tasks reach it only through {@link TaskPool#submit(Task)}.
 *
 * <p>Serving order: FIFO within a class; between classes, in turn. A worker that found its queues
 * empty takes the head of the highest-priority non-empty queue; after that it scans the classes
 * starting from the one after the class it served last (wrapping around), so while several
 * classes have tasks waiting each gets one run (a task, a put batch, or an expired head) in turn;
 * a lent run (below) is its class's turn too. Why not strict
 * priority: on a partition under a steady produce a put is waiting whenever a run ends, and a get
 * of that worker (a consumer tailing the partition) then waited for as long as the puts kept
 * coming, up to its deadline; in turn, it waits for at most one run of each other class, and a
 * put that arrives meanwhile joins the next batch. One
 * {@link #runOnce()} serves one dequeued task: it expires it if its deadline has passed ({@code
 * clock.millis() > deadlineMs}), runs it, or, for a {@link MergeableTask}, runs it in one batch
 * with the next same-key tasks that may join (see {@link MergeableTask} for which). A task that
 * throws fails only the tasks of its own run, and the worker goes on.
 *
 * <p><b>Lending.</b> An idle worker (nothing waiting, nothing running) may be lent to the thread
 * that submits a task ({@link TaskPool#submitOrRun}): that thread serves the task itself, exactly
 * as the worker would have (same metrics, same answers), and the worker serves nothing until the
 * loan ends; tasks queued for it meanwhile wait as they would behind a running task. So the
 * worker still serves one task (or batch) at a time, and what holds for its tasks holds for the
 * lent run too. When its task is served the thread goes on with what was queued for the worker
 * meanwhile, taken in the worker's serving order, for at most {@link PoolConfig#maxLentRuns()}
 * runs in all; then the loan ends and the worker's thread is woken for what is still waiting.
 * Why: the usual thing queued during a lent put is a long-polling get of the same partition that
 * the put's append woke; the thread that just answered the put serves it at once, where waking
 * the worker's thread for it cost a thread hand-off (and, with the cores busy, a wait to be
 * scheduled). While the worker is lent its thread is not woken by what is queued.
 *
 * <p>Thread-safety: {@link #id()}, {@link #waitingTasks()}, {@link #isRunning()}, {@link
 * #tasksOf(Object)} and {@link #busyRatio()} may be called from any thread (values are live
 * snapshots). The queues, the loan and the start of a run ({@code running} set) are guarded by
 * the worker's lock, held only to enqueue, to dequeue (and collect a batch), to lend and to close,
 * never while a task runs. {@link #runOnce()} is for pools created without threads and must be
 * called by one thread at a time.
 */
public final class Worker {
  private static final Logger LOG = LoggerFactory.getLogger(Worker.class);

  private final int id;
  private final TaskPool pool;
  private final boolean threaded;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition workAvailable = lock.newCondition();
  private final ArrayDeque<QueuedTask>[] queues; // index = priority class; guarded by lock
  private boolean closed; // guarded by lock
  /**
   * The class of the last run (taken from the queues or lent); the next pick scans the classes
   * from the one after it (see the serving order above). Reset to the last class when a poll finds
   * the queues empty and the worker is not lent, so that an idle worker's next pick starts at the
   * highest class. Guarded by lock.
   */
  private int lastClass;
  /** Lent to a submitting thread that is serving a task ({@link #tryLend}); guarded by lock. */
  private boolean lent;
  private volatile int waiting; // written under lock
  /** Set under the lock when a run starts (dequeued or lent), cleared when it has ended. */
  private volatile boolean running;
  private final BusyRatio busy;

  @SuppressWarnings("unchecked")
  Worker(int id, TaskPool pool, boolean threaded) {
    this.id = id;
    this.pool = pool;
    this.threaded = threaded;
    this.queues = new ArrayDeque[pool.config().priorityClasses().size()];
    for (int i = 0; i < queues.length; i++) queues[i] = new ArrayDeque<>();
    this.lastClass = queues.length - 1;
    this.busy = new BusyRatio(TimeUnit.MILLISECONDS.toNanos(pool.config().busyRatioWindowMs()),
        pool.nowNanos());
  }

  public int id() {
    return id;
  }

  /** Tasks waiting in this worker's queues (the one running, if any, excluded). */
  public int waitingTasks() {
    return waiting;
  }

  /** Whether the worker is serving a task or a batch now. */
  public boolean isRunning() {
    return running;
  }

  /** Tasks of {@code key} waiting or running on this worker. */
  public int tasksOf(Object key) {
    return pool.tasksOf(key, this);
  }

  /** Fraction of the last {@link PoolConfig#busyRatioWindowMs()} window spent serving tasks. */
  public double busyRatio() {
    return busy.ratio(pool.nowNanos());
  }

  /**
   * Serves the next task, or the next batch, if any is waiting; never blocks waiting for one.
   *
   * @return whether there was anything to serve (an expiry counts)
   * @throws IllegalStateException if the pool runs its own threads
   */
  public boolean runOnce() {
    if (threaded) throw new IllegalStateException("runOnce() is for pools created without threads");
    Work work = poll(false);
    if (work == null) return false;
    serve(work);
    return true;
  }

  /**
   * The body of this worker's thread: serves tasks until the pool closes. An unexpected error
   * (tasks' own failures are handled in {@link #serve}) is logged and the loop goes on: a dead
   * worker would leave every request of the partitions pinned to it unanswered.
   */
  void runLoop() {
    while (true) {
      try {
        Work work = poll(true);
        if (work == null) return;
        pool.config().threadSlices().applyToCurrentThread();
        serve(work);
      } catch (OutOfMemoryError e) {
        // Not swallowed silently: bin/talos runs the JVM with -XX:+ExitOnOutOfMemoryError, so the
        // process ends here; embedded, the loop goes on (a dead worker would strand its partitions).
        LOG.error("worker {} ran out of memory", id);
      } catch (Throwable t) {
        LOG.error("worker {} hit an unexpected error and goes on serving", id, t);
      }
    }
  }

  /** Queues {@code task}; false if the worker is closed. Called within the key's table entry lock. */
  boolean enqueue(QueuedTask task) {
    lock.lock();
    try {
      if (closed) return false;
      queues[task.priority].addLast(task);
      waiting++;
      // A lent worker's thread could not take it: the loan serves it or wakes the thread at its end.
      if (!lent) workAvailable.signal();
      return true;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Lends this worker to the calling thread if it is idle: not closed, not lent, nothing waiting
   * and nothing running, for a task of class {@code priority}. The caller must then call {@link
   * #serveLent} at once. Called within the key's table entry lock, like {@link #enqueue}.
   */
  boolean tryLend(int priority) {
    lock.lock();
    try {
      if (closed || lent || running || waiting > 0) return false;
      lent = true;
      running = true;
      lastClass = priority; // the lent run is its class's turn, as if the worker had taken it
      return true;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Serves {@code task} on the calling thread, to which this worker was lent ({@link #tryLend}),
   * then what was queued for this worker meanwhile, up to {@link PoolConfig#maxLentRuns()} runs
   * in all; then ends the loan and wakes the worker thread for what is still waiting.
   */
  void serveLent(QueuedTask task) {
    int maxRuns = pool.config().maxLentRuns();
    try {
      serve(new Work(task, false, task.task instanceof MergeableTask ? List.of(task) : null, null));
      // The runs of queued tasks are other requests' work: what they throw (serve answers their
      // tasks' own failures; this is the unexpected) is logged here, as the worker's thread would,
      // and never reaches the caller, whose own request is answered already.
      Work work;
      for (int runs = 1; runs < maxRuns && (work = takeWhileLent()) != null; runs++) {
        pool.metrics().ranQueuedOnCaller.mark();
        try {
          serve(work);
        } catch (Throwable t) {
          LOG.error("worker {} (lent) hit an unexpected error serving queued work; the loan ends", id, t);
          break;
        }
      }
    } finally {
      lock.lock();
      try {
        lent = false;
        // nothing waiting: the next pick is by priority, as after the thread's own poll found nothing
        if (waiting == 0) lastClass = queues.length - 1;
        if (waiting > 0 || closed) workAvailable.signal();
      } finally {
        lock.unlock();
      }
    }
  }

  /**
   * The next work waiting for this lent worker, as its thread would take it; null if none.
   * Closing empties the queues and refuses more, so a closed worker has none.
   */
  private Work takeWhileLent() {
    lock.lock();
    try {
      return takeNext();
    } finally {
      lock.unlock();
    }
  }

  /** Stops accepting, wakes the thread and returns what was waiting, class by class. */
  List<QueuedTask> closeAndDrain() {
    lock.lock();
    try {
      closed = true;
      List<QueuedTask> drained = new ArrayList<>(waiting);
      for (ArrayDeque<QueuedTask> queue : queues) {
        drained.addAll(queue);
        queue.clear();
      }
      waiting = 0;
      pool.dequeued(drained.size());
      workAvailable.signalAll();
      return drained;
    } finally {
      lock.unlock();
    }
  }

  /** What one serve handles: a head task, the batch it heads, same-key tasks expired on the way. */
  private static final class Work {
    final QueuedTask head;
    final boolean headExpired;
    final List<QueuedTask> batch; // null unless the head is mergeable and not expired
    final List<QueuedTask> expiredBehind; // null if none

    Work(QueuedTask head, boolean headExpired, List<QueuedTask> batch,
        List<QueuedTask> expiredBehind) {
      this.head = head;
      this.headExpired = headExpired;
      this.batch = batch;
      this.expiredBehind = expiredBehind;
    }

    int size() {
      return (batch == null ? 1 : batch.size())
          + (expiredBehind == null ? 0 : expiredBehind.size());
    }
  }

  private Work poll(boolean block) {
    lock.lock();
    try {
      while (true) {
        if (closed) return null;
        if (!lent) {
          Work work = takeNext();
          if (work != null) return work;
          lastClass = queues.length - 1; // nothing waiting: the next pick is by priority
        }
        if (!block) return null;
        try {
          workAvailable.await();
        } catch (InterruptedException e) {
          // close() does not interrupt; an interrupt from elsewhere is dropped rather than left
          // set for the next task's I/O to trip on
        }
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Under the lock: the next work in serving order (the classes in turn after the last one
   * served), marked running; null if nothing waits.
   */
  private Work takeNext() {
    for (int k = 0; k < queues.length; k++) {
      int i = (lastClass + 1 + k) % queues.length;
      ArrayDeque<QueuedTask> queue = queues[i];
      QueuedTask head = queue.pollFirst();
      if (head != null) {
        Work work = collect(head, queue);
        waiting -= work.size();
        pool.dequeued(work.size());
        running = true;
        lastClass = i;
        return work;
      }
    }
    return null;
  }

  /** Under the lock: the work headed by {@code head}, just taken from {@code queue}. */
  private Work collect(QueuedTask head, ArrayDeque<QueuedTask> queue) {
    long nowMs = pool.clock().millis();
    if (nowMs > head.deadlineMs) return new Work(head, true, null, null);
    if (!(head.task instanceof MergeableTask)) return new Work(head, false, null, null);

    MergeableTask<?> first = (MergeableTask<?>) head.task;
    PoolConfig config = pool.config();
    List<QueuedTask> batch = new ArrayList<>();
    List<QueuedTask> expired = null;
    batch.add(head);
    long bytes = first.sizeBytes();
    // This worker holds every task of the key and runs none but head, so the key's count less one
    // bounds the same-key tasks in the queues (a submit racing in may make it one more): stop the
    // scan once all have been seen.
    int sameKeyLeft = pool.tasksOf(head.key) - 1;
    Iterator<QueuedTask> it = queue.iterator();
    while (sameKeyLeft > 0 && batch.size() < config.maxBatchCount() && it.hasNext()) {
      QueuedTask next = it.next();
      if (!next.key.equals(head.key)) continue;
      sameKeyLeft--;
      if (nowMs > next.deadlineMs) {
        it.remove();
        if (expired == null) expired = new ArrayList<>();
        expired.add(next);
        continue;
      }
      if (!(next.task instanceof MergeableTask) || !first.canMergeWith(next.task)) break;
      long size = ((MergeableTask<?>) next.task).sizeBytes();
      if (bytes + size > config.maxBatchBytes()) break;
      it.remove();
      batch.add(next);
      bytes += size;
    }
    return new Work(head, false, batch, expired);
  }

  private void serve(Work work) {
    long startNanos = pool.nowNanos();
    PoolMetrics metrics = pool.metrics();
    busy.busy(startNanos);
    try {
      if (work.expiredBehind != null) {
        for (QueuedTask task : work.expiredBehind) expire(task, startNanos);
      }
      if (work.headExpired) {
        expire(work.head, startNanos);
      } else if (work.batch != null) {
        runBatch(work.batch, startNanos);
      } else {
        run(work.head, startNanos);
      }
    } finally {
      long endNanos = pool.nowNanos();
      if (!work.headExpired) metrics.service.update(Math.max(0, endNanos - startNanos), TimeUnit.NANOSECONDS);
      busy.idle(endNanos);
      running = false;
      // only now may the key move to another worker: its tasks here are all answered
      pool.release(work.head.key, work.size());
    }
  }

  private void expire(QueuedTask task, long startNanos) {
    recordWait(task, startNanos);
    pool.metrics().expired.mark();
    try {
      task.task.expire();
    } catch (Throwable t) {
      LOG.warn("worker {}: expire() of task {} threw", id, task.task, t);
    }
  }

  private void run(QueuedTask task, long startNanos) {
    recordWait(task, startNanos);
    try {
      task.task.run();
    } catch (Throwable t) {
      fail(task, t);
    }
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private void runBatch(List<QueuedTask> batch, long startNanos) {
    List tasks = new ArrayList<>(batch.size());
    for (QueuedTask task : batch) {
      recordWait(task, startNanos);
      tasks.add(task.task);
    }
    pool.metrics().batchSize.update(batch.size());
    try {
      ((MergeableTask) batch.get(0).task).runBatch(tasks);
    } catch (Throwable t) {
      for (QueuedTask task : batch) fail(task, t);
    }
  }

  private void fail(QueuedTask task, Throwable cause) {
    pool.metrics().failed.mark();
    LOG.debug("worker {}: task {} failed", id, task.task, cause);
    failQuietly(task.task, cause);
  }

  /** Calls {@code task.fail(cause)}, logging what it throws: one bad task never stops a worker. */
  static void failQuietly(Task task, Throwable cause) {
    try {
      task.fail(cause);
    } catch (Throwable t) {
      LOG.warn("fail() of task {} threw", task, t);
    }
  }

  private void recordWait(QueuedTask task, long startNanos) {
    pool.metrics().queueWait.update(Math.max(0, startNanos - task.submittedNanos), TimeUnit.NANOSECONDS);
  }

  @Override
  public String toString() {
    return "Worker{id=" + id + ", waiting=" + waiting + ", running=" + running + "}";
  }
}
