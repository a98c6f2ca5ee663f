package io.talos.server.frontend;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;

/**
 * Reads one request body without holding a thread while the client is slow: it reads what has
 * arrived, then asks Jetty to call it back when more arrives ({@link Request#demand}). A client
 * trickling its body therefore costs a socket and the bytes it sent, never a Jetty thread.
 *
 * <p>Limits, each answered with a status and a message naming the configuration key:
 * <ul>
 *   <li>more than {@code maxBytes} (declared or sent): 413, after discarding up to four times the
 *       limit so that a client still sending gets to read the answer;
 *   <li>an average arrival rate below {@code minBytesPerSec} once {@code graceMs} have passed: 408
 *       (checked whenever bytes arrive; a client that sends nothing at all is cut by the
 *       connection's idle timeout, also 408);
 *   <li>bytes that do not fit the shared {@link BodyBudget}: 503 with Retry-After.
 * </ul>
 * Any refusal leaves unread content behind, so Jetty closes the connection after the answer.
 *
 * <p>Memory: a body with a declared length is received into one array of that length, allocated
 * (and reserved in the {@link BodyBudget}) when its first bytes arrive, so it is copied once from
 * the network buffers and never regrown; the headers were authenticated before, so only a client
 * holding a secret key gets that far, and a declared length over the limit is refused unread. A
 * body of unknown length (chunked) grows by doubling with the bytes received. The budget counts
 * the arrays' capacity, which is what the server holds.
 *
 * <p>Not thread-safe by itself; Jetty runs at most one demand callback of a request at a time.
 */
final class RequestBodyReader implements Runnable {
  /** What happens with the body: exactly one method is called, once. */
  interface Outcome {
    /** The whole body; {@code body.release()} must be called when it is no longer held. */
    void complete(Body body);

    /** The body was refused; answer {@code status} with {@code message}. */
    void refused(int status, String message);
  }

  /** A received body and its reservation in the {@link BodyBudget}. */
  static final class Body {
    private final byte[] bytes;
    private final int length;
    private final BodyBudget budget;
    private long reserved;

    Body(byte[] bytes, int length, BodyBudget budget, long reserved) {
      this.bytes = bytes;
      this.length = length;
      this.budget = budget;
      this.reserved = reserved;
    }

    byte[] bytes() {
      return bytes;
    }

    int length() {
      return length;
    }

    /** Returns the bytes to the budget; idempotent. */
    synchronized void release() {
      budget.release(reserved);
      reserved = 0;
    }
  }

  /** The limits a body is read under; shared by all requests. */
  record Limits(int maxBytes, long minBytesPerSec, long graceMs, BodyBudget budget, LongSupplier nanoClock) {}

  private static final int INITIAL_CAPACITY = 16 * 1024;
  private static final byte[] EMPTY = new byte[0];

  private final Request request;
  private final Limits limits;
  private final Outcome outcome;
  private final long startNanos;
  private final long declared;
  private byte[] buffer = EMPTY;
  private int length;
  /** Bytes reserved in the budget: the capacity of {@link #buffer}. */
  private long reserved;
  /** Set when the body is too large: the rest is read and dropped, then 413 is answered. */
  private long discarded = -1;
  private boolean finished;
  /** Most bytes a {@link #drainThen} reader drops; -1 for a reader that keeps the body. */
  private long drainLimit = -1;

  private RequestBodyReader(Request request, Limits limits, Outcome outcome) {
    this.request = request;
    this.limits = limits;
    this.outcome = outcome;
    this.startNanos = limits.nanoClock().getAsLong();
    this.declared = request.getLength();
  }

  /** Starts reading {@code request}'s body; {@code outcome} is called on this or a Jetty thread. */
  static void read(Request request, Limits limits, Outcome outcome) {
    RequestBodyReader reader = new RequestBodyReader(request, limits, outcome);
    if (reader.declared > limits.maxBytes()) reader.discarded = 0;
    reader.run();
  }

  /**
   * Reads and drops a body of at most {@code maxBytes} under the same rate limits, then runs
   * {@code answer}; runs it at once when the declared body is larger (or empty). For answers given
   * before the body is needed (401, 404, 409, ...): a client still writing its body when the
   * server answered and closed the connection would see a broken pipe instead of the answer. A
   * larger, slower or failing body gets the answer too, and the connection is closed after it.
   */
  static void drainThen(Request request, Limits limits, long maxBytes, Runnable answer) {
    long declared = request.getLength();
    if (declared == 0 || declared > maxBytes) {
      answer.run();
      return;
    }
    RequestBodyReader reader = new RequestBodyReader(request, limits, new Outcome() {
      @Override
      public void complete(Body body) {
        answer.run();
      }

      @Override
      public void refused(int status, String message) {
        answer.run();
      }
    });
    reader.drainLimit = maxBytes;
    reader.discarded = 0;
    reader.run();
  }

  /** Reads what has arrived; registers for a callback when nothing more is available. */
  @Override
  public void run() {
    while (!finished) {
      Content.Chunk chunk = request.read();
      if (chunk == null) {
        request.demand(this);
        return;
      }
      if (Content.Chunk.isFailure(chunk)) {
        Throwable failure = chunk.getFailure();
        chunk.release();
        refuse(failure instanceof TimeoutException ? 408 : 400, failure instanceof TimeoutException
            ? "the request body stopped arriving (server.http.idle.timeout.ms)"
            : "cannot read the request body: " + failure);
        return;
      }
      boolean last = chunk.isLast();
      try {
        if (!accept(chunk.getByteBuffer())) return;
      } finally {
        chunk.release();
      }
      if (last) {
        finish();
        return;
      }
      if (tooSlow()) return;
    }
  }

  /** @return false when the body was refused */
  private boolean accept(ByteBuffer bytes) {
    int n = bytes.remaining();
    if (n == 0) return true;
    if (discarded >= 0) {
      discarded += n;
      if (discarded > (drainLimit >= 0 ? drainLimit : 4L * limits.maxBytes())) {
        refuseTooLarge();
        return false;
      }
      return true;
    }
    if ((long) length + n > limits.maxBytes()) {
      releaseReservation();
      buffer = EMPTY;
      length = 0;
      discarded = n;
      return true;
    }
    if (length + n > buffer.length) {
      // A declared length is allocated whole when the first bytes arrive: one array, no regrowth
      // copies. Only an authenticated request gets here (headers are checked before the body).
      long cap = declared >= 0 ? Math.max((long) length + n, declared)
          : Math.max((long) length + n, Math.max(INITIAL_CAPACITY, 2L * buffer.length));
      cap = Math.min(cap, limits.maxBytes());
      long grow = cap - buffer.length;
      if (!limits.budget().tryReserve(grow)) {
        refuse(503, "the server is receiving too many request bytes at once (server.request.body.inflight.max.bytes = "
            + limits.budget().maxBytes() + "); retry later");
        return false;
      }
      reserved += grow;
      buffer = java.util.Arrays.copyOf(buffer, (int) cap);
    }
    bytes.get(buffer, length, n);
    length += n;
    return true;
  }

  /** @return true when the body was refused for arriving too slowly */
  private boolean tooSlow() {
    long minRate = limits.minBytesPerSec();
    if (minRate <= 0) return false;
    long elapsedMs = (limits.nanoClock().getAsLong() - startNanos) / 1_000_000;
    long graceMs = limits.graceMs();
    if (elapsedMs <= graceMs) return false;
    long received = discarded >= 0 ? discarded : length;
    // A body that has wholly arrived is not slow, however long it took (a client, or this server,
    // may have waited for a CPU): only the end-of-content marker is still to be read.
    if (declared >= 0 && received >= declared) return false;
    // Bytes that should have arrived by now at the minimum rate, counting from the grace period's end.
    if (received >= (elapsedMs - graceMs) * minRate / 1000) return false;
    refuse(408, "the request body arrives too slowly: " + received + " bytes in " + elapsedMs
        + " ms; at least " + minRate + " bytes/s is required after the first " + graceMs
        + " ms (server.request.body.min.bytes.per.sec, server.request.body.rate.grace.ms)");
    return true;
  }

  private void finish() {
    if (drainLimit >= 0) {
      finished = true;
      outcome.complete(null);
      return;
    }
    if (discarded >= 0) {
      refuseTooLarge();
      return;
    }
    finished = true;
    Body body = new Body(buffer, length, limits.budget(), reserved);
    reserved = 0;
    outcome.complete(body);
  }

  private void refuseTooLarge() {
    refuse(413, "request body " + (declared > limits.maxBytes() ? "of " + declared + " bytes " : "")
        + "exceeds the limit of " + limits.maxBytes() + " bytes (server.request.max.bytes)");
  }

  private void refuse(int status, String message) {
    finished = true;
    releaseReservation();
    buffer = null;
    outcome.refused(status, message);
  }

  private void releaseReservation() {
    limits.budget().release(reserved);
    reserved = 0;
  }
}
