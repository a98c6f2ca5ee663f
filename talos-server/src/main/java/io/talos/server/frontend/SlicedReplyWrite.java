package io.talos.server.frontend;

import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.io.RetainableByteBuffer;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.IteratingCallback;

/**
 * Writes a reply to the response in slices of at most {@link #SLICE_BYTES}, each after the
 * previous one was written.
 *
 * <p>Why slices: Jetty hands a heap buffer to the socket channel, and the JDK copies a heap buffer
 * into a temporary direct buffer of the whole remaining size before the system call. The server
 * runs with {@code -Djdk.nio.maxCachedBufferSize=262144} (so that threads do not each keep a cached
 * direct buffer as large as the largest reply they ever wrote), so a 2 MiB getMessage reply
 * written in one piece cost a fresh 2 MiB direct allocation, its zeroing, its page faults and its
 * release on every get (6% of the server's CPU reading back 100 B messages). Slices no larger
 * than the cache limit reuse the thread's cached buffer. Replies up to one slice are written in
 * one call as before.
 *
 * <p>A reply in several parts (a getMessage reply that refers to its stored blocks, see {@link
 * ExactSizeEncoder#encodeGathered}): a part in a direct buffer (a block read into a pooled read
 * buffer) is written from where it lies; the others are copied part after part into one direct
 * buffer of {@link #STAGE_BYTES}, taken from Jetty's pool for the reply's duration and written
 * from there, one buffer's worth (or the bytes up to the next direct part) at a time: their bytes
 * are copied once on their way to the socket (the JDK copies nothing more for a direct buffer),
 * and small parts are written together rather than one system call each.
 *
 * <p>Sets {@code Content-Length}: with several writes Jetty would otherwise answer chunked.
 * One instance per reply; Jetty calls it back from one write at a time.
 */
final class SlicedReplyWrite extends IteratingCallback {
  /** Half the server's {@code jdk.nio.maxCachedBufferSize}: a slice always fits the cached buffer. */
  static final int SLICE_BYTES = 128 * 1024;
  /**
   * The staging buffer of a reply in parts: the largest that Jetty's default buffer pool keeps
   * (a larger one would be allocated and zeroed for every reply, then dropped).
   */
  static final int STAGE_BYTES = 64 * 1024;

  private final Response response;
  private final EncodedReply reply;
  private final Callback callback;
  /** Where a reply in parts takes its staging buffer; null: the response's connector's pool. */
  private final ByteBufferPool pool;
  private RetainableByteBuffer staging;
  /** A reply in one part: the rest of it to write, or null before the first slice. */
  private ByteBuffer current;
  /** A reply in parts: where the next staged bytes come from; null for a reply in one part. */
  private final EncodedReply.Reader reader;
  private int written;

  private SlicedReplyWrite(Response response, EncodedReply reply, Callback callback, ByteBufferPool pool) {
    this.response = response;
    this.reply = reply;
    this.callback = callback;
    this.pool = pool;
    this.reader = reply.partCount() == 1 ? null : reply.reader();
  }

  /** Writes {@code reply} as the whole body and completes {@code callback} when it was written. */
  static void write(Response response, EncodedReply reply, Callback callback) {
    write(response, reply, callback, null);
  }

  /** @param pool where a reply in parts takes its staging buffer; null: the response's connector's */
  static void write(Response response, EncodedReply reply, Callback callback, ByteBufferPool pool) {
    if (reply.partCount() == 1 && reply.length() <= SLICE_BYTES) {
      response.write(true, reply.part(0), callback);
      return;
    }
    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, reply.length());
    new SlicedReplyWrite(response, reply, callback, pool).iterate();
  }

  private static ByteBufferPool poolOf(Response response) {
    Request request = response.getRequest();
    return request == null ? ByteBufferPool.NON_POOLING : request.getComponents().getByteBufferPool();
  }

  @Override
  protected Action process() {
    if (written == reply.length()) return Action.SUCCEEDED;
    ByteBuffer slice = reader == null ? nextSliceOfTheOnlyPart() : nextStagedSlice();
    written += slice.remaining();
    response.write(written == reply.length(), slice, this);
    return Action.SCHEDULED;
  }

  /** A reply in one array: the next slice of it, written from the array itself. */
  private ByteBuffer nextSliceOfTheOnlyPart() {
    if (current == null) current = reply.part(0);
    ByteBuffer slice = current.slice(current.position(), Math.min(SLICE_BYTES, current.remaining()));
    current.position(current.position() + slice.remaining());
    return slice;
  }

  /**
   * A reply in parts: the next part itself if it lies in a direct buffer, else the next bytes up
   * to such a part or to the staging buffer's size, copied into it.
   */
  private ByteBuffer nextStagedSlice() {
    ByteBuffer direct = reader.takeDirectPart();
    if (direct != null) return direct;
    if (staging == null) staging = (pool != null ? pool : poolOf(response)).acquire(STAGE_BYTES, true);
    ByteBuffer out = staging.getByteBuffer();
    out.clear();
    out.limit(Math.min(out.capacity(), STAGE_BYTES));
    reader.copyUntilDirectPart(out);
    out.flip();
    return out;
  }

  @Override
  protected void onCompleteSuccess() {
    releaseStaging();
    callback.succeeded();
  }

  @Override
  protected void onCompleteFailure(Throwable cause) {
    releaseStaging();
    callback.failed(cause);
  }

  /** Once no write is pending (Jetty completes a write before calling back): the buffer goes back. */
  private void releaseStaging() {
    if (staging != null) {
      staging.release();
      staging = null;
    }
  }

  @Override
  public InvocationType getInvocationType() {
    return callback.getInvocationType();
  }
}
