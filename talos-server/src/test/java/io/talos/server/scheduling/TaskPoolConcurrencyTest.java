package io.talos.server.scheduling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.codahale.metrics.MetricRegistry;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

/**
 * Real worker threads and real submitter threads: per-key order, no two tasks of a key at once and
 * exactly one answer per accepted task, under back-pressure and across close().
 */
class TaskPoolConcurrencyTest {
  private static final int KEYS = 40;
  private static final int PUT = 1;
  private static final int GET = 2;

  /** What every task of one test shares: the checks made while tasks run. */
  private static final class Checks {
    final AtomicIntegerArray running = new AtomicIntegerArray(KEYS);
    /** Last sequence number run, by "submitter/key/priority". */
    final Map<String, Integer> lastSeq = new ConcurrentHashMap<>();
    final Queue<String> violations = new ConcurrentLinkedQueue<>();
    final AtomicInteger answered = new AtomicInteger();
    final CountDownLatch allAnswered;

    Checks(int tasks) {
      allAnswered = new CountDownLatch(tasks);
    }

    void enter(int key) {
      if (running.incrementAndGet(key) != 1) violations.add("two tasks of key " + key + " ran at once");
    }

    void exit(int key) {
      running.decrementAndGet(key);
    }

    void ran(OrderedGet task) {
      String stream = task.submitter + "/" + task.key + "/" + task.priority;
      Integer previous = lastSeq.put(stream, task.seq);
      if (previous != null && previous >= task.seq) {
        violations.add(stream + ": " + task.seq + " ran after " + previous);
      }
    }

    void answer(OrderedGet task) {
      if (task.answers.incrementAndGet() != 1) violations.add(task + " answered twice");
      answered.incrementAndGet();
      allAnswered.countDown();
    }
  }

  private static class OrderedGet implements Task {
    final Checks checks;
    final int submitter;
    final int key;
    final int priority;
    final int seq;
    final AtomicInteger answers = new AtomicInteger();
    volatile Throwable failure;

    OrderedGet(Checks checks, int submitter, int key, int priority, int seq) {
      this.checks = checks;
      this.submitter = submitter;
      this.key = key;
      this.priority = priority;
      this.seq = seq;
    }

    @Override
    public Object key() {
      return key;
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
      checks.enter(key);
      checks.ran(this);
      checks.exit(key);
      checks.answer(this);
    }

    @Override
    public void expire() {
      checks.violations.add(this + " expired");
      checks.answer(this);
    }

    @Override
    public void fail(Throwable cause) {
      failure = cause;
      checks.answer(this);
    }

    @Override
    public String toString() {
      return "task " + submitter + "/" + key + "/" + priority + "#" + seq;
    }
  }

  private static final class OrderedPut extends OrderedGet implements MergeableTask<OrderedPut> {
    OrderedPut(Checks checks, int submitter, int key, int seq) {
      super(checks, submitter, key, PUT, seq);
    }

    @Override
    public long sizeBytes() {
      return 100;
    }

    @Override
    public boolean canMergeWith(Task next) {
      return next instanceof OrderedPut;
    }

    @Override
    public void runBatch(List<OrderedPut> batch) {
      checks.enter(key);
      for (OrderedPut put : batch) {
        if (!put.key().equals(key)) checks.violations.add("batch mixes keys " + key + " and " + put.key);
        checks.ran(put);
      }
      checks.exit(key);
      for (OrderedPut put : batch) checks.answer(put);
    }

    @Override
    public void run() {
      checks.violations.add(this + ": run() called on a mergeable task");
    }
  }

  /** Tasks of one submitter, in the order it submits them. */
  private static List<OrderedGet> tasksOf(Checks checks, int submitter, int count) {
    Random random = new Random(42 + submitter);
    Map<String, Integer> seqs = new ConcurrentHashMap<>();
    List<OrderedGet> tasks = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      int key = random.nextInt(10) < 7 ? random.nextInt(KEYS / 4) : random.nextInt(KEYS); // skewed
      boolean put = random.nextBoolean();
      int seq = seqs.merge(key + "/" + put, 1, Integer::sum);
      tasks.add(put ? new OrderedPut(checks, submitter, key, seq) : new OrderedGet(checks, submitter, key, GET, seq));
    }
    return tasks;
  }

  private static TaskPool threadedPool(MetricRegistry registry, WorkerSelector selector) {
    PoolConfig config = PoolConfig.builder().workers(4).maxWaitingTasks(64).maxBatchCount(8)
        .selector(selector).build();
    return TaskPool.create(config, Clock.systemUTC(), registry, true);
  }

  @Test
  void shouldKeepPerKeyOrderAndAnswerEachTaskOnceUnderConcurrentSubmits() throws Exception {
    for (WorkerSelector selector : List.of(new LeastLoadedWorkerSelector(), new HashedWorkerSelector())) {
      keepsPerKeyOrder(selector, false);
    }
  }

  @Test
  void shouldKeepPerKeyOrderWhenSubmittersServeIdleKeysThemselves() throws Exception {
    for (WorkerSelector selector : List.of(new LeastLoadedWorkerSelector(), new HashedWorkerSelector())) {
      MetricRegistry registry = keepsPerKeyOrder(selector, true);
      assertTrue(registry.meter(PoolMetrics.RAN_ON_CALLER).getCount() > 0, selector + ": no task ran on its submitter");
    }
  }

  /** Submitters submit (or, {@code onCaller}, submitOrRun) concurrently; checks order and answers. */
  private static MetricRegistry keepsPerKeyOrder(WorkerSelector selector, boolean onCaller) throws Exception {
    int submitters = 6;
    int perSubmitter = 5_000;
    Checks checks = new Checks(submitters * perSubmitter);
    MetricRegistry registry = new MetricRegistry();
    List<List<OrderedGet>> all = new ArrayList<>();
    TaskPool pool = threadedPool(registry, selector);
    try {
      List<Thread> threads = new ArrayList<>();
      for (int s = 0; s < submitters; s++) {
        List<OrderedGet> tasks = tasksOf(checks, s, perSubmitter);
        all.add(tasks);
        threads.add(new Thread(() -> {
          for (OrderedGet task : tasks) {
            Admission admission;
            while ((admission = onCaller ? pool.submitOrRun(task) : pool.submit(task)) == Admission.REJECTED_FULL) {
              Thread.yield();
            }
            if (admission != Admission.ACCEPTED) checks.violations.add(task + ": " + admission);
          }
        }, "submitter-" + s));
      }
      threads.forEach(Thread::start);
      for (Thread t : threads) t.join(TimeUnit.SECONDS.toMillis(60));
      assertTrue(checks.allAnswered.await(60, TimeUnit.SECONDS),
          selector + ": answered " + checks.answered.get() + " of " + submitters * perSubmitter);
    } finally {
      pool.close(); // joins the workers: they have released every key of the tasks they answered
    }
    assertEquals(0, pool.waitingTasks());
    for (int key = 0; key < KEYS; key++) assertEquals(-1, pool.workerOf(key), "key " + key + " released");
    assertEquals(List.of(), new ArrayList<>(checks.violations), selector.toString());
    for (List<OrderedGet> tasks : all) {
      for (OrderedGet task : tasks) assertEquals(1, task.answers.get(), task.toString());
    }
    assertTrue(registry.histogram(PoolMetrics.BATCH_SIZE).getSnapshot().getMax() >= 1);
    return registry;
  }

  @Test
  void shouldCloseFromOneOfItsOwnTasksWithoutWaitingForItself() throws Exception {
    PoolConfig config = PoolConfig.builder().workers(2).closeTimeoutMs(60_000).build();
    TaskPool pool = TaskPool.create(config, Clock.systemUTC(), new MetricRegistry(), true);
    CountDownLatch closed = new CountDownLatch(1);
    Checks checks = new Checks(1);
    OrderedGet closer = new OrderedGet(checks, 0, 0, GET, 1) {
      @Override
      public void run() {
        pool.close();
        closed.countDown();
        super.run();
      }
    };
    assertEquals(Admission.ACCEPTED, pool.submit(closer));
    assertTrue(closed.await(10, TimeUnit.SECONDS), "close() from a task returned without waiting for its own worker");
    assertTrue(checks.allAnswered.await(10, TimeUnit.SECONDS));
    assertEquals(Admission.REJECTED_CLOSED, pool.submit(new OrderedGet(checks, 0, 1, GET, 1)));
  }

  @Test
  void shouldAnswerEveryAcceptedTaskExactlyOnceWhenClosedUnderLoad() throws Exception {
    int submitters = 4;
    int perSubmitter = 20_000;
    Checks checks = new Checks(submitters * perSubmitter);
    List<List<OrderedGet>> accepted = new ArrayList<>();
    TaskPool pool = threadedPool(new MetricRegistry(), new LeastLoadedWorkerSelector());
    CountDownLatch someAccepted = new CountDownLatch(submitters);
    List<Thread> threads = new ArrayList<>();
    for (int s = 0; s < submitters; s++) {
      List<OrderedGet> tasks = tasksOf(checks, s, perSubmitter);
      List<OrderedGet> mine = new ArrayList<>();
      accepted.add(mine);
      threads.add(new Thread(() -> {
        for (OrderedGet task : tasks) {
          Admission admission;
          while ((admission = pool.submit(task)) == Admission.REJECTED_FULL) Thread.yield();
          if (admission == Admission.REJECTED_CLOSED) break;
          mine.add(task);
          if (mine.size() == 500) someAccepted.countDown();
        }
        someAccepted.countDown();
      }, "submitter-" + s));
    }
    threads.forEach(Thread::start);
    assertTrue(someAccepted.await(60, TimeUnit.SECONDS));
    pool.close();
    for (Thread t : threads) t.join(TimeUnit.SECONDS.toMillis(60));

    int total = 0;
    for (List<OrderedGet> tasks : accepted) {
      for (OrderedGet task : tasks) {
        assertEquals(1, task.answers.get(), task.toString());
        if (task.failure != null) {
          assertTrue(task.failure instanceof TaskPoolClosedException, task + ": " + task.failure);
        }
        total++;
      }
    }
    assertEquals(total, checks.answered.get(), "no refused task was answered, no accepted one twice");
    assertEquals(List.of(), new ArrayList<>(checks.violations));
    assertEquals(0, pool.waitingTasks());
    assertTrue(total < submitters * perSubmitter, "close() came while the submitters were busy");
  }
}
