package io.talos.server.frontend;

import io.talos.server.scheduling.ThreadSlice;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * Jetty's thread pool (names, daemon flag, sizing and idle handling unchanged) whose threads ask
 * the kernel for a scheduler slice of {@code sliceUs} before their first task ({@link
 * ThreadSlice}): the API's HTTP threads, which read, authenticate and answer every request.
 * Thread-safe as {@link QueuedThreadPool}.
 */
public final class SlicedThreadPool extends QueuedThreadPool {
  private final int sliceUs;

  /** @param sliceUs 0 (the kernel's default) or between {@link ThreadSlice#MIN_US} and {@link ThreadSlice#MAX_US} */
  public SlicedThreadPool(int maxThreads, int sliceUs) {
    super(maxThreads);
    this.sliceUs = sliceUs;
  }

  @Override
  public Thread newThread(Runnable runnable) {
    return super.newThread(ThreadSlice.around(sliceUs, runnable));
  }
}
