package io.talos.server.frontend;

import io.talos.server.scheduling.ThreadSlicePolicy;
import java.util.Objects;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * Jetty's thread pool (names, daemon flag, sizing and idle handling unchanged) whose threads move
 * to the scheduler slice {@code slices} says before each job ({@link ThreadSlicePolicy}): the
 * API's HTTP threads, which read, authenticate and answer every request. Thread-safe as {@link
 * QueuedThreadPool}.
 */
public final class SlicedThreadPool extends QueuedThreadPool {
  private final ThreadSlicePolicy slices;

  public SlicedThreadPool(int maxThreads, ThreadSlicePolicy slices) {
    super(maxThreads);
    this.slices = Objects.requireNonNull(slices, "slices");
  }

  @Override
  protected void runJob(Runnable job) {
    slices.applyToCurrentThread();
    super.runJob(job);
  }
}
