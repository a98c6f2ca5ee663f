package io.talos.server.scheduling;

/**
 * Passed to {@link Task#fail(Throwable)} for a task that was still waiting when {@link
 * TaskPool#close()} was called: the task never ran, so the request can be retried as is.
 *
 * <p>Thread-safety: immutable once thrown; one instance is shared by every task failed by a close.
 */
public final class TaskPoolClosedException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public TaskPoolClosedException() {
    super("task pool is shutting down: the task was not run; retry the request");
  }
}
