package io.talos.server.frontend;

import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.IteratingCallback;

/**
 * Writes a reply held in one array to the response in slices of at most {@link #SLICE_BYTES},
 * each after the previous one was written.
 *
 * <p>Why: Jetty hands a heap buffer to the socket channel, and the JDK copies a heap buffer into
 * a temporary direct buffer of the whole remaining size before the system call. The server runs
 * with {@code -Djdk.nio.maxCachedBufferSize=262144} (so that threads do not each keep a cached
 * direct buffer as large as the largest reply they ever wrote), so a 2 MiB getMessage reply
 * written in one piece cost a fresh 2 MiB direct allocation, its zeroing, its page faults and its
 * release on every get (6% of the server's CPU reading back 100 B messages). Slices no larger
 * than the cache limit reuse the thread's cached buffer. Replies up to one slice are written in
 * one call as before.
 *
 * <p>Sets {@code Content-Length}: with several writes Jetty would otherwise answer chunked.
 * One instance per reply; Jetty calls it back from one write at a time.
 */
final class SlicedReplyWrite extends IteratingCallback {
  /** Half the server's {@code jdk.nio.maxCachedBufferSize}: a slice always fits the cached buffer. */
  static final int SLICE_BYTES = 128 * 1024;

  private final Response response;
  private final byte[] reply;
  private final Callback callback;
  private int written;

  private SlicedReplyWrite(Response response, byte[] reply, Callback callback) {
    this.response = response;
    this.reply = reply;
    this.callback = callback;
  }

  /** Writes {@code reply} as the whole body and completes {@code callback} when it was written. */
  static void write(Response response, byte[] reply, Callback callback) {
    if (reply.length <= SLICE_BYTES) {
      response.write(true, ByteBuffer.wrap(reply), callback);
      return;
    }
    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, reply.length);
    new SlicedReplyWrite(response, reply, callback).iterate();
  }

  @Override
  protected Action process() {
    if (written == reply.length) return Action.SUCCEEDED;
    int n = Math.min(SLICE_BYTES, reply.length - written);
    ByteBuffer slice = ByteBuffer.wrap(reply, written, n);
    written += n;
    response.write(written == reply.length, slice, this);
    return Action.SCHEDULED;
  }

  @Override
  protected void onCompleteSuccess() {
    callback.succeeded();
  }

  @Override
  protected void onCompleteFailure(Throwable cause) {
    callback.failed(cause);
  }

  @Override
  public InvocationType getInvocationType() {
    return callback.getInvocationType();
  }
}
