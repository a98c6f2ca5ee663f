package io.talos.server.scheduling;

/**
 * What {@link TaskPool#submit(Task)} did with a task. Rejections are expected outcomes (back-
 * pressure, shutdown), returned as values on the hot path rather than thrown; a rejected task is
 * never called by the pool and its submitter answers the request with a retriable error.
 *
 * <p>Thread-safety: immutable.
 */
public enum Admission {
  /** Queued: the pool will call exactly one of run/runBatch, expire or fail on it. */
  ACCEPTED,
  /** Refused because {@link PoolConfig#maxWaitingTasks()} tasks are already waiting; retry later. */
  REJECTED_FULL,
  /** Refused because the pool is closing or closed; retry on another server or after restart. */
  REJECTED_CLOSED;

  public boolean accepted() {
    return this == ACCEPTED;
  }
}
