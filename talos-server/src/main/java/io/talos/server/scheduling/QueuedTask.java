package io.talos.server.scheduling;

/**
 * A task as it waits in a worker's queue, with what the pool fixed when accepting it.
 *
 * <p>Thread-safety: immutable; published to the worker through the worker's lock.
 */
final class QueuedTask {
  final Task task;
  final Object key;
  final int priority;
  /** Effective deadline: the task's own, or submission time + the default. */
  final long deadlineMs;
  /** Submission time in ns of the pool clock, for the queue-wait timer. */
  final long submittedNanos;

  QueuedTask(Task task, Object key, int priority, long deadlineMs, long submittedNanos) {
    this.task = task;
    this.key = key;
    this.priority = priority;
    this.deadlineMs = deadlineMs;
    this.submittedNanos = submittedNanos;
  }
}
