package io.talos.server.frontend;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.codahale.metrics.Timer;
import java.io.ByteArrayOutputStream;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.Test;

/**
 * How a reply served on a task-pool worker is written to the HTTP response. The response is a
 * recording stand-in (the logic under test is which writes are made); replies over real HTTP are
 * covered by the end-to-end get tests.
 */
class PendingReplyTest {
  /** A response that records its writes and completes each at once. */
  private static final class RecordingResponse {
    final HttpFields.Mutable headers = HttpFields.build();
    final List<Integer> writes = new ArrayList<>();
    final List<Boolean> lasts = new ArrayList<>();
    final List<Boolean> direct = new ArrayList<>();
    final ByteArrayOutputStream body = new ByteArrayOutputStream();
    int status;

    Response proxy() {
      return (Response) Proxy.newProxyInstance(Response.class.getClassLoader(), new Class<?>[] {Response.class},
          (self, method, args) -> switch (method.getName()) {
            case "getHeaders" -> headers;
            case "setStatus" -> {
              status = (Integer) args[0];
              yield null;
            }
            case "write" -> {
              ByteBuffer b = (ByteBuffer) args[1];
              writes.add(b.remaining());
              direct.add(b.isDirect());
              lasts.add((Boolean) args[0]);
              byte[] copy = new byte[b.remaining()];
              b.get(copy);
              body.writeBytes(copy);
              ((Callback) args[2]).succeeded();
              yield null;
            }
            case "hashCode" -> System.identityHashCode(self);
            case "equals" -> self == args[0];
            case "toString" -> "RecordingResponse";
            default -> throw new UnsupportedOperationException(method.getName());
          });
    }
  }

  private static byte[] reply(int bytes) {
    byte[] b = new byte[bytes];
    for (int i = 0; i < bytes; i++) b[i] = (byte) (i * 31 + 7);
    return b;
  }

  @Test
  void aLargeReplyIsWrittenInSlicesThatFitTheCachedDirectBuffer() {
    RecordingResponse r = new RecordingResponse();
    AtomicInteger succeeded = new AtomicInteger();
    AtomicInteger sent = new AtomicInteger();
    PendingReply pending = new PendingReply(r.proxy(), Callback.from(succeeded::incrementAndGet, failure -> { }),
        new Timer().time(), () -> { });
    byte[] reply = reply(3 * SlicedReplyWrite.SLICE_BYTES + 1234);

    assertTrue(pending.complete(EncodedReply.of(reply), sent::incrementAndGet));

    assertEquals(List.of(SlicedReplyWrite.SLICE_BYTES, SlicedReplyWrite.SLICE_BYTES, SlicedReplyWrite.SLICE_BYTES,
        1234), r.writes, "a reply over one slice must be written slice by slice (written in one piece, the"
        + " JDK copies it through a fresh direct buffer of its whole size on every get)");
    assertEquals(List.of(false, false, false, true), r.lasts);
    assertEquals(String.valueOf(reply.length), r.headers.get(HttpHeader.CONTENT_LENGTH));
    assertEquals(200, r.status);
    assertEquals(ApiHandler.THRIFT_CONTENT_TYPE, r.headers.get(HttpHeader.CONTENT_TYPE));
    assertArrayEquals(reply, r.body.toByteArray());
    assertEquals(1, succeeded.get());
    assertEquals(1, sent.get());
  }

  /**
   * A reply in parts (framing between views of stored blocks) is staged through one direct buffer
   * of the pool: full slices, small parts written together, the bytes in order, and the buffer
   * back in the pool once the reply is written.
   */
  @Test
  void aReplyInPartsIsStagedThroughOnePooledDirectBuffer() {
    RecordingResponse r = new RecordingResponse();
    AtomicInteger succeeded = new AtomicInteger();
    int stage = SlicedReplyWrite.STAGE_BYTES;
    byte[] whole = reply(2 * stage + 5000);
    // parts of every kind of size: tiny framing, a block larger than the buffer, one across its end
    int[] cuts = {0, 3, 10, 10 + stage + 17, 10 + stage + 20, 2 * stage + 100, whole.length};
    ByteBuffer[] parts = new ByteBuffer[cuts.length - 1];
    for (int i = 0; i + 1 < cuts.length; i++) parts[i] = ByteBuffer.wrap(whole, cuts[i], cuts[i + 1] - cuts[i]);
    org.eclipse.jetty.io.ArrayByteBufferPool pool = new org.eclipse.jetty.io.ArrayByteBufferPool();

    SlicedReplyWrite.write(r.proxy(), EncodedReply.ofParts(parts), Callback.from(succeeded::incrementAndGet,
        failure -> { }), pool);

    assertEquals(List.of(stage, stage, 5000), r.writes);
    assertEquals(List.of(false, false, true), r.lasts);
    assertEquals(List.of(true, true, true), r.direct, "staged in a direct buffer: the JDK copies nothing more");
    assertEquals(String.valueOf(whole.length), r.headers.get(HttpHeader.CONTENT_LENGTH));
    assertArrayEquals(whole, r.body.toByteArray());
    assertEquals(1, succeeded.get());
    assertEquals(1, pool.getAvailableDirectByteBufferCount(), "the staging buffer went back to the pool");
  }

  /**
   * A part in a direct buffer (a block read into a pooled read buffer) is written from where it
   * lies, not copied into the staging buffer; the parts around it are staged as before.
   */
  @Test
  void aPartInADirectBufferIsWrittenFromWhereItLies() {
    RecordingResponse r = new RecordingResponse();
    byte[] whole = reply(300_000);
    ByteBuffer block = ByteBuffer.allocateDirect(200_000).put(whole, 50, 200_000).flip();
    ByteBuffer[] parts = {ByteBuffer.wrap(whole, 0, 20), ByteBuffer.wrap(whole, 20, 30), block.duplicate(),
        ByteBuffer.allocateDirect(0), ByteBuffer.wrap(whole, 200_050, 99_950)};
    org.eclipse.jetty.io.ArrayByteBufferPool pool = new org.eclipse.jetty.io.ArrayByteBufferPool();
    AtomicInteger succeeded = new AtomicInteger();

    SlicedReplyWrite.write(r.proxy(), EncodedReply.ofParts(parts), Callback.from(succeeded::incrementAndGet,
        failure -> { }), pool);

    int stage = SlicedReplyWrite.STAGE_BYTES;
    assertEquals(List.of(50, 200_000, stage, 99_950 - stage), r.writes);
    assertEquals(List.of(false, false, false, true), r.lasts);
    assertArrayEquals(whole, r.body.toByteArray());
    assertEquals(1, succeeded.get());
    assertEquals(1, pool.getAvailableDirectByteBufferCount(), "the staging buffer went back to the pool");
  }

  @Test
  void aSmallReplyIsOneWriteAndASecondCompletionIsDropped() {
    RecordingResponse r = new RecordingResponse();
    AtomicInteger succeeded = new AtomicInteger();
    AtomicInteger released = new AtomicInteger();
    PendingReply pending = new PendingReply(r.proxy(), Callback.from(succeeded::incrementAndGet, failure -> { }),
        new Timer().time(), released::incrementAndGet);

    assertTrue(pending.complete(reply(100)));
    assertFalse(pending.complete(reply(200)));

    assertEquals(List.of(100), r.writes);
    assertEquals(List.of(true), r.lasts);
    assertEquals(1, succeeded.get());
    assertEquals(1, released.get());
  }
}
