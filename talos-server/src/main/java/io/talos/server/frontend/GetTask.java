package io.talos.server.frontend;

import com.codahale.metrics.MetricRegistry;
import io.talos.common.errors.TalosErrors;
import io.talos.server.scheduling.Task;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GetMessageRequest;
import io.talos.thrift.MessageService;

/**
 * A getMessage call served by a pool worker: the whole call (topic resolution, read, reply) runs
 * there. Not thread-safe; the pool runs each task once on one thread.
 */
final class GetTask implements Task {
  private final ThriftDispatcher dispatcher;
  private final ThriftDispatcher.Call call;
  private final RequestContext ctx;
  private final PendingReply reply;
  private final MetricRegistry metrics;
  private final PartitionKey key;
  private final int priority;
  private final long deadlineMs;

  GetTask(ThriftDispatcher dispatcher, ThriftDispatcher.Call call, RequestContext ctx, PendingReply reply,
      MetricRegistry metrics, int priority) {
    this.dispatcher = dispatcher;
    this.call = call;
    this.ctx = ctx;
    this.reply = reply;
    this.metrics = metrics;
    GetMessageRequest request = ((MessageService.getMessage_args) call.args()).getRequest();
    this.key = request == null || request.getTopicAndPartition() == null ? new PartitionKey("", -1)
        : new PartitionKey(request.getTopicAndPartition().getTopicName(), request.getTopicAndPartition().getPartitionId());
    this.priority = priority;
    this.deadlineMs = request != null && request.isSetTimeoutTimestamp() ? request.getTimeoutTimestamp() : NO_DEADLINE;
  }

  @Override
  public Object key() {
    return key;
  }

  @Override
  public int priority() {
    return priority;
  }

  @Override
  public long deadlineMs() {
    return deadlineMs;
  }

  @Override
  public void run() {
    reply.complete(dispatcher.execute(call, ctx));
  }

  @Override
  public void expire() {
    fail(TalosErrors.of(ErrorCode.REQUEST_PROCESS_TIMEOUT, "getMessage waited in the queue past its deadline "
        + deadlineMs + " and was not served; retry"));
  }

  @Override
  public void fail(Throwable cause) {
    reply.complete(ThriftDispatcher.reply(call, new MessageService.getMessage_result()
        .setE(ErrorBoundary.answer(call.method(), cause, metrics, ctx))));
  }
}
