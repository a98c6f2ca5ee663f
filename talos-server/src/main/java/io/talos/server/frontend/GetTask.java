package io.talos.server.frontend;

import java.util.List;
import java.util.function.IntConsumer;
import java.util.function.Predicate;

import com.codahale.metrics.MetricRegistry;
import io.talos.common.errors.TalosErrors;
import io.talos.server.storage.ReadBufferPool;
import io.talos.server.storage.ReadLease;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.GetMessageRequest;
import io.talos.thrift.GetMessageResponse;
import io.talos.thrift.MessageService;
import org.apache.thrift.TBase;

/**
 * A getMessage call served by a pool worker: the whole call (topic resolution, read, reply) runs
 * there.
 *
 * <p>Long poll: a request with {@code maxWaitMs} that finds nothing new is parked in the
 * {@link FetchWaiters} instead of answered, and no thread waits for it. An append to its
 * partition hands the task back to the pool ({@code resubmit}), which runs it again and answers
 * with the new messages; the end of its wait answers the empty result. The wait ends at
 * {@code min(maxWaitMs, message.get.wait.max.ms)} after arrival, and early enough before the
 * request's deadline for the answer to reach the client in time. Long-poll answers carry
 * {@code waitedMs}, which tells the client that this server honours the wait.
 *
 * <p>Not thread-safe; the pool runs each run of the task on one thread, and a parked task is
 * run again only after its waiter was claimed (so never concurrently).
 */
final class GetTask extends MessageCallTask {
  /** Runs of one get that found nothing while appends kept arriving; then it is answered. */
  private static final int MAX_RERUNS = 3;

  private final ThriftDispatcher dispatcher;
  /** Told the size of the answer (the read bytes: the get quota charges them). */
  private final IntConsumer afterRead;
  private final FetchWaiters waiters;
  private final Predicate<GetTask> resubmit;
  private final long arrivalMs;
  /** When a parked wait ends; {@code <= arrivalMs} when the request does not long-poll. */
  private final long waitEndMs;
  private final String topic;
  private final int partition;
  /** The call's request (null if it had none), whose maxGetMessageBytes the budget may lower. */
  private final GetMessageRequest request;
  /** Bounds the answer bytes of all gets held at once; null: unbounded. */
  private final GetReplyBudget budget;
  /** The request's own maxGetMessageBytes (0: the server's maximum), before any budget lowered it. */
  private final int askedMaxBytes;
  /** Where reads take the buffers the answer refers to until it is sent ({@link ReadLease}). */
  private final ReadBufferPool readBuffers;
  private volatile MessageService.getMessage_result lastResult;

  GetTask(ThriftDispatcher dispatcher, ThriftDispatcher.Call call, RequestContext ctx, PendingReply reply,
      MetricRegistry metrics, int priority, long clockOffsetMs, StorageCalls storage) {
    this(dispatcher, call, ctx, reply, metrics, priority, clockOffsetMs, storage, bytes -> { }, null, t -> false, null,
        ReadBufferPool.NONE);
  }

  /**
   * @param afterRead told the size of the answer once read (the get quota charges it)
   * @param waiters where a long-polling get parks; null: long poll is off (answers at once and
   *     without {@code waitedMs}, as a server without the extension)
   * @param resubmit hands a woken get back to the task pool; false if the pool refused it
   * @param budget bounds the answer bytes of all gets held at once; null: unbounded
   * @param readBuffers the buffers reads may take for the answer, given back once it was sent
   */
  GetTask(ThriftDispatcher dispatcher, ThriftDispatcher.Call call, RequestContext ctx, PendingReply reply,
      MetricRegistry metrics, int priority, long clockOffsetMs, StorageCalls storage, IntConsumer afterRead,
      FetchWaiters waiters, Predicate<GetTask> resubmit, GetReplyBudget budget, ReadBufferPool readBuffers) {
    this(dispatcher, call, ctx, reply, metrics, priority, clockOffsetMs, storage,
        ((MessageService.getMessage_args) call.args()).getRequest(), afterRead, waiters, resubmit, budget,
        readBuffers);
  }

  private GetTask(ThriftDispatcher dispatcher, ThriftDispatcher.Call call, RequestContext ctx, PendingReply reply,
      MetricRegistry metrics, int priority, long clockOffsetMs, StorageCalls storage, GetMessageRequest request,
      IntConsumer afterRead, FetchWaiters waiters, Predicate<GetTask> resubmit, GetReplyBudget budget,
      ReadBufferPool readBuffers) {
    super(call, ctx, reply, metrics, priority, request == null ? null : request.getTopicAndPartition(),
        request != null && request.isSetTimeoutTimestamp() ? request.getTimeoutTimestamp() : null, clockOffsetMs,
        storage);
    this.dispatcher = dispatcher;
    this.request = request;
    this.readBuffers = java.util.Objects.requireNonNull(readBuffers, "readBuffers");
    // a get without a request, or with a negative maxGetMessageBytes, is refused by the service
    // as it stands; the budget only sizes gets that can be served
    this.budget = request != null && (!request.isSetMaxGetMessageBytes() || request.getMaxGetMessageBytes() >= 0)
        ? budget : null;
    this.askedMaxBytes = request != null && request.isSetMaxGetMessageBytes() ? request.getMaxGetMessageBytes() : 0;
    this.afterRead = afterRead;
    this.resubmit = resubmit;
    this.arrivalMs = storage.clock().millis();
    long wait = 0;
    if (waiters != null && waiters.maxWaitMs() > 0 && request != null && request.isSetMaxWaitMs()
        && request.getMaxWaitMs() > 0 && request.getTopicAndPartition() != null) {
      wait = Math.min(request.getMaxWaitMs(), waiters.maxWaitMs());
      // Leave the answer time to reach the client before its own timeout (the request's deadline).
      long room = deadlineMs() - arrivalMs;
      wait = Math.min(wait, room - Math.min(1000, room / 2));
    }
    this.waiters = wait > 0 ? waiters : null;
    this.waitEndMs = arrivalMs + Math.max(0, wait);
    this.topic = request == null || request.getTopicAndPartition() == null ? ""
        : request.getTopicAndPartition().getTopicName();
    this.partition = request == null || request.getTopicAndPartition() == null ? -1
        : request.getTopicAndPartition().getPartitionId();
  }

  /** Whether this get may be parked (it asked for a wait and this server grants one). */
  boolean longPoll() {
    return waiters != null;
  }

  @Override
  public void run() {
    // On a storage thread: a stalled read is answered at the request's deadline (StorageCalls).
    storage.run(this::serve, List.of(this));
  }

  private void serve() {
    // Each read (a long-polled get may read more than once) first reserves its answer's room.
    for (int run = 0; ; run++) {
      GetReplyBudget.Reservation held = budget == null ? null : budget.reserve(askedMaxBytes);
      if (budget != null && held == null) {
        refuse();
        return;
      }
      if (held != null) request.setMaxGetMessageBytes(held.grantedBytes());
      // the read's buffers and the budget's room are both given back once the answer was sent
      ReadLease lease = new ReadLease(readBuffers);
      Runnable release = held == null ? lease::release : () -> {
        lease.release();
        held.release();
      };
      try {
        if (waiters == null) {
          EncodedReply answer = read(lease, null);
          afterRead.accept(answer.length());
          if (held != null) held.resizeTo(answer.length());
          replyEncoded(answer, release);
          return;
        }
        FetchWaiters.Slot slot = waiters.slot(topic, partition);
        long seen = slot.appends(); // before the read: see FetchWaiters
        MessageService.getMessage_result[] result = new MessageService.getMessage_result[1];
        EncodedReply encoded = read(lease, r -> result[0] = (MessageService.getMessage_result) r);
        if (result[0] == null || !result[0].isSetSuccess()) {
          replyEncoded(encoded, release); // an error: answered at once, never parked
          return;
        }
        lastResult = result[0];
        GetMessageResponse response = result[0].getSuccess();
        long now = storage.clock().millis();
        if (response.getMessageNumber() > 0 || now >= waitEndMs || run >= MAX_RERUNS) {
          if (held != null) held.resizeTo(encoded.length());
          answerLast(release);
          return;
        }
        release.run(); // nothing read: parked or read again with a new reservation
        FetchWaiters.Waiter waiter = new FetchWaiters.Waiter(this::woken, () -> answerLast(() -> { }));
        switch (waiters.park(slot, seen, waiter, waitEndMs - now)) {
          case PARKED:
            return; // answered by woken() or at the end of the wait
          case CHANGED:
            continue; // an append came in meanwhile: read again
          default:
            answerLast(() -> { }); // no room to park: answer now, the client fetches again
            return;
        }
      } catch (RuntimeException | Error e) {
        release.run();
        throw e;
      }
    }
  }

  /**
   * Runs the call with {@code lease} bound to this thread: the read puts the blocks in its buffers,
   * which the encoded answer refers to (see {@link ExactSizeEncoder#encodeGathered}).
   */
  @SuppressWarnings("rawtypes")
  private EncodedReply read(ReadLease lease, java.util.function.Consumer<TBase> result) {
    ReadLease.bind(lease);
    try {
      return dispatcher.executeGathered(call, ctx, result);
    } finally {
      ReadLease.unbind();
    }
  }

  /** Nothing left of message.get.inflight.max.bytes: answered at once, the client retries. */
  private void refuse() {
    reply(errorResult(TalosErrors.of(ErrorCode.EXCESSIVE_PENDING_MESSAGE, "the server already holds "
        + budget.usedBytes() + " bytes of getMessage answers being read or sent, its limit"
        + " (message.get.inflight.max.bytes=" + budget.maxBytes() + "); retry later")));
  }

  /** An append woke the parked get: read again on a pool worker. */
  private void woken() {
    if (!resubmit.test(this)) answerLast(() -> { });
  }

  /**
   * Answers the last (empty or not) result, with the time this get was held; {@code release}
   * runs once it has been sent.
   */
  private void answerLast(Runnable release) {
    MessageService.getMessage_result result = lastResult;
    result.getSuccess().setWaitedMs(Math.max(0, storage.clock().millis() - arrivalMs));
    long bytes = 0;
    if (result.getSuccess().getMessageBlocks() != null) {
      for (io.talos.thrift.MessageBlock block : result.getSuccess().getMessageBlocks()) {
        bytes += block.messageBlock == null ? 0 : block.messageBlock.remaining(); // the getter copies
      }
    }
    afterRead.accept((int) Math.min(Integer.MAX_VALUE, bytes));
    replyEncoded(ThriftDispatcher.gatheredReply(call, result), release);
  }

  @Override
  TBase<?, ?> errorResult(GalaxyTalosException error) {
    return new MessageService.getMessage_result().setE(error);
  }
}
