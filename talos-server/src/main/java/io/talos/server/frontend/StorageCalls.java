package io.talos.server.frontend;

import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import io.talos.server.scheduling.ThreadSlicePolicy;
import io.talos.server.service.RequestDeadline;

/**
 * Where the storage part of a put or get runs, so that a stalled file system (an hdfs DataNode or
 * NameNode that stops answering) costs a pool worker at most the request's deadline.
 *
 * <p>A pool worker hands the call's body to a bounded executor of storage threads and waits for it
 * until the deadline of each request it serves: a request whose deadline passes first is answered
 * REQUEST_PROCESS_TIMEOUT at its deadline (a put then "may or may not have been stored"), and the
 * worker goes on with the next partition's tasks while the stalled call keeps its storage thread.
 * Storage threads are bounded ({@code storage.io.threads}, with as many calls waiting): when all
 * are taken by stalled calls a request is refused at once with a retriable error instead of
 * queueing behind them. The request's deadline is bound ({@link RequestDeadline}) on the storage
 * thread, so that waiting for a partition to open stops at it too.
 *
 * <p>With 0 threads the body runs on the worker itself: no protection, one thread hand-off less per
 * call. That is the default on a local file system ({@code storage.io.threads} = -1), where the
 * hand-off cost a put more than the protection is worth: a local write that stalls past a
 * request's deadline means a failing disk, and the worker waited for the storage thread until the
 * deadline anyway. Tests that step the pool by hand use it too. Thread-safe.
 */
final class StorageCalls implements AutoCloseable {
  /** Runs bodies on the calling thread. */
  static StorageCalls inline(Clock clock, long defaultDeadlineMs) {
    return new StorageCalls(clock, defaultDeadlineMs, 0, ThreadSlicePolicy.NONE);
  }

  private final Clock clock;
  private final long defaultDeadlineMs;
  private final ThreadPoolExecutor executor;

  /**
   * @param defaultDeadlineMs deadline of a request that carries none, after its arrival
   * @param threads storage threads; 0 runs bodies on the caller's thread
   * @param threadSlices the scheduler slice a storage thread moves to before each call
   */
  StorageCalls(Clock clock, long defaultDeadlineMs, int threads, ThreadSlicePolicy threadSlices) {
    this.clock = clock;
    this.defaultDeadlineMs = defaultDeadlineMs;
    if (threads > 0) {
      AtomicInteger n = new AtomicInteger();
      executor = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(threads), r -> {
        Thread t = new Thread(r, "talos-storage-" + n.incrementAndGet());
        t.setDaemon(true);
        return t;
      }) {
        @Override
        protected void beforeExecute(Thread t, Runnable r) {
          threadSlices.applyToCurrentThread();
        }
      };
      executor.allowCoreThreadTimeOut(true);
    } else {
      executor = null;
    }
  }

  Clock clock() {
    return clock;
  }

  long defaultDeadlineMs() {
    return defaultDeadlineMs;
  }

  /**
   * Runs {@code body}, which answers every task of {@code tasks} itself, and returns once it has,
   * or once each task whose body has not answered it yet has been answered with the timeout
   * error at its deadline, or at once if no storage thread is free.
   */
  void run(Runnable body, List<? extends MessageCallTask> tasks) {
    long bodyDeadline = Long.MIN_VALUE;
    for (MessageCallTask t : tasks) bodyDeadline = Math.max(bodyDeadline, t.deadlineMs());
    final long deadline = bodyDeadline;
    Runnable bound = () -> {
      RequestDeadline.bind(deadline);
      try {
        body.run();
      } finally {
        RequestDeadline.unbind();
      }
    };
    if (executor == null) {
      bound.run();
      return;
    }
    Future<?> f;
    try {
      f = executor.submit(bound);
    } catch (RejectedExecutionException e) {
      for (MessageCallTask t : tasks) t.storageBusy(executor.getMaximumPoolSize());
      return;
    }
    List<MessageCallTask> byDeadline = new ArrayList<>(tasks);
    byDeadline.sort(Comparator.comparingLong(MessageCallTask::deadlineMs));
    for (MessageCallTask t : byDeadline) {
      try {
        long waitMs = t.deadlineMs() - clock.millis();
        if (waitMs > 0) f.get(waitMs, TimeUnit.MILLISECONDS);
        if (f.isDone()) return;
        t.storageTimedOut();
      } catch (TimeoutException e) {
        t.storageTimedOut();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        for (MessageCallTask task : tasks) task.storageTimedOut();
        return;
      } catch (ExecutionException e) {
        for (MessageCallTask task : tasks) task.fail(e.getCause()); // the body broke its contract
        return;
      }
    }
  }

  /**
   * Answers each task of {@code tasks} with the timeout error at its deadline unless {@code done}
   * completes first: for puts whose body returned after writing, while their flush is in flight
   * (a reply is sent once, so the later answer of a task answered here is dropped).
   */
  void answerAtDeadline(List<? extends MessageCallTask> tasks, java.util.concurrent.CompletableFuture<?> done) {
    long nowMs = clock.millis();
    for (MessageCallTask t : tasks) {
      java.util.concurrent.ScheduledFuture<?> timer =
          TIMERS.schedule(t::storageTimedOut, Math.max(0, t.deadlineMs() - nowMs), TimeUnit.MILLISECONDS);
      done.whenComplete((r, e) -> timer.cancel(false));
    }
  }

  /** One timer thread for the deadlines of puts waiting for their flush. */
  private static final java.util.concurrent.ScheduledThreadPoolExecutor TIMERS;

  static {
    TIMERS = new java.util.concurrent.ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, "talos-put-deadlines");
      t.setDaemon(true);
      return t;
    });
    TIMERS.setRemoveOnCancelPolicy(true);
  }

  @Override
  public void close() {
    if (executor != null) executor.shutdownNow();
  }
}
