package io.talos.server.scheduling;

/**
 * One unit of work handed to the {@link TaskPool}: typically the storage part of one request.
 *
 * <p>On an accepted task the pool calls exactly one of {@link #run()} (or, for a {@link
 * MergeableTask}, one {@link MergeableTask#runBatch} including it), {@link #expire()} or {@link
 * #fail(Throwable)}; and {@link #fail(Throwable)} after that run if the run threw. A task that was
 * not {@link Admission#ACCEPTED accepted} is never called: whoever submitted it answers.
 *
 * <p>The task answers its own request: when {@code run()} returns normally the task must have
 * completed it (or handed its completion on); {@code expire()} and {@code fail()} answer with an
 * error. Since {@code fail} follows a run that threw, a task whose run may complete its request
 * and then throw must ignore the later {@code fail} (complete once, like {@code
 * CompletableFuture.completeExceptionally} after {@code complete}).
 *
 * <p>Thread-safety: {@link #key()}, {@link #priority()}, {@link #deadlineMs()} and, for a
 * mergeable task, {@code sizeBytes()} are read on the submitting thread and on the worker thread
 * and must return the same value every time. {@code run}, {@code expire} and {@code fail} are
 * called on one worker thread (or on the thread calling {@link TaskPool#close()} for a task still
 * waiting then), never concurrently for one task; they must not block on other tasks of the pool.
 */
public interface Task {

  /** Returned by {@link #deadlineMs()} when the request gave none: the pool applies its default. */
  long NO_DEADLINE = 0L;

  /**
   * What orders this task with others, typically the partition (a {@code TopicAndPartition}).
   * Compared with {@code equals}/{@code hashCode}; never null. Tasks with equal keys are served by
   * one worker at a time, in submission order within a priority class.
   */
  Object key();

  /**
   * The index of this task's priority class in {@link PoolConfig#priorityClasses()}: 0 is picked
   * first by a worker whose queues were empty; while several classes wait they take turns (see
   * {@link Worker}). Look it up once with {@link PoolConfig#priorityOf(String)}.
   */
  int priority();

  /**
   * Absolute time, in ms of the pool's {@link java.time.Clock}, after which the task is no longer
   * worth running (the request's {@code timeoutTimestamp}); {@link #NO_DEADLINE} or any value
   * {@code <= 0} means the pool's {@link PoolConfig#defaultDeadlineMs()} after submission. A task
   * dequeued when the clock reads more than its deadline is {@link #expire() expired}; once
   * running, it is never interrupted.
   */
  long deadlineMs();

  /**
   * Does the work and answers the request. Anything thrown is passed to {@link #fail(Throwable)}
   * of this task only; the worker goes on with the next task.
   */
  void run() throws Exception;

  /**
   * Called instead of {@link #run()} when the task is dequeued after its deadline: answer at once
   * with the timeout error ({@code REQUEST_PROCESS_TIMEOUT}), touching nothing else.
   */
  void expire();

  /**
   * Answers the request with an error: {@code cause} is what {@link #run()} (or the batch this task
   * was part of) threw, or a {@link TaskPoolClosedException} for a task still waiting when the pool
   * closed. Must not throw; if it does, the pool logs it and goes on.
   */
  void fail(Throwable cause);
}
