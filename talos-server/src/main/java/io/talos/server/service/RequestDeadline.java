package io.talos.server.service;

/**
 * The deadline of the request being served on this thread, in ms of the server clock: storage
 * calls made for it wait no longer (see {@link Topics#openLog}). Bound by the front-end around a
 * call it serves with a deadline (a put or get carries {@code timeoutTimestamp}, or gets {@code
 * scheduling.deadline.default.ms}); unbound, callers use their own default. Like {@link
 * io.talos.server.frontend.RequestContext}, code handing work to another thread passes it along.
 */
public final class RequestDeadline {
  /** No deadline bound on this thread. */
  public static final long NONE = 0L;
  private static final ThreadLocal<Long> CURRENT = new ThreadLocal<>();

  private RequestDeadline() {}

  /** The bound deadline, or {@link #NONE}. */
  public static long current() {
    Long d = CURRENT.get();
    return d == null ? NONE : d;
  }

  public static void bind(long deadlineMs) {
    CURRENT.set(deadlineMs);
  }

  public static void unbind() {
    CURRENT.remove();
  }
}
