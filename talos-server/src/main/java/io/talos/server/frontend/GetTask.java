package io.talos.server.frontend;

import java.util.List;

import com.codahale.metrics.MetricRegistry;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.GetMessageRequest;
import io.talos.thrift.MessageService;
import org.apache.thrift.TBase;

/**
 * A getMessage call served by a pool worker: the whole call (topic resolution, read, reply) runs
 * there. Not thread-safe; the pool runs each task once on one thread.
 */
final class GetTask extends MessageCallTask {
  private final ThriftDispatcher dispatcher;
  /** Told the size of the encoded answer (the read bytes: the get quota charges them). */
  private final java.util.function.IntConsumer afterRead;

  GetTask(ThriftDispatcher dispatcher, ThriftDispatcher.Call call, RequestContext ctx, PendingReply reply,
      MetricRegistry metrics, int priority, long clockOffsetMs, StorageCalls storage,
      java.util.function.IntConsumer afterRead) {
    this(dispatcher, call, ctx, reply, metrics, priority, clockOffsetMs, storage,
        ((MessageService.getMessage_args) call.args()).getRequest(), afterRead);
  }

  private GetTask(ThriftDispatcher dispatcher, ThriftDispatcher.Call call, RequestContext ctx, PendingReply reply,
      MetricRegistry metrics, int priority, long clockOffsetMs, StorageCalls storage, GetMessageRequest request,
      java.util.function.IntConsumer afterRead) {
    super(call, ctx, reply, metrics, priority, request == null ? null : request.getTopicAndPartition(),
        request != null && request.isSetTimeoutTimestamp() ? request.getTimeoutTimestamp() : null, clockOffsetMs,
        storage);
    this.dispatcher = dispatcher;
    this.afterRead = afterRead;
  }

  @Override
  public void run() {
    // On a storage thread: a stalled read is answered at the request's deadline (StorageCalls).
    storage.run(() -> {
      byte[] answer = dispatcher.execute(call, ctx);
      afterRead.accept(answer.length);
      replyEncoded(answer);
    }, List.of(this));
  }

  @Override
  TBase<?, ?> errorResult(GalaxyTalosException error) {
    return new MessageService.getMessage_result().setE(error);
  }
}
