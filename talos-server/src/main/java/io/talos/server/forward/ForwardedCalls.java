package io.talos.server.forward;

import java.util.function.Consumer;

/**
 * What serves forwarded requests on the owner: the front-end's own path (decode, argument limits,
 * the partition route, the task pool). {@code reply} gets the Thrift reply exactly once, on any
 * thread; it is never called with null. Implementations are thread-safe.
 */
public interface ForwardedCalls {
  void serve(ForwardedRequest request, Consumer<byte[]> reply);
}
