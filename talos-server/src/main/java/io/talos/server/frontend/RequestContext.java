package io.talos.server.frontend;

import io.talos.server.metadata.Credential;

/**
 * Who sent the request being served and what their client understands.
 *
 * <p>Bound to the serving thread for the duration of one service call by {@link
 * ThriftDispatcher} (Thrift's generated service interfaces cannot carry it as a parameter);
 * handlers read it with {@link #current()}. Code that hands work to another thread must capture
 * it first and pass it along explicitly.
 *
 * @param talosClient whether the client is our SDK (understands Talos extension error codes)
 */
public record RequestContext(Credential credential, boolean talosClient, String requestId) {
  private static final ThreadLocal<RequestContext> CURRENT = new ThreadLocal<>();

  public static RequestContext current() {
    RequestContext ctx = CURRENT.get();
    if (ctx == null) throw new IllegalStateException("no request is being served on this thread");
    return ctx;
  }

  /** Binds {@code ctx} to this thread until {@link #unbind()}; the task pool's workers use it too. */
  public static void bind(RequestContext ctx) {
    CURRENT.set(ctx);
  }

  public static void unbind() {
    CURRENT.remove();
  }
}
