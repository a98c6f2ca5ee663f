package io.talos.server.frontend;

import com.codahale.metrics.MetricRegistry;
import io.talos.common.errors.TalosErrors;
import io.talos.server.scheduling.Task;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.TopicAndPartition;
import org.apache.thrift.TBase;

/**
 * What a putMessage or getMessage call served by the task pool has in common: its scheduling key
 * (the partition the request names), priority and deadline (the request's timeoutTimestamp), the
 * caller's context, and the pending HTTP reply that an answer completes exactly once.
 *
 * <p>Not thread-safe; the pool runs each task once on one thread.
 */
abstract class MessageCallTask implements Task {
  final ThriftDispatcher.Call call;
  final RequestContext ctx;
  private final PendingReply reply;
  private final MetricRegistry metrics;
  private final PartitionKey key;
  private final int priority;
  private final long deadlineMs;

  /**
   * @param partition the partition the request names (null when it names none: the service
   *     call then answers the error)
   * @param timeoutTimestamp the request's deadline on the client's clock, or null
   * @param clockOffsetMs server clock minus client clock, added to the deadline
   */
  MessageCallTask(ThriftDispatcher.Call call, RequestContext ctx, PendingReply reply, MetricRegistry metrics,
      int priority, TopicAndPartition partition, Long timeoutTimestamp, long clockOffsetMs, StorageCalls storage) {
    this.call = call;
    this.ctx = ctx;
    this.reply = reply;
    this.metrics = metrics;
    this.key = partition == null ? new PartitionKey("", -1)
        : new PartitionKey(partition.getTopicName(), partition.getPartitionId());
    this.priority = priority;
    // A deadline that maps to <= 0 would mean "none" to the pool: keep it expired instead.
    // No timeoutTimestamp: the default deadline from now, fixed here so that the storage call
    // (StorageCalls) and the pool agree on it.
    this.deadlineMs = timeoutTimestamp == null ? storage.clock().millis() + storage.defaultDeadlineMs()
        : Math.max(1, timeoutTimestamp + clockOffsetMs);
    this.storage = storage;
  }

  final StorageCalls storage;

  /** Whether the deadline has passed already: the front-end then answers without queueing. */
  final boolean expiredAt(long nowMs) {
    return deadlineMs < nowMs;
  }

  /** The storage call did not finish by this request's deadline (it may still finish later). */
  final void storageTimedOut() {
    fail(TalosErrors.of(ErrorCode.REQUEST_PROCESS_TIMEOUT, call.method() + " did not finish by its deadline "
        + deadlineMs + ": storage is not answering" + (call.method().equals("putMessage")
        ? "; the messages may or may not have been stored" : "") + "; retry"));
  }

  /** Every storage thread is taken by calls storage does not answer: refused without waiting. */
  final void storageBusy(int threads) {
    fail(TalosErrors.of(ErrorCode.HDFS_OPERATION_FAILED, "storage is not answering: all " + threads
        + " storage threads (storage.io.threads) are taken by stalled calls; nothing was done, retry later"));
  }

  @Override
  public final Object key() {
    return key;
  }

  @Override
  public final int priority() {
    return priority;
  }

  @Override
  public final long deadlineMs() {
    return deadlineMs;
  }

  @Override
  public final void expire() {
    fail(TalosErrors.of(ErrorCode.REQUEST_PROCESS_TIMEOUT, call.method() + " waited in the queue past its deadline "
        + deadlineMs + " and was not served (nothing was written); retry"));
  }

  /**
   * Answers the call with the wire error for {@code cause}. An OutOfMemoryError is answered with
   * a short Thrift application error (the client must not hang) and then rethrown, never
   * swallowed.
   */
  @Override
  public final void fail(Throwable cause) {
    if (cause instanceof OutOfMemoryError) {
      metrics.meter("http.status.500").mark();
      reply.complete(ThriftDispatcher.applicationException(call.method(), call.message().seqid,
          org.apache.thrift.TApplicationException.INTERNAL_ERROR, "the server ran out of memory serving " + call.method()));
      throw (OutOfMemoryError) cause;
    }
    reply(errorResult(ErrorBoundary.answer(call.method(), cause, metrics, ctx)));
  }

  /** Sends the encoded reply for this call's {@code *_result} struct. */
  final void reply(TBase<?, ?> result) {
    reply.complete(ThriftDispatcher.reply(call, result));
  }

  final void replyEncoded(byte[] encoded) {
    reply.complete(encoded);
  }

  /**
   * Sends the encoded reply and runs {@code afterSent} once it has been written; runs it at once
   * when the call was answered already (a deadline answer came first: this reply is dropped).
   */
  final void replyEncoded(byte[] encoded, Runnable afterSent) {
    replyEncoded(EncodedReply.of(encoded), afterSent);
  }

  /** As {@link #replyEncoded(byte[], Runnable)}, for a reply in parts. */
  final void replyEncoded(EncodedReply encoded, Runnable afterSent) {
    if (!reply.complete(encoded, afterSent)) afterSent.run();
  }

  /** This method's {@code *_result} struct carrying {@code error}. */
  abstract TBase<?, ?> errorResult(GalaxyTalosException error);
}
