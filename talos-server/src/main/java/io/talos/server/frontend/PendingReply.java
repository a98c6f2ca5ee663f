package io.talos.server.frontend;

import com.codahale.metrics.Timer;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The HTTP response of a request whose call is served later, on a task-pool worker. Completing it
 * writes the Thrift reply and ends the request; only the first completion counts, so a task that
 * is answered twice by mistake (a batch failure after a partial answer) can never corrupt a
 * response. Thread-safe.
 */
final class PendingReply {
  /** Sends a reply, then runs the second argument (if not null) once it has been written or failed. */
  private final java.util.function.BiConsumer<EncodedReply, Runnable> sink;
  private final Timer.Context timer;
  private final Runnable onComplete;
  private final AtomicBoolean done = new AtomicBoolean();

  /** @param onComplete run once when the reply is sent (releases what the request held) */
  PendingReply(Response response, Callback callback, Timer.Context timer, Runnable onComplete) {
    this((reply, sent) -> ApiHandler.reply(response, sent == null ? callback
        : Callback.from(callback.getInvocationType(), () -> {
          sent.run();
          callback.succeeded();
        }, failure -> {
          sent.run();
          callback.failed(failure);
        }), reply), timer, onComplete);
  }

  /** A reply that goes to {@code sink} instead of an HTTP response (a request forwarded by a peer). */
  PendingReply(java.util.function.Consumer<byte[]> sink, Timer.Context timer, Runnable onComplete) {
    this((reply, sent) -> {
      try {
        sink.accept(reply.toArray());
      } finally {
        if (sent != null) sent.run();
      }
    }, timer, onComplete);
  }

  private PendingReply(java.util.function.BiConsumer<EncodedReply, Runnable> sink, Timer.Context timer,
      Runnable onComplete) {
    this.sink = sink;
    this.timer = timer;
    this.onComplete = onComplete;
  }

  /** @return false if the reply had been sent already (this one is dropped) */
  boolean complete(byte[] thriftReply) {
    return complete(EncodedReply.of(thriftReply), null);
  }

  /**
   * As {@link #complete(byte[])}, and runs {@code afterSent} once the reply has been written (or
   * its write failed); not at all when this reply is dropped (false), the caller then runs it.
   */
  boolean complete(EncodedReply thriftReply, Runnable afterSent) {
    if (!done.compareAndSet(false, true)) return false;
    timer.stop();
    onComplete.run();
    sink.accept(thriftReply, afterSent);
    return true;
  }
}
