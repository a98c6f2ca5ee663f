package io.talos.server.frontend;

import com.codahale.metrics.MetricRegistry;
import io.talos.server.scheduling.MergeableTask;
import io.talos.server.scheduling.Task;
import io.talos.server.service.MessageServiceHandler;
import io.talos.server.service.MessageServiceHandler.PreparedPut;
import io.talos.server.storage.PartitionLog;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.MessageBlock;
import io.talos.thrift.MessageService;
import io.talos.thrift.PutMessageRequest;
import java.util.ArrayList;
import java.util.List;
import org.apache.thrift.TBase;

/**
 * A putMessage call served by a pool worker, mergeable with the puts of the same partition
 * waiting behind it (group commit): a batch validates each put on its own (a bad put fails alone),
 * writes all valid ones with one write, and acknowledges each with its own offsets once a flush
 * covering them returned, or fails all of them if the append failed (then none is stored). The
 * append is pipelined ({@link io.talos.server.storage.PartitionLog#appendPutsAsync}): the worker
 * does not wait for the flush, so the partition's next batch is written while it is in flight.
 *
 * <p>Not thread-safe; the pool runs each batch once on one thread.
 */
final class PutTask extends MessageCallTask implements MergeableTask<PutTask> {
  private final MessageServiceHandler handler;
  private final PutMessageRequest request;
  private final long sizeBytes;
  /** Set by the front-end when it checked the put before charging quotas; read by the pool worker after the hand-off. */
  private volatile MessageServiceHandler.ValidatedPut validated;

  PutTask(MessageServiceHandler handler, ThriftDispatcher.Call call, RequestContext ctx, PendingReply reply,
      MetricRegistry metrics, int priority, long clockOffsetMs, StorageCalls storage) {
    this(handler, call, ctx, reply, metrics, priority, clockOffsetMs, storage,
        ((MessageService.putMessage_args) call.args()).getRequest());
  }

  private PutTask(MessageServiceHandler handler, ThriftDispatcher.Call call, RequestContext ctx, PendingReply reply,
      MetricRegistry metrics, int priority, long clockOffsetMs, StorageCalls storage, PutMessageRequest request) {
    super(call, ctx, reply, metrics, priority, request == null ? null : request.getTopicAndPartition(),
        request != null && request.isSetTimeoutTimestamp() ? request.getTimeoutTimestamp() : null, clockOffsetMs,
        storage);
    this.handler = handler;
    this.request = request;
    long bytes = 0;
    if (request != null && request.getMessageBlocks() != null) {
      for (MessageBlock b : request.getMessageBlocks()) {
        bytes += b.messageBlock == null ? 0 : b.messageBlock.remaining(); // the field: the getter copies
      }
    }
    this.sizeBytes = bytes;
  }

  /** The put's arguments, already checked ({@link MessageServiceHandler#validatePut}): not checked again. */
  void validated(MessageServiceHandler.ValidatedPut put) {
    this.validated = put;
  }

  @Override
  public long sizeBytes() {
    return sizeBytes;
  }

  @Override
  public boolean canMergeWith(Task next) {
    return next instanceof PutTask;
  }

  /**
   * Never throws: every task of the batch is answered here, exactly once (the storage part on a
   * storage thread, each task at its deadline at the latest: see {@link StorageCalls}).
   */
  @Override
  public void runBatch(List<PutTask> batch) {
    storage.run(() -> runBatchOnStorage(batch), batch);
  }

  private void runBatchOnStorage(List<PutTask> batch) {
    List<PutTask> valid = new ArrayList<>(batch.size());
    List<PreparedPut> prepared = new ArrayList<>(batch.size());
    for (PutTask task : batch) {
      RequestContext.bind(task.ctx);
      try {
        MessageServiceHandler.ValidatedPut checked = task.validated;
        prepared.add(checked != null ? handler.preparePut(checked) : handler.preparePut(task.request));
        valid.add(task);
      } catch (Throwable e) {
        task.fail(e);
      } finally {
        RequestContext.unbind();
      }
    }
    // Normally one log; two only if the topic was re-created between the puts of a batch.
    while (!valid.isEmpty()) {
      PartitionLog log = prepared.get(0).log();
      List<PutTask> group = new ArrayList<>();
      List<PreparedPut> groupPuts = new ArrayList<>();
      for (int i = 0; i < valid.size(); i++) {
        if (prepared.get(i).log() == log) {
          group.add(valid.get(i));
          groupPuts.add(prepared.get(i));
        }
      }
      try {
        // Pipelined: this returns once the puts are written; they are answered when their flush
        // returns (on the log's flusher thread), while this worker goes on with the partition's
        // next puts. Each is answered at its deadline at the latest.
        java.util.concurrent.CompletableFuture<PartitionLog.PutResult[]> durable = handler.appendAllAsync(log, groupPuts);
        if (!durable.isDone()) storage.answerAtDeadline(group, durable);
        durable.whenComplete((results, e) -> answer(group, groupPuts, results, e));
      } catch (Throwable e) {
        for (PutTask t : group) t.fail(e);
      }
      for (int i = valid.size() - 1; i >= 0; i--) {
        if (prepared.get(i).log() == log) {
          valid.remove(i);
          prepared.remove(i);
        }
      }
    }
  }

  /** Answers each put of one append: its offsets, or the failure of the whole append. Never throws. */
  private static void answer(List<PutTask> group, List<PreparedPut> puts, PartitionLog.PutResult[] results,
      Throwable failure) {
    if (failure != null) {
      for (PutTask t : group) t.fail(failure);
      return;
    }
    for (int i = 0; i < group.size(); i++) {
      io.talos.thrift.PutMessageResponse response;
      try {
        response = puts.get(i).response(results[i]);
      } catch (GalaxyTalosException refused) { // out of order: this put alone
        group.get(i).fail(refused);
        continue;
      } catch (RuntimeException e) {
        group.get(i).fail(e);
        continue;
      }
      group.get(i).succeed(response);
    }
  }

  private void succeed(io.talos.thrift.PutMessageResponse response) {
    reply(new MessageService.putMessage_result().setSuccess(response));
  }

  @Override
  TBase<?, ?> errorResult(GalaxyTalosException error) {
    return new MessageService.putMessage_result().setE(error);
  }
}
