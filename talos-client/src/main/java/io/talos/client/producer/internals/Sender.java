package io.talos.client.producer.internals;

import com.codahale.metrics.Timer;
import io.talos.client.TalosException;
import io.talos.client.admin.TalosAdmin;
import io.talos.client.internals.TalosRpc;
import io.talos.client.producer.DeliveryTimeoutException;
import io.talos.client.producer.ProducerClosedException;
import io.talos.client.producer.ProducerConfig;
import io.talos.client.producer.RecordMetadata;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.InitProducerIdRequest;
import io.talos.thrift.InitProducerIdResponse;
import io.talos.thrift.MessageBlock;
import io.talos.thrift.PutMessageRequest;
import io.talos.thrift.PutMessageResponse;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicTalosResourceName;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.apache.thrift.TApplicationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves batches from the {@link RecordAccumulator} to the server. {@link #runOnce} is one turn of
 * the sender thread's loop: refresh the partition count when due, fail batches past
 * {@code delivery.timeout.ms}, and hand ready batches (one per partition at most, up to
 * {@code max.in.flight.requests} at once) to the I/O executor, where {@link #send} makes one
 * put request of each; an I/O thread whose put was answered takes the next ready batch itself.
 *
 * <p>After a put: success completes every record of the batch with its offset; a retriable
 * failure ({@link TalosException#isRetriable()}: PARTITION_NOT_SERVING and the other retriable
 * codes, timeouts, lost connections, HTTP 408/429/5xx) puts the batch back at the head of its
 * partition's queue to be sent again after a backoff of {@code retry.backoff.ms * 2^(n-1)}
 * (at most {@code retry.backoff.max.ms}), unless {@code retries} are used up or the next try
 * would start after the batch's delivery deadline; any other failure fails every record of the
 * batch with that exception.
 *
 * <p><b>Idempotent produce</b> ({@code enable.idempotence}, on by default): before the first
 * batch the sender asks the server for a producer id ({@code initProducerId}); each batch gets,
 * when first sent, the next sequence of its partition (0, 1, 2, ...) and keeps producer id and
 * sequence on every retry. The server stores a batch once and answers a repeat with the first
 * offsets. Since a partition has one batch in flight, the sequences reach the server in order.
 * The rule that keeps them without gaps: <i>a partition's next sequence under a producer id is
 * used only if the server answered the batch that took the previous one as stored.</i> A batch
 * that got a sequence and then left without that answer (failed for good, expired while waiting
 * for a retry, aborted on close) may or may not be stored, so its successor would be a gap the
 * server refuses (OUT_OF_ORDER_SEQUENCE, not retriable): the successor takes a new producer id
 * instead and starts that partition over at sequence 0 (batches in flight keep their id). The
 * check is made when the successor is given its sequence, under the same lock as the success
 * that confirms the previous one, and a batch is confirmed before it leaves its queue; so it
 * holds whichever thread (sender or I/O) drains the successor, and however the removal of an
 * expired batch interleaves with that drain. A batch never sent has no sequence and leaves none
 * behind: only a partition's head is sent, so no later batch of the partition has one either.
 * A server without {@code initProducerId} (older version: unknown method, or NOT_SUPPORTED)
 * gets plain puts, with a warning.
 *
 * <p>Thread-safe: {@link #runOnce} runs on one thread at a time; {@link #send} on the I/O
 * threads, one per batch.
 */
public final class Sender implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(Sender.class);

  private final TalosRpc rpc;
  private final TalosAdmin admin;
  private final TopicMetadata topic;
  private final RecordAccumulator accumulator;
  private final BufferMemory memory;
  private final ProducerMetrics metrics;
  private final ProducerConfig config;
  private final LongSupplier clockMs;
  private final Executor io;
  private final String clientId;
  // read once: used per batch, and the config's getters are map lookups
  private final int maxInFlight;
  private final long deliveryTimeoutMs;
  private final boolean idempotence;
  private final AtomicLong nextRequest = new AtomicLong(1);
  private long nextRefreshMs;
  /** Idempotent produce: the current producer id and next sequence per partition; null until asked. */
  private ProducerIdentity identity;
  private boolean idempotenceUnsupported;
  private final Object identityLock = new Object();

  /**
   * A producer id, the next sequence of each partition under it, and how many of those the server
   * confirmed stored. Guarded by identityLock.
   */
  private static final class ProducerIdentity {
    final long producerId;
    /** Indexed by partition; grown when a higher partition appears. */
    int[] nextSequence = new int[0];
    /** Indexed by partition: sequences below it were answered as stored; grown with nextSequence. */
    int[] storedBelow = new int[0];

    ProducerIdentity(long producerId) {
      this.producerId = producerId;
    }
  }

  public Sender(TalosRpc rpc, TopicMetadata topic, RecordAccumulator accumulator,
      BufferMemory memory, ProducerMetrics metrics, ProducerConfig config, LongSupplier clockMs,
      Executor io, String clientId) {
    this.rpc = rpc;
    this.admin = new TalosAdmin(rpc);
    this.topic = topic;
    this.accumulator = accumulator;
    this.memory = memory;
    this.metrics = metrics;
    this.config = config;
    this.clockMs = clockMs;
    this.io = io;
    this.clientId = clientId;
    this.maxInFlight = config.maxInFlightRequests();
    this.deliveryTimeoutMs = config.deliveryTimeoutMs();
    this.idempotence = config.enableIdempotence();
    this.nextRefreshMs = clockMs.getAsLong() + config.metadataRefreshIntervalMs();
  }

  /** Loops {@link #runOnce} until the accumulator is closed and empty. */
  @Override
  public void run() {
    try {
      while (true) {
        long waitMs = runOnce();
        if (accumulator.isClosed() && accumulator.isEmpty()) return;
        accumulator.awaitWork(waitMs);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException | Error e) {
      LOG.error("producer sender of topic '{}' stopped by an unexpected error", topic.topicName(), e);
      throw e;
    }
  }

  /**
   * One turn: refresh metadata when due, expire, dispatch ready batches.
   *
   * @return ms until the next turn is due if nothing wakes the sender earlier
   */
  public long runOnce() {
    long now = clockMs.getAsLong();
    if (now >= nextRefreshMs) {
      refreshMetadata();
      now = clockMs.getAsLong();
      nextRefreshMs = now + config.metadataRefreshIntervalMs();
    }
    for (ProducerBatch expired : accumulator.expire(now, deliveryTimeoutMs)) {
      fail(expired, deliveryTimeout(expired, now), false);
    }
    for (ProducerBatch batch : accumulator.drain(now, Integer.MAX_VALUE, maxInFlight)) {
      try {
        io.execute(() -> send(batch));
      } catch (RejectedExecutionException e) {
        fail(batch, new ProducerClosedException(
            "the producer was closed before the batch could be sent"), true);
      }
    }
    long next = Math.min(accumulator.nextReadyMs(now), nextRefreshMs);
    // Wake up at the latest when a waiting batch reaches its delivery deadline.
    return Math.max(1, Math.min(next - now, deliveryTimeoutMs));
  }

  /**
   * Sends one batch (on an I/O thread) and settles its outcome; then, while a batch is ready and
   * a request slot free, sends that one too. Under a steady load the thread that got an answer
   * goes on with the next batch at once, instead of waking the sender thread, which would wake
   * another I/O thread: two thread hand-offs per put fewer, which is what a put's round trip is
   * made of on a busy machine. The sender thread still dispatches lingering batches and retries.
   */
  void send(ProducerBatch batch) {
    ProducerBatch next = batch;
    while (next != null) {
      sendOne(next);
      if (Thread.currentThread().isInterrupted()) return; // closing: the producer abandons requests
      List<ProducerBatch> ready = accumulator.drain(clockMs.getAsLong(), 1, maxInFlight);
      next = ready.isEmpty() ? null : ready.get(0);
    }
  }

  private void sendOne(ProducerBatch batch) {
    batch.attempts++;
    try {
      PutMessageRequest request = request(batch);
      PutMessageResponse response;
      try (Timer.Context ignored = metrics.requestLatency.time()) {
        response = rpc.message(request.getTopicAndPartition(), c -> c.putMessage(request));
      }
      succeed(batch, response.isSetStartMessageOffset()
          ? response.getStartMessageOffset() : RecordMetadata.UNKNOWN_OFFSET);
    } catch (TalosException e) {
      batch.lastError = e;
      long now = clockMs.getAsLong();
      long backoff = backoffMs(batch.attempts);
      boolean inTime = now + backoff < batch.createdMs + deliveryTimeoutMs;
      if (e.isRetriable() && batch.attempts <= config.retries() && inTime) {
        LOG.debug("put of {} records to partition {} of '{}' failed (attempt {}), retrying in {} ms: {}",
            batch.recordCount(), batch.partition, topic.topicName(), batch.attempts, backoff,
            e.getMessage());
        metrics.retries.mark();
        accumulator.retryLater(batch, now + backoff);
      } else {
        fail(batch, e.isRetriable() && !inTime ? deliveryTimeout(batch, now) : e, true);
      }
    } catch (RuntimeException e) {
      batch.lastError = e;
      LOG.error("put to partition {} of '{}' failed unexpectedly", batch.partition, topic.topicName(), e);
      fail(batch, e, true);
    }
  }

  private PutMessageRequest request(ProducerBatch batch) {
    // One block per batch; the sequence id names the batch and stays the same on retries.
    // The block is encoded (and compressed) once; retries send the same bytes.
    MessageBlock block = batch.block;
    if (block == null) {
      assignSequence(batch); // may ask the server for a producer id; nothing is set if that fails
      batch.sequenceId = clientId + "#" + nextRequest.getAndIncrement();
      // the records were serialized into the batch when appended: this only ends the block
      block = batch.finishBlock();
      metrics.batchRecords.update(batch.recordCount());
      metrics.batchBytes.update(batch.serializedBytes);
      metrics.batchCompressedBytes.update(block.getMessageBlockSize());
    }
    TopicAndPartition target = new TopicAndPartition(topic.topicName(),
        new TopicTalosResourceName(topic.resourceName()), batch.partition);
    PutMessageRequest request = new PutMessageRequest(target, List.of(block), batch.recordCount(), batch.sequenceId)
        .setTimeoutTimestamp(rpc.nowMs() + rpc.config().requestTimeoutMs());
    if (batch.producerId > 0) {
      request.setProducerId(batch.producerId).setProducerSequence(batch.producerSequence);
    }
    return request;
  }

  /** Idempotent produce: gives a batch about to be sent for the first time its producer id and sequence. */
  private void assignSequence(ProducerBatch batch) {
    if (!idempotence) return;
    synchronized (identityLock) {
      if (idempotenceUnsupported) return;
      if (identity == null) {
        InitProducerIdResponse r;
        try {
          r = rpc.message(c -> c.initProducerId(new InitProducerIdRequest().setClientId(clientId)));
        } catch (TalosException e) {
          if (e.errorCode() == ErrorCode.NOT_SUPPORTED || (e.getCause() instanceof TApplicationException ae
              && ae.getType() == TApplicationException.UNKNOWN_METHOD)) {
            LOG.warn("the server does not offer idempotent produce (no initProducerId); topic '{}' is"
                + " produced to at least once", topic.topicName());
            idempotenceUnsupported = true;
            return;
          }
          throw e;
        }
        identity = new ProducerIdentity(r.getProducerId());
        LOG.debug("producer of topic '{}' got producer id {}", topic.topicName(), r.getProducerId());
      }
      int p = batch.partition;
      if (p >= identity.nextSequence.length) {
        int size = Math.max(p + 1, topic.partitionCount());
        identity.nextSequence = Arrays.copyOf(identity.nextSequence, size);
        identity.storedBelow = Arrays.copyOf(identity.storedBelow, size);
      }
      if (identity.storedBelow[p] != identity.nextSequence[p]) {
        // the partition's previous batch under this id left without being stored (expired or
        // failed): the server may lack its sequence and would refuse the next one as a gap
        LOG.debug("producer id {}: sequence {} of partition {} was not stored; taking a new id",
            identity.producerId, identity.nextSequence[p] - 1, p);
        identity = null;
        assignSequence(batch);
        return;
      }
      int seq = identity.nextSequence[p]++;
      batch.producerId = identity.producerId;
      batch.producerSequence = seq;
    }
  }

  /** Idempotent produce: the server stored a batch's sequence, so the partition may go on under its id. */
  private void confirmStored(ProducerBatch batch) {
    if (batch.producerId <= 0) return;
    synchronized (identityLock) {
      if (identity != null && identity.producerId == batch.producerId) {
        identity.storedBelow[batch.partition] = batch.producerSequence + 1;
      }
    }
  }

  // Records are told their outcome before the batch leaves the accumulator: the partition's next
  // batch cannot be sent before, so callbacks of one partition run in send order.
  // The memory is released first, so that a thread woken by a future can send again at once.
  private void succeed(ProducerBatch batch, long firstOffset) {
    confirmStored(batch); // before the partition's next batch can be drained
    memory.release(batch.heldBytes);
    metrics.recordsSent.mark(batch.recordCount());
    metrics.bytesSent.mark(batch.serializedBytes);
    int i = 0;
    for (ProducerBatch.Entry e : batch.entries) {
      long offset = firstOffset == RecordMetadata.UNKNOWN_OFFSET ? firstOffset : firstOffset + i;
      RecordMetadata m = new RecordMetadata(topic.topicName(), batch.partition, offset,
          e.createTimestampMs());
      callback(e, m, null);
      e.future().complete(m);
      i++;
    }
    accumulator.completed(batch);
    batch.markDone();
  }

  /**
   * Fails every record of a batch.
   *
   * @param inFlight whether the batch is still the in-flight head of its queue (else it was
   *     already removed, by expiry or abort)
   */
  public void fail(ProducerBatch batch, Exception error, boolean inFlight) {
    memory.release(batch.heldBytes);
    metrics.recordsFailed.mark(batch.recordCount());
    LOG.debug("{} records for partition {} of '{}' failed: {}", batch.recordCount(),
        batch.partition, topic.topicName(), error.toString());
    for (ProducerBatch.Entry e : batch.entries) {
      callback(e, null, error);
      e.future().completeExceptionally(error);
    }
    if (inFlight) accumulator.completed(batch);
    batch.markDone();
  }

  private void callback(ProducerBatch.Entry e, RecordMetadata m, Exception error) {
    if (e.callback() == null) return;
    try {
      e.callback().onCompletion(m, error);
    } catch (RuntimeException ex) {
      LOG.warn("a producer callback for topic '{}' threw; ignored", topic.topicName(), ex);
    }
  }

  private DeliveryTimeoutException deliveryTimeout(ProducerBatch batch, long now) {
    Exception last = batch.lastError;
    return new DeliveryTimeoutException(batch.recordCount() + " records for partition "
        + batch.partition + " of topic '" + topic.topicName() + "' were not stored within "
        + ProducerConfig.DELIVERY_TIMEOUT_MS + "=" + deliveryTimeoutMs + " ("
        + (now - batch.createdMs) + " ms since the batch was opened, " + batch.attempts
        + " attempts" + (last == null ? "" : "; last error: " + last.getMessage()) + ")", last);
  }

  private long backoffMs(int attempts) {
    int shift = Math.min(30, Math.max(0, attempts - 1));
    long b = config.retryBackoffMs() << shift;
    return b <= 0 ? config.retryBackoffMaxMs() : Math.min(b, config.retryBackoffMaxMs());
  }

  private void refreshMetadata() {
    try {
      int before = topic.partitionCount();
      if (topic.refresh(admin)) {
        LOG.info("topic '{}' grew from {} to {} partitions", topic.topicName(), before,
            topic.partitionCount());
      }
    } catch (TalosException e) {
      LOG.warn("could not refresh the partition count of topic '{}' (trying again in {} ms): {}",
          topic.topicName(), config.metadataRefreshIntervalMs(), e.getMessage());
    }
  }
}
