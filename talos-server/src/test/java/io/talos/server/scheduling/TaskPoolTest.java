package io.talos.server.scheduling;

import io.talos.server.ManualClock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Snapshot;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Steps a pool without threads: every worker runs only when the test calls runOnce(). */
class TaskPoolTest {
  private static final long START_MS = 1_700_000_000_000L;
  private static final int ADMIN = 0;
  private static final int PUT = 1;
  private static final int GET = 2;

  private final ManualClock clock = new ManualClock(START_MS);
  private final MetricRegistry registry = new MetricRegistry();
  private final List<String> log = new ArrayList<>();
  private TaskPool pool;

  @AfterEach
  void closePool() {
    if (pool != null) pool.close();
  }

  private TaskPool pool(int workers) {
    return pool(PoolConfig.builder().workers(workers));
  }

  private TaskPool pool(PoolConfig.Builder config) {
    pool = TaskPool.create(config.build(), clock, registry, false);
    return pool;
  }

  private RecordingTask get(String name, Object key) {
    return new RecordingTask(name, key, GET, Task.NO_DEADLINE, log);
  }

  private RecordingTask task(String name, Object key, int priority) {
    return new RecordingTask(name, key, priority, Task.NO_DEADLINE, log);
  }

  private RecordingPut put(String name, Object key) {
    return put(name, key, 10);
  }

  private RecordingPut put(String name, Object key, long bytes) {
    return new RecordingPut(name, key, PUT, Task.NO_DEADLINE, bytes, log);
  }

  private void submit(Task... tasks) {
    for (Task task : tasks) assertEquals(Admission.ACCEPTED, pool.submit(task), "submit " + task);
  }

  private int depth(int worker) {
    return pool.worker(worker).waitingTasks();
  }

  /** Steps every worker, lowest id first, until none has anything to do. */
  private void runUntilIdle() {
    boolean worked = true;
    while (worked) {
      worked = false;
      for (Worker worker : pool.workers()) worked |= worker.runOnce();
    }
  }

  // --- waiting for the tasks in flight (a clean shutdown's drain)

  @Test
  void awaitIdleWaitsUntilEveryAcceptedTaskIsAnsweredOrTheTimeout() throws Exception {
    pool(2);
    assertTrue(pool.awaitIdle(0), "an empty pool is idle at once");
    submit(get("a1", "a"), get("b1", "b"));
    assertFalse(pool.awaitIdle(50), "two tasks still queued");
    java.util.concurrent.CompletableFuture<Boolean> waiter = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
      try {
        return pool.awaitIdle(60_000);
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
    });
    pool.worker(0).runOnce();
    Thread.sleep(50); // the waiter must still be waiting for b1 (checked below)
    assertFalse(waiter.isDone(), "b1 is still queued");
    runUntilIdle();
    assertTrue(waiter.get(10, TimeUnit.SECONDS), "woken when the last task was answered");
    assertEquals(List.of("run a1", "run b1"), log);
  }

  // --- choosing a worker

  @Test
  void shouldSendTaskToWorkerHoldingWaitingTaskOfSameKeyEvenIfOthersAreIdle() {
    pool(3);
    submit(get("a1", "a"), get("b1", "b"), get("a2", "a"));
    assertEquals(2, depth(0), "a2 joins a1 on worker 0 although worker 2 is idle");
    assertEquals(1, depth(1));
    assertEquals(0, depth(2));
    assertEquals(0, pool.workerOf("a"));
    assertEquals(2, pool.tasksOf("a"));
    assertEquals(2, pool.worker(0).tasksOf("a"));
    assertEquals(0, pool.worker(1).tasksOf("a"));
  }

  @Test
  void shouldSendTaskToWorkerRunningTaskOfSameKey() {
    pool(2);
    List<Integer> seenWhileRunning = new ArrayList<>();
    RecordingTask a1 = get("a1", "a").onRun(() -> {
      seenWhileRunning.add(pool.workerOf("a"));
      submit(get("a2", "a"));
    });
    submit(a1);
    assertTrue(pool.worker(0).runOnce());
    assertEquals(List.of(0), seenWhileRunning);
    assertEquals(1, depth(0), "a2 was queued on worker 0, which was running a1, not on idle worker 1");
    assertEquals(0, depth(1));
  }

  @Test
  void shouldFreeKeyOnceItsLastTaskIsAnsweredSoItCanMove() {
    pool(2);
    submit(get("a1", "a"));
    pool.worker(0).runOnce();
    assertEquals(-1, pool.workerOf("a"));
    assertEquals(0, pool.tasksOf("a"));
    submit(get("b1", "b"), get("a2", "a"));
    assertEquals(1, depth(0));
    assertEquals(1, depth(1), "a, free again, went to the least-loaded worker");
    assertEquals(1, pool.workerOf("a"));
  }

  @Test
  void shouldChooseWorkerWithFewestWaitingTasks() {
    pool(3);
    submit(get("k1", 1), get("k2", 2), get("k3", 3), get("k4", 4), get("k5", 5));
    // k1->0, k2->1, k3->2, then all have 1: k4->0 (lowest id), k5->1
    assertEquals(List.of(2, 2, 1), List.of(depth(0), depth(1), depth(2)));
    pool.worker(1).runOnce();
    pool.worker(1).runOnce();
    assertEquals(List.of(2, 0, 1), List.of(depth(0), depth(1), depth(2)));
    submit(get("k6", 6));
    assertEquals(1, pool.workerOf(6), "worker 1 has fewest waiting");
    submit(get("k7", 7));
    assertEquals(1, pool.workerOf(7), "workers 1 and 2 tie at one waiting: lowest id");
    submit(get("k8", 8));
    assertEquals(2, pool.workerOf(8), "worker 2 alone has fewest now");
  }

  @Test
  void shouldPinKeyToItsHashedWorkerWhateverTheLoadWithHashedSelector() {
    pool(PoolConfig.builder().workers(4).selector(new HashedWorkerSelector()));
    // Integer hash codes below 2^16 are their value: key k goes to worker k % 4
    submit(get("k1", 1), get("k5", 5), get("k9", 9), get("k13", 13));
    assertEquals(List.of(0, 4, 0, 0), List.of(depth(0), depth(1), depth(2), depth(3)));
    pool.worker(1).runOnce();
    assertEquals(-1, pool.workerOf(1));
    submit(get("k1 again", 1));
    assertEquals(1, pool.workerOf(1), "hashed: back to worker 1 although 3 tasks wait there and 0 elsewhere");
  }

  @Test
  void shouldRejectSelectorChoiceOutOfRangeWithoutLeakingCapacity() {
    pool(PoolConfig.builder().workers(2).maxWaitingTasks(1).selector((key, workers) -> 2));
    assertThrows(IllegalStateException.class, () -> pool.submit(get("a", "a")));
    assertEquals(0, pool.waitingTasks());
    assertEquals(-1, pool.workerOf("a"));
  }

  @Test
  void shouldRejectPriorityThatIsNotAClassIndex() {
    pool(1);
    assertThrows(IllegalArgumentException.class, () -> pool.submit(task("x", "x", 3)));
    assertThrows(IllegalArgumentException.class, () -> pool.submit(task("x", "x", -1)));
    assertEquals(0, pool.waitingTasks());
  }

  // --- serving order

  @Test
  void shouldServeClassesInTurnFromTheHighestAndFifoWithinAClass() {
    pool(1);
    submit(task("get1", "g1", GET), task("put1", "p1", PUT), task("admin1", "a1", ADMIN),
        task("get2", "g2", GET), task("put2", "p2", PUT), task("admin2", "a2", ADMIN));
    runUntilIdle();
    assertEquals(List.of("run admin1", "run put1", "run get1", "run admin2", "run put2", "run get2"), log);
  }

  @Test
  void shouldServeAWaitingGetAfterOnePutRunWhilePutsKeepArriving() {
    // One partition under a steady produce: a new put is always waiting when a run ends. Served
    // strictly by class, the consumer's get waited for as long as puts kept coming (to its deadline).
    pool(1);
    submit(put("p0", "a"), get("g", "a"));
    for (int i = 1; i <= 4; i++) {
      submit(put("p" + i, "a"));
      assertTrue(pool.worker(0).runOnce());
    }
    runUntilIdle();
    assertEquals(List.of("batch [p0, p1]", "run g", "batch [p2, p3]", "batch [p4]"), log);
  }

  @Test
  void shouldTakeClassesInTurnUnderLoadAndByPriorityAfterIdle() {
    pool(1);
    // both waiting on an idle worker: the higher class first, then they alternate
    submit(get("g1", "g"), get("g2", "g"), put("p1", "p"), task("x1", "x", PUT), put("p2", "q"));
    runUntilIdle();
    assertEquals(List.of("batch [p1]", "run g1", "run x1", "run g2", "batch [p2]"), log);
    log.clear();
    // idle again: priority order decides the first pick again
    submit(get("g3", "g"), put("p3", "p"));
    runUntilIdle();
    assertEquals(List.of("batch [p3]", "run g3"), log);
  }

  @Test
  void shouldHonourConfiguredPriorityOrder() {
    pool(PoolConfig.builder().workers(1).priorityClasses("get", "put"));
    int getClass = pool.config().priorityOf("get");
    int putClass = pool.config().priorityOf("put");
    submit(task("put1", "p", putClass), task("get1", "g", getClass));
    runUntilIdle();
    assertEquals(List.of("run get1", "run put1"), log);
  }

  @Test
  void shouldRunTasksOfOneKeyInSubmissionOrderAcrossWorkersAndBatches() {
    pool(PoolConfig.builder().workers(3).maxBatchCount(2));
    List<RecordingTask> tasks = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      String key = "k" + (i % 3);
      RecordingTask t = (i % 4 == 3) ? task(key + "#" + i, key, PUT) : put(key + "#" + i, key);
      tasks.add(t);
      submit(t);
    }
    runUntilIdle();
    for (int k = 0; k < 3; k++) {
      List<Integer> order = new ArrayList<>();
      for (String line : log) {
        for (String part : line.replaceAll("[\\[\\],]", " ").split("\\s+")) {
          if (part.startsWith("k" + k + "#")) order.add(Integer.parseInt(part.substring(3)));
        }
      }
      List<Integer> sorted = new ArrayList<>(order);
      sorted.sort(null);
      assertEquals(sorted, order, "key k" + k + " in " + log);
      assertEquals(4, order.size());
    }
    for (RecordingTask t : tasks) assertEquals(1, t.answers.get(), t.name);
  }

  // --- deadlines

  @Test
  void shouldExpireTaskDequeuedAfterItsDeadlineWithoutRunningIt() {
    pool(1);
    RecordingTask late = new RecordingTask("late", "a", GET, START_MS + 100, log)
        .throwing(new IllegalStateException("an expired task must not run"));
    RecordingTask onTime = new RecordingTask("onTime", "b", GET, START_MS + 101, log);
    submit(late, onTime);
    clock.advanceMs(101);
    assertTrue(pool.worker(0).runOnce());
    assertTrue(pool.worker(0).runOnce());
    assertEquals(List.of("expire late", "run onTime"), log, "a deadline equal to now has not passed yet");
    assertEquals(1, late.answers.get());
    assertEquals(0, late.fails.get());
    assertEquals(1, registry.meter(PoolMetrics.EXPIRED).getCount());
    assertEquals(-1, pool.workerOf("a"), "an expired task is answered: its key is released");
    assertFalse(pool.worker(0).runOnce());
  }

  @Test
  void shouldApplyDefaultDeadlineToTaskWithoutOne() {
    pool(PoolConfig.builder().workers(1).defaultDeadlineMs(500));
    submit(get("a", "a"));
    clock.advanceMs(400);
    submit(get("b", "b"));
    clock.advanceMs(101);
    runUntilIdle();
    assertEquals(List.of("expire a", "run b"), log);
  }

  @Test
  void shouldExpireMergeableHeadWithoutRunningABatchForIt() {
    pool(1);
    RecordingPut late = new RecordingPut("late", "a", PUT, START_MS + 10, 10, log);
    RecordingPut next = put("next", "a");
    submit(late, next);
    clock.advanceMs(11);
    assertTrue(pool.worker(0).runOnce());
    assertEquals(List.of("expire late"), log);
    assertTrue(pool.worker(0).runOnce());
    assertEquals(List.of("expire late", "batch [next]"), log);
    assertEquals(1, registry.histogram(PoolMetrics.BATCH_SIZE).getCount(), "an expiry is not a batch");
  }

  // --- group commit

  @Test
  void shouldGroupCommitWaitingPutsOfOneKeyAndAcknowledgeEachOnce() {
    pool(1);
    RecordingPut a1 = put("a1", "a");
    RecordingPut b1 = put("b1", "b");
    RecordingPut a2 = put("a2", "a");
    RecordingPut a3 = put("a3", "a");
    submit(a1, b1, a2, a3);
    assertTrue(pool.worker(0).runOnce());
    assertEquals(List.of("batch [a1, a2, a3]"), log);
    assertEquals(1, depth(0));
    assertEquals(1, pool.waitingTasks());
    assertTrue(pool.worker(0).runOnce());
    assertFalse(pool.worker(0).runOnce());
    assertEquals(List.of("batch [a1, a2, a3]", "batch [b1]"), log);
    for (RecordingPut p : List.of(a1, b1, a2, a3)) {
      assertEquals(1, p.answers.get(), p.name + " acknowledged exactly once");
      assertEquals(0, p.fails.get());
    }
    Snapshot sizes = registry.histogram(PoolMetrics.BATCH_SIZE).getSnapshot();
    assertEquals(2, registry.histogram(PoolMetrics.BATCH_SIZE).getCount());
    assertEquals(3, sizes.getMax());
    assertEquals(1, sizes.getMin());
    assertEquals(-1, pool.workerOf("a"));
  }

  @Test
  void shouldNotMergePastASameKeyTaskThatCannotJoin() {
    pool(1);
    submit(put("a1", "a"), put("a2", "a"), task("a-other", "a", PUT), put("a3", "a"), put("a4", "a"));
    runUntilIdle();
    assertEquals(List.of("batch [a1, a2]", "run a-other", "batch [a3, a4]"), log);
  }

  @Test
  void shouldNotMergeTasksOfAnotherPriorityClass() {
    pool(1);
    RecordingPut lowPut = new RecordingPut("a-low", "a", GET, Task.NO_DEADLINE, 10, log);
    submit(put("a1", "a"), lowPut, put("a2", "a"));
    runUntilIdle();
    assertEquals(List.of("batch [a1, a2]", "batch [a-low]"), log);
  }

  @Test
  void shouldBoundBatchByCount() {
    pool(PoolConfig.builder().workers(1).maxBatchCount(3));
    for (int i = 1; i <= 5; i++) submit(put("a" + i, "a"));
    runUntilIdle();
    assertEquals(List.of("batch [a1, a2, a3]", "batch [a4, a5]"), log);
  }

  @Test
  void shouldBoundBatchByBytesWithoutSkippingATaskThatDoesNotFit() {
    pool(PoolConfig.builder().workers(1).maxBatchBytes(100));
    submit(put("a1", "a", 60), put("a2", "a", 50), put("a3", "a", 30), put("a4", "a", 20),
        put("big", "a", 150), put("a5", "a", 1));
    runUntilIdle();
    // a2 does not fit beside a1, and a3 (which would) may not jump ahead of a2
    assertEquals(List.of("batch [a1]", "batch [a2, a3, a4]", "batch [big]", "batch [a5]"), log);
  }

  @Test
  void shouldExpireWaitingSameKeyPutWhileCollectingBatch() {
    pool(1);
    RecordingPut a1 = put("a1", "a");
    RecordingPut a2 = new RecordingPut("a2", "a", PUT, START_MS + 10, 10, log);
    RecordingPut a3 = put("a3", "a");
    submit(a1, a2, a3);
    clock.advanceMs(11);
    assertTrue(pool.worker(0).runOnce());
    assertEquals(List.of("expire a2", "batch [a1, a3]"), log);
    for (RecordingPut p : List.of(a1, a2, a3)) assertEquals(1, p.answers.get(), p.name);
    assertEquals(0, pool.waitingTasks());
    assertEquals(-1, pool.workerOf("a"));
  }

  // --- failures

  @Test
  void shouldFailOnlyTheTaskThatThrowsAndKeepServing() {
    pool(1);
    RuntimeException boom = new IllegalStateException("boom");
    RecordingTask bad = get("bad", "a").throwing(boom);
    RecordingTask good = get("good", "a");
    submit(bad, good);
    runUntilIdle();
    assertEquals(List.of("fail bad: boom", "run good"), log);
    assertSame(boom, bad.failure);
    assertEquals(1, bad.answers.get());
    assertEquals(1, good.answers.get());
    assertEquals(0, good.fails.get());
    assertEquals(1, registry.meter(PoolMetrics.FAILED).getCount());
  }

  @Test
  void shouldKeepServingWhenFailItselfThrows() {
    pool(1);
    RecordingTask bad = new RecordingTask("bad", "a", GET, Task.NO_DEADLINE, log) {
      @Override
      public void fail(Throwable cause) {
        super.fail(cause);
        throw new IllegalStateException("fail threw too");
      }
    }.throwing(new IllegalStateException("boom"));
    submit(bad, get("good", "a"));
    runUntilIdle();
    assertEquals(List.of("fail bad: boom", "run good"), log);
    assertEquals(-1, pool.workerOf("a"));
  }

  @Test
  void shouldFailEveryTaskOfAThrowingBatchAndNoOther() {
    pool(1);
    RecordingPut a1 = put("a1", "a");
    a1.throwing(new IllegalStateException("disk full"));
    RecordingPut a2 = put("a2", "a");
    RecordingPut b1 = put("b1", "b");
    RecordingTask a3 = get("a3", "a");
    submit(a1, b1, a2, a3);
    runUntilIdle();
    assertEquals(List.of("fail a1: disk full", "fail a2: disk full", "run a3", "batch [b1]"), log); // classes in turn
    assertEquals(1, a1.answers.get());
    assertEquals(1, a2.answers.get());
    assertEquals(0, b1.fails.get());
    assertEquals(2, registry.meter(PoolMetrics.FAILED).getCount());
  }

  // --- back-pressure and close

  @Test
  void shouldRefuseBeyondMaxWaitingTasksAndAcceptAgainOnceServed() {
    pool(PoolConfig.builder().workers(2).maxWaitingTasks(2));
    submit(get("a", "a"), get("b", "b"));
    RecordingTask c = get("c", "c");
    assertEquals(Admission.REJECTED_FULL, pool.submit(c));
    assertEquals(Admission.REJECTED_FULL, pool.submit(get("a2", "a")));
    assertEquals(0, c.answers.get(), "a refused task is never called");
    assertEquals(-1, pool.workerOf("c"));
    assertEquals(2, pool.waitingTasks());
    assertEquals(2, registry.meter(PoolMetrics.REJECTED).getCount());
    pool.worker(0).runOnce();
    assertEquals(Admission.ACCEPTED, pool.submit(c));
  }

  @Test
  void shouldCountRunningTasksOutsideTheWaitingLimit() {
    pool(PoolConfig.builder().workers(1).maxWaitingTasks(1));
    List<Admission> whileRunning = new ArrayList<>();
    RecordingTask a = get("a", "a").onRun(() -> {
      whileRunning.add(pool.submit(get("b", "b")));
      whileRunning.add(pool.submit(get("c", "c")));
    });
    submit(a);
    pool.worker(0).runOnce();
    assertEquals(List.of(Admission.ACCEPTED, Admission.REJECTED_FULL), whileRunning);
  }

  @Test
  void shouldFailWaitingTasksAndRefuseNewOnesOnClose() {
    pool(2);
    RecordingTask a = get("a", "a");
    RecordingPut b = put("b", "b");
    submit(a, b);
    pool.close();
    assertInstanceOf(TaskPoolClosedException.class, a.failure);
    assertInstanceOf(TaskPoolClosedException.class, b.failure);
    assertEquals(1, a.answers.get());
    assertEquals(1, b.answers.get());
    assertEquals(0, pool.waitingTasks());
    assertEquals(-1, pool.workerOf("a"));
    RecordingTask late = get("late", "a");
    assertEquals(Admission.REJECTED_CLOSED, pool.submit(late));
    assertEquals(0, late.answers.get());
    assertFalse(pool.worker(0).runOnce());
    assertNull(registry.getGauges().get(PoolMetrics.workerDepth(0)), "gauges removed on close");
    pool.close(); // idempotent
    assertEquals(1, a.answers.get());
  }

  @Test
  void shouldRefuseRunOnceOnPoolWithThreads() {
    pool = TaskPool.create(PoolConfig.builder().workers(1).build(), clock, registry, true);
    assertThrows(IllegalStateException.class, () -> pool.worker(0).runOnce());
  }

  // --- metrics

  @Test
  void shouldRecordQueueWaitServiceTimeDepthAndBusyRatio() {
    pool(PoolConfig.builder().workers(2).busyRatioWindowMs(100));
    RecordingTask a = get("a", "a").onRun(() -> clock.advanceMs(30));
    submit(a, get("b", "b"));
    @SuppressWarnings("unchecked")
    Gauge<Integer> depth0 = registry.getGauges().get(PoolMetrics.workerDepth(0));
    @SuppressWarnings("unchecked")
    Gauge<Integer> waiting = registry.getGauges().get(PoolMetrics.WAITING);
    assertEquals(1, depth0.getValue());
    assertEquals(2, waiting.getValue());
    clock.advanceMs(5);
    pool.worker(0).runOnce();
    assertEquals(0, depth0.getValue());
    assertEquals(1, waiting.getValue());

    Snapshot wait = registry.timer(PoolMetrics.QUEUE_WAIT).getSnapshot();
    assertEquals(1, registry.timer(PoolMetrics.QUEUE_WAIT).getCount());
    assertEquals(TimeUnit.MILLISECONDS.toNanos(5), wait.getMax());
    Snapshot service = registry.timer(PoolMetrics.SERVICE).getSnapshot();
    assertEquals(TimeUnit.MILLISECONDS.toNanos(30), service.getMax());

    @SuppressWarnings("unchecked")
    Gauge<Double> busy0 = registry.getGauges().get(PoolMetrics.workerBusyRatio(0));
    @SuppressWarnings("unchecked")
    Gauge<Double> busy1 = registry.getGauges().get(PoolMetrics.workerBusyRatio(1));
    assertEquals(0.0, busy0.getValue(), "no window completed yet");
    clock.advanceMs(65); // 100 ms since creation: busy 30 of them
    assertEquals(0.30, busy0.getValue(), 1e-9);
    assertEquals(0.0, busy1.getValue(), 1e-9);
  }

  @Test
  void aFreeKeyGoesToAnIdleWorkerRatherThanOneBusyRunningATask() {
    pool(2);
    int[] chosen = {-2};
    RecordingTask other = get("other", "k2");
    RecordingTask busy = get("busy", "k1").onRun(() -> {
      // While worker 0 runs this task (say a storage call that stalls), a new key arrives.
      assertEquals(Admission.ACCEPTED, pool.submit(other));
      chosen[0] = pool.workerOf("k2");
    });
    assertEquals(Admission.ACCEPTED, pool.submit(busy));
    assertEquals(0, pool.workerOf("k1"));
    assertTrue(pool.worker(0).runOnce());
    assertEquals(1, chosen[0], "the new key went to the worker busy running a task");
    assertTrue(pool.worker(1).runOnce());
    assertEquals(List.of("run busy", "run other"), log);
  }

  @Test
  void shouldServeATaskOfAnIdleKeyOnTheSubmittingThreadWithItsWorkerLent() {
    pool(2);
    Thread[] ranOn = new Thread[1];
    RecordingTask lone = get("lone", "k1").onRun(() -> {
      ranOn[0] = Thread.currentThread();
      assertEquals(0, pool.workerOf("k1"), "the key is in the table while it runs");
      assertTrue(pool.worker(0).isRunning(), "its worker is lent: it counts as running");
    });
    assertEquals(Admission.ACCEPTED, pool.submitOrRun(lone));
    assertEquals(List.of("run lone"), log);
    assertSame(Thread.currentThread(), ranOn[0]);
    assertEquals(-1, pool.workerOf("k1"), "released once answered");
    assertFalse(pool.worker(0).isRunning());
    assertFalse(pool.worker(0).runOnce(), "nothing was queued");
    assertEquals(1, registry.meter(PoolMetrics.RAN_ON_CALLER).getCount());
    assertEquals(1, registry.timer(PoolMetrics.SERVICE).getCount());
    assertEquals(0, registry.timer(PoolMetrics.QUEUE_WAIT).getSnapshot().getMax());
  }

  @Test
  void shouldRunALonePutAsABatchOfOneOnTheSubmittingThread() {
    pool(1);
    assertEquals(Admission.ACCEPTED, pool.submitOrRun(put("p", "k1")));
    assertEquals(List.of("batch [p]"), log);
  }

  @Test
  void shouldQueueBehindATaskOfTheSameKeyInsteadOfRunningOnTheCaller() {
    pool(2);
    submit(get("first", "k1"));
    assertEquals(Admission.ACCEPTED, pool.submitOrRun(get("second", "k1")));
    assertEquals(List.of(), log, "nothing ran on the caller");
    runUntilIdle();
    assertEquals(List.of("run first", "run second"), log);
    assertEquals(0, registry.meter(PoolMetrics.RAN_ON_CALLER).getCount());
  }

  @Test
  void shouldQueueWhenTheWorkerOfAFreeKeyIsRunningATask() {
    pool(1);
    RecordingTask other = get("other", "k2");
    RecordingTask busy = get("busy", "k1").onRun(() -> {
      assertEquals(Admission.ACCEPTED, pool.submitOrRun(other));
      assertEquals(List.of(), log, "the free key's task did not run while its worker was busy");
    });
    submit(busy);
    assertTrue(pool.worker(0).runOnce());
    assertEquals(List.of("run busy"), log);
    assertEquals(1, depth(0));
    assertTrue(pool.worker(0).runOnce());
    assertEquals(List.of("run busy", "run other"), log);
  }

  @Test
  void shouldServeNothingOnALentWorkerUntilTheLoanEnds() {
    pool(PoolConfig.builder().workers(1).maxLentRuns(1));
    RecordingTask same = get("same", "k1");
    RecordingTask other = get("other", "k2");
    RecordingTask lone = get("lone", "k1").onRun(() -> {
      submit(same, other); // both to worker 0, lent to this thread
      assertFalse(pool.worker(0).runOnce(), "a lent worker serves nothing");
      assertEquals(2, depth(0));
    });
    assertEquals(Admission.ACCEPTED, pool.submitOrRun(lone));
    assertEquals(List.of("run lone"), log);
    runUntilIdle();
    assertEquals(List.of("run lone", "run same", "run other"), log);
  }

  @Test
  void shouldServeWhatWasQueuedDuringTheLoanOnTheCallerUpToMaxLentRuns() {
    // A put served on the request thread wakes its partition's long-polling get: the thread
    // serves the get once the put is answered, instead of waking the worker's thread for it.
    pool(PoolConfig.builder().workers(1).maxLentRuns(3));
    List<Thread> ranOn = new ArrayList<>();
    RecordingTask g1 = get("g1", "k1").onRun(() -> ranOn.add(Thread.currentThread()));
    RecordingTask g2 = get("g2", "k2").onRun(() -> ranOn.add(Thread.currentThread()));
    RecordingTask g3 = get("g3", "k3");
    RecordingPut lone = put("p", "k1");
    lone.onRun(() -> submit(g1, g2, g3));
    assertEquals(Admission.ACCEPTED, pool.submitOrRun(lone));
    assertEquals(List.of("batch [p]", "run g1", "run g2"), log, "three runs in all on the caller");
    assertEquals(List.of(Thread.currentThread(), Thread.currentThread()), ranOn);
    assertEquals(1, depth(0), "the rest waits for the worker");
    assertFalse(pool.worker(0).isRunning(), "the loan has ended");
    assertEquals(-1, pool.workerOf("k1"));
    assertEquals(-1, pool.workerOf("k2"));
    assertEquals(0, pool.workerOf("k3"));
    assertEquals(1, registry.meter(PoolMetrics.RAN_ON_CALLER).getCount());
    assertEquals(2, registry.meter(PoolMetrics.RAN_QUEUED_ON_CALLER).getCount());
    assertEquals(3, registry.timer(PoolMetrics.SERVICE).getCount());
    assertTrue(pool.worker(0).runOnce());
    assertEquals(List.of("batch [p]", "run g1", "run g2", "run g3"), log);
  }

  @Test
  void shouldEndTheLoanWhenNothingWasQueued() {
    pool(PoolConfig.builder().workers(1).maxLentRuns(5));
    assertEquals(Admission.ACCEPTED, pool.submitOrRun(get("lone", "k1")));
    assertEquals(List.of("run lone"), log);
    assertEquals(0, registry.meter(PoolMetrics.RAN_QUEUED_ON_CALLER).getCount());
    // the worker is free again: the next lone task is lent it too
    assertEquals(Admission.ACCEPTED, pool.submitOrRun(get("next", "k2")));
    assertEquals(List.of("run lone", "run next"), log);
    assertEquals(2, registry.meter(PoolMetrics.RAN_ON_CALLER).getCount());
  }

  @Test
  void shouldServeQueuedPutsOfTheLoanAsOneBatch() {
    pool(PoolConfig.builder().workers(1).maxLentRuns(2));
    RecordingPut lone = put("p1", "k");
    lone.onRun(() -> submit(put("p2", "k"), put("p3", "k")));
    assertEquals(Admission.ACCEPTED, pool.submitOrRun(lone));
    assertEquals(List.of("batch [p1]", "batch [p2, p3]"), log);
    assertEquals(-1, pool.workerOf("k"));
    assertEquals(0, pool.waitingTasks());
  }

  @Test
  void shouldStopServingQueuedTasksOnTheCallerWhenThePoolCloses() {
    pool(PoolConfig.builder().workers(1).maxLentRuns(10));
    RecordingTask queued = get("queued", "k2");
    RecordingTask lone = get("lone", "k1").onRun(() -> {
      submit(queued);
      pool.close(); // from the lent run: fails what waits, serves nothing more
    });
    assertEquals(Admission.ACCEPTED, pool.submitOrRun(lone));
    assertTrue(log.contains("run lone"), log.toString());
    assertFalse(log.contains("run queued"), log.toString());
    assertTrue(log.get(0).startsWith("fail queued"), log.toString());
    assertEquals(1, queued.fails.get(), "the queued task was answered by the close");
    assertEquals(1, queued.answers.get());
  }

  @Test
  void shouldCountALentRunAsItsClassTurn() {
    // A put served on the request thread wakes its partition's long-polling get while it runs,
    // and more puts arrive meanwhile: the get is next, as if the worker had served the put itself.
    pool(PoolConfig.builder().workers(1).maxLentRuns(1));
    RecordingPut lone = put("p1", "k");
    lone.onRun(() -> submit(get("g", "k"), put("p2", "k")));
    assertEquals(Admission.ACCEPTED, pool.submitOrRun(lone));
    runUntilIdle();
    assertEquals(List.of("batch [p1]", "run g", "batch [p2]"), log);
  }

  @Test
  void shouldTakeTheLoansQueuedRunsInTheWorkersServingOrder() {
    // The same on the thread the worker is lent to: the get its put woke is its next run.
    pool(PoolConfig.builder().workers(1).maxLentRuns(2));
    RecordingPut lone = put("p1", "k");
    lone.onRun(() -> submit(put("p2", "k"), get("g", "k")));
    assertEquals(Admission.ACCEPTED, pool.submitOrRun(lone));
    assertEquals(List.of("batch [p1]", "run g"), log);
    runUntilIdle();
    assertEquals(List.of("batch [p1]", "run g", "batch [p2]"), log);
  }

  @Test
  void shouldPickByPriorityAfterALoanThatFoundNothingQueued() {
    for (int runs : new int[] {1, 2}) {
      log.clear();
      pool(PoolConfig.builder().workers(1).maxLentRuns(runs));
      assertEquals(Admission.ACCEPTED, pool.submitOrRun(put("lone", "k")));
      submit(get("g", "a"), put("p", "b")); // after the loan: the put class has priority
      runUntilIdle();
      assertEquals(List.of("batch [lone]", "batch [p]", "run g"), log, runs + " runs");
      pool.close();
    }
  }

  @Test
  void shouldPickByPriorityAfterALoanWhateverTheWorkerServedBefore() {
    pool(PoolConfig.builder().workers(1).maxLentRuns(1));
    submit(put("p0", "a"));
    assertTrue(pool.worker(0).runOnce()); // the last class served is put; the queues are not polled empty
    RecordingTask lone = get("lone", "k").onRun(() -> submit(get("g1", "g"), put("p1", "p")));
    assertEquals(Admission.ACCEPTED, pool.submitOrRun(lone));
    runUntilIdle();
    assertEquals(List.of("batch [p0]", "run lone", "batch [p1]", "run g1"), log);
  }

  @Test
  void shouldLetNoClassStarveAnotherWithThreeClasses() {
    pool(1);
    submit(task("a0", "a", ADMIN), get("g", "g"), put("p", "p"));
    for (int i = 1; i <= 3; i++) {
      submit(task("a" + i, "a", ADMIN)); // admin work keeps arriving
      assertTrue(pool.worker(0).runOnce());
    }
    assertEquals(List.of("run a0", "batch [p]", "run g"), log);
  }

  @Test
  void shouldQueueAnAlreadyExpiredTaskForTheWorkerToExpire() {
    pool(1);
    RecordingTask late = new RecordingTask("late", "k1", GET, START_MS - 1, log);
    assertEquals(Admission.ACCEPTED, pool.submitOrRun(late));
    assertEquals(List.of(), log);
    runUntilIdle();
    assertEquals(List.of("expire late"), log);
  }
}
