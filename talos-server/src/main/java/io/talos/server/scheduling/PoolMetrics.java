package io.talos.server.scheduling;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.Histogram;
import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Timer;
import java.util.ArrayList;
import java.util.List;

/**
 * The Dropwizard metrics of a {@link TaskPool}, all under {@code pool.}. Timers and meters are
 * taken with {@code registry.timer(name)} and the like, so a timer registered beforehand under the
 * same name (for example with another reservoir) is the one used. Gauges are registered when the
 * pool is created, replacing any of the same name, and removed by {@link TaskPool#close()}.
 *
 * <table>
 *   <caption>Metrics</caption>
 *   <tr><td>{@value #QUEUE_WAIT}</td><td>timer</td><td>submission to dequeue, per task (expired
 *       ones included)</td></tr>
 *   <tr><td>{@value #SERVICE}</td><td>timer</td><td>one run or one batch run, per run</td></tr>
 *   <tr><td>{@value #BATCH_SIZE}</td><td>histogram</td><td>tasks per run of a mergeable task
 *       (tasks merged per flush)</td></tr>
 *   <tr><td>{@value #EXPIRED}</td><td>meter</td><td>tasks expired instead of run</td></tr>
 *   <tr><td>{@value #REJECTED}</td><td>meter</td><td>submissions refused, full or closed</td></tr>
 *   <tr><td>{@value #FAILED}</td><td>meter</td><td>tasks failed because their run threw</td></tr>
 *   <tr><td>{@value #RAN_ON_CALLER}</td><td>meter</td><td>tasks served on the submitting thread,
 *       their worker lent to it ({@link TaskPool#submitOrRun}); their queue wait is 0</td></tr>
 *   <tr><td>{@value #RAN_QUEUED_ON_CALLER}</td><td>meter</td><td>runs of queued tasks (a task or
 *       a batch) served on such a thread after its own task, before the loan ended ({@link
 *       PoolConfig#maxLentRuns()}): each one a wake of the worker's thread saved</td></tr>
 *   <tr><td>{@value #WAITING}</td><td>gauge</td><td>tasks waiting in the whole pool</td></tr>
 *   <tr><td>pool.worker.&lt;id&gt;.depth</td><td>gauge</td><td>tasks waiting for that worker</td></tr>
 *   <tr><td>pool.worker.&lt;id&gt;.busy.ratio</td><td>gauge</td><td>fraction of the last
 *       {@link PoolConfig#busyRatioWindowMs()} window the worker spent serving tasks</td></tr>
 * </table>
 *
 * <p>Thread-safety: safe (Dropwizard metrics are).
 */
public final class PoolMetrics {
  public static final String QUEUE_WAIT = "pool.queue.wait";
  public static final String SERVICE = "pool.service";
  public static final String BATCH_SIZE = "pool.batch.size";
  public static final String EXPIRED = "pool.expired";
  public static final String REJECTED = "pool.rejected";
  public static final String FAILED = "pool.failed";
  public static final String WAITING = "pool.waiting";
  public static final String RAN_ON_CALLER = "pool.ran.on.caller";
  public static final String RAN_QUEUED_ON_CALLER = "pool.ran.queued.on.caller";

  public static String workerDepth(int workerId) {
    return "pool.worker." + workerId + ".depth";
  }

  public static String workerBusyRatio(int workerId) {
    return "pool.worker." + workerId + ".busy.ratio";
  }

  final Timer queueWait;
  final Timer service;
  final Histogram batchSize;
  final Meter expired;
  final Meter rejected;
  final Meter failed;
  final Meter ranOnCaller;
  final Meter ranQueuedOnCaller;
  private final MetricRegistry registry;
  private final List<String> gauges = new ArrayList<>();

  PoolMetrics(MetricRegistry registry) {
    this.registry = registry;
    this.queueWait = registry.timer(QUEUE_WAIT);
    this.service = registry.timer(SERVICE);
    this.batchSize = registry.histogram(BATCH_SIZE);
    this.expired = registry.meter(EXPIRED);
    this.rejected = registry.meter(REJECTED);
    this.failed = registry.meter(FAILED);
    this.ranOnCaller = registry.meter(RAN_ON_CALLER);
    this.ranQueuedOnCaller = registry.meter(RAN_QUEUED_ON_CALLER);
  }

  synchronized void registerGauges(TaskPool pool) {
    gauge(WAITING, pool::waitingTasks);
    for (Worker worker : pool.workers()) {
      gauge(workerDepth(worker.id()), worker::waitingTasks);
      gauge(workerBusyRatio(worker.id()), worker::busyRatio);
    }
  }

  synchronized void removeGauges() {
    for (String name : gauges) registry.remove(name);
    gauges.clear();
  }

  private void gauge(String name, Gauge<?> gauge) {
    registry.remove(name);
    registry.register(name, gauge);
    gauges.add(name);
  }
}
