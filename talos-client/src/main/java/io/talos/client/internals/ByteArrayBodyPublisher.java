package io.talos.client.internals;

import java.net.http.HttpRequest;
import java.nio.ByteBuffer;
import java.util.concurrent.Flow;

/**
 * A request body of {@code body[0, length)} handed to the HTTP client as one buffer over the
 * array itself. The JDK's {@code BodyPublishers.ofByteArray} copies the array into new buffers
 * first; for a producer's put of a 1 MiB batch that is one more megabyte to allocate and copy.
 *
 * <p>Each subscription (the client subscribes again when it resends) gets its own buffer over the
 * array, so a resend starts from the first byte. The array must not change while a request is
 * sent; callers hand over an array nobody writes to any more.
 */
final class ByteArrayBodyPublisher implements HttpRequest.BodyPublisher {
  private final byte[] body;
  private final int length;

  ByteArrayBodyPublisher(byte[] body, int length) {
    if (length < 0 || length > body.length) {
      throw new IllegalArgumentException("length " + length + " outside 0.." + body.length);
    }
    this.body = body;
    this.length = length;
  }

  @Override
  public long contentLength() {
    return length;
  }

  @Override
  public void subscribe(Flow.Subscriber<? super ByteBuffer> subscriber) {
    subscriber.onSubscribe(new Flow.Subscription() {
      private boolean done;

      @Override
      public synchronized void request(long n) {
        if (done) return;
        if (n <= 0) {
          done = true;
          subscriber.onError(new IllegalArgumentException("request(" + n + "): must be > 0"));
          return;
        }
        done = true;
        if (length > 0) subscriber.onNext(ByteBuffer.wrap(body, 0, length));
        subscriber.onComplete();
      }

      @Override
      public synchronized void cancel() {
        done = true;
      }
    });
  }
}
