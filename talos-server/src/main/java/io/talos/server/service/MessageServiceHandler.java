package io.talos.server.service;

import io.talos.common.errors.TalosErrors;
import io.talos.server.metadata.TopicRecord;
import io.talos.server.storage.BlockToAppend;
import io.talos.server.storage.CorruptRecordException;
import io.talos.server.storage.OffsetOutOfRangeException;
import io.talos.server.storage.PartitionDataMissingException;
import io.talos.server.storage.PartitionFencedException;
import io.talos.server.storage.PartitionLogClosedException;
import io.talos.server.storage.PartitionLog;
import io.talos.server.storage.PartitionOffsets;
import io.talos.server.storage.PartitionLogs;
import io.talos.server.storage.ReadablePartition;
import io.talos.server.storage.ReadLease;
import io.talos.server.storage.StoredBlock;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.GetMessageRequest;
import io.talos.thrift.GetOffsetForTimestampRequest;
import io.talos.thrift.GetOffsetForTimestampResponse;
import io.talos.thrift.GetMessageResponse;
import io.talos.thrift.GetPartitionOffsetRequest;
import io.talos.thrift.GetPartitionOffsetResponse;
import io.talos.thrift.GetPartitionsOffsetRequest;
import io.talos.thrift.GetPartitionsOffsetResponse;
import io.talos.thrift.GetTopicOffsetRequest;
import io.talos.thrift.GetTopicOffsetResponse;
import io.talos.thrift.InitProducerIdRequest;
import io.talos.thrift.InitProducerIdResponse;
import io.talos.thrift.MessageBlock;
import io.talos.thrift.MessageCompressionType;
import io.talos.thrift.MessageOffset;
import io.talos.thrift.MessageService;
import io.talos.thrift.OffsetInfo;
import io.talos.thrift.PutMessageRequest;
import io.talos.thrift.PutMessageResponse;
import io.talos.thrift.TopicAndPartition;
import io.talos.server.ops.PartitionMeters;
import io.talos.server.storage.StorageFailureLog;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;

/**
 * MessageService: put and get message blocks, and read partition offsets.
 *
 * <p>Offsets as the SDK sees them: a partition holds messages [startOffset, endOffset] (endOffset
 * inclusive; an empty partition reports startOffset = its next offset and endOffset = startOffset
 * − 1, so a new partition reports 0 and −1). A get at the next offset to be written is "caught up"
 * and answers no blocks; below startOffset or beyond the next offset it is
 * MESSAGE_OFFSET_OUT_OF_RANGE. START_OFFSET (−1) reads from startOffset; LATEST_OFFSET (−2) from
 * the last existing message (or startOffset when empty), so a consumer started at "latest" sees
 * the newest message and everything after it.
 *
 * <p>Blocks are validated before they are stored (see {@link MessageBlockValidator}): a block
 * the SDK could not decode would otherwise make every consumer of the partition retry forever.
 * Thread-safe.
 */
public final class MessageServiceHandler extends BaseServiceHandler implements MessageService.Iface {
  /** Appends tried on a log closed meanwhile, each on the log opened again, before giving up. */
  private static final int CLOSED_LOG_ATTEMPTS = 3;
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(MessageServiceHandler.class);
  private final Topics topics;
  private final PartitionLogs logs;
  private final Clock clock;
  private final MessageBlockValidator validator;
  private final int maxGetMessages;
  private final int maxGetBytes;
  private final PartitionMeters meters;
  private final StorageFailureLog failures;
  private final SecureRandom producerIds = new SecureRandom();
  private volatile AppendListener appendListener = (topic, partition) -> { };

  /** Told of every successful append, once its messages are readable (long poll wakes on it). */
  @FunctionalInterface
  public interface AppendListener {
    /**
     * Must not block: runs on the thread that completed the append, once its messages are
     * readable, after the append's future completed: puts already waiting on that future (the
     * flush completed on a flusher thread) are answered first. Where the appending thread flushed
     * itself the future completes before the puts wait on it, so this runs first; the gets it
     * wakes are then queued behind that thread's run, which answers the puts.
     */
    void appended(String topicName, int partitionId);
  }

  /** Sets the one listener of appends; set before the server serves requests. */
  public void setAppendListener(AppendListener listener) {
    this.appendListener = java.util.Objects.requireNonNull(listener);
  }

  public MessageServiceHandler(Topics topics, PartitionLogs logs, Clock clock, MessageBlockValidator validator,
      int maxGetMessages, int maxGetBytes) {
    this(topics, logs, clock, validator, maxGetMessages, maxGetBytes, null, null);
  }

  /**
   * @param meters per-partition put/get meters (the ops API's rates, /metrics), or null
   * @param failures where storage failures of puts and gets are logged on the server, or null
   */
  public MessageServiceHandler(Topics topics, PartitionLogs logs, Clock clock, MessageBlockValidator validator,
      int maxGetMessages, int maxGetBytes, PartitionMeters meters, StorageFailureLog failures) {
    this.meters = meters;
    this.failures = failures;
    this.topics = topics;
    this.logs = logs;
    this.clock = clock;
    this.validator = validator;
    this.maxGetMessages = maxGetMessages;
    this.maxGetBytes = maxGetBytes;
  }

  @Override
  public PutMessageResponse putMessage(PutMessageRequest request) throws GalaxyTalosException {
    PreparedPut put = preparePut(request);
    return put.response(appendAll(put.log(), List.of(put))[0]);
  }

  /**
   * Idempotent produce: hands out a producer id. The id is random (63 bits from a {@link
   * SecureRandom}), so servers need not coordinate and nothing is stored: a collision between
   * two live producers of one partition is as likely as guessing a 63-bit number.
   */
  @Override
  public InitProducerIdResponse initProducerId(InitProducerIdRequest request) throws GalaxyTalosException {
    long id;
    do {
      id = producerIds.nextLong() & Long.MAX_VALUE;
    } while (id == 0);
    return new InitProducerIdResponse(id);
  }

  /**
   * A validated put, ready to append: its partition log, its blocks and the response to send.
   * Nothing has been written.
   *
   * @param producerId the idempotent producer's id, or {@link PartitionLog#NO_PRODUCER}
   * @param producerSequence the put's sequence for that producer and partition
   */
  public record PreparedPut(TopicRecord topic, int partitionId, PartitionLog log, List<BlockToAppend> blocks,
      String sequenceId, long producerId, int producerSequence) {
    public PreparedPut(TopicRecord topic, int partitionId, PartitionLog log, List<BlockToAppend> blocks,
        String sequenceId) {
      this(topic, partitionId, log, blocks, sequenceId, PartitionLog.NO_PRODUCER, -1);
    }

    public PutMessageResponse response(long firstOffset) {
      return new PutMessageResponse(sequenceId).setStartMessageOffset(firstOffset);
    }

    /**
     * The answer for what the log did with this put.
     *
     * @throws GalaxyTalosException OUT_OF_ORDER_SEQUENCE if the log refused it
     */
    public PutMessageResponse response(PartitionLog.PutResult result) throws GalaxyTalosException {
      if (result.outOfOrder() != null) {
        throw TalosErrors.of(ErrorCode.OUT_OF_ORDER_SEQUENCE, "put to partition " + partitionId + " of topic '"
            + topic.name() + "' refused: " + result.outOfOrder() + ". Not retriable: the producer must start"
            + " again with a new producer id");
      }
      PutMessageResponse r = response(result.firstOffset());
      if (result.duplicate()) r.setDuplicate(true);
      return r;
    }
  }

  /**
   * A put whose arguments were checked (topic, partition, blocks, producer fields) but whose
   * partition log is not resolved yet: checking touches no storage, so the front-end runs it
   * before the put is charged to any quota (a refused put costs no tokens).
   */
  public record ValidatedPut(TopicRecord topic, int partitionId, List<BlockToAppend> blocks, String sequenceId,
      long producerId, int producerSequence) {}

  /** Validates a put and resolves its partition log, without writing anything. */
  public PreparedPut preparePut(PutMessageRequest request) throws GalaxyTalosException {
    return preparePut(validatePut(request));
  }

  /** Resolves the partition log of a validated put (may open it: storage). */
  public PreparedPut preparePut(ValidatedPut put) throws GalaxyTalosException {
    return new PreparedPut(put.topic(), put.partitionId(), log(put.topic(), put.partitionId()), put.blocks(),
        put.sequenceId(), put.producerId(), put.producerSequence());
  }

  /**
   * Checks a put's arguments without touching storage: INVALID_REQUEST_PARAMS, TOPIC_NOT_EXIST or
   * PARTITION_NOT_EXIST naming what is wrong. CPU only (a block is decompressed to check its
   * framing, bounded by {@code message.block.uncompressed.max.bytes}).
   */
  public ValidatedPut validatePut(PutMessageRequest request) throws GalaxyTalosException {
    if (request == null) throw TalosErrors.invalidParams("request is missing");
    TopicRecord topic = topics.partition(request.getTopicAndPartition());
    List<MessageBlock> blocks = request.getMessageBlocks();
    if (blocks == null || blocks.isEmpty()) {
      throw TalosErrors.invalidParams("messageBlocks is empty; a put carries at least one block");
    }
    List<BlockToAppend> toAppend = new ArrayList<>(blocks.size());
    long total = 0;
    for (int i = 0; i < blocks.size(); i++) {
      MessageBlock block = blocks.get(i);
      // The decoded field is a slice of the request body (the generated getter would copy it twice).
      ByteBuffer payload = block.messageBlock;
      if (block.getCompressionType() == null) {
        throw TalosErrors.invalidParams("block " + i + " has an unknown compressionType; allowed: NONE, SNAPPY, GZIP");
      }
      if (block.getMessageNumber() < 1) {
        throw TalosErrors.invalidParams("block " + i + " has messageNumber " + block.getMessageNumber()
            + "; a block holds at least one message");
      }
      if (payload == null || !payload.hasRemaining()) {
        throw TalosErrors.invalidParams("block " + i + " has an empty payload");
      }
      if (!payload.hasArray()) { // not from our decoder; copied once
        ByteBuffer copy = ByteBuffer.allocate(payload.remaining());
        copy.put(payload.duplicate()).flip();
        payload = copy;
      }
      byte[] array = payload.array();
      int offset = payload.arrayOffset() + payload.position();
      int length = payload.remaining();
      validator.validate(i, block.getMessageNumber(), block.getCompressionType(), array, offset, length);
      total += block.getMessageNumber();
      toAppend.add(new BlockToAppend(block.getMessageNumber(), block.getCompressionType().getValue(),
          block.isSetMessageBlockSize() ? block.getMessageBlockSize() : -1,
          block.isSetCreateTimestamp() ? block.getCreateTimestamp() : -1, array, offset, length));
    }
    if (request.getMessageNumber() != total) {
      throw TalosErrors.invalidParams("messageNumber " + request.getMessageNumber()
          + " differs from the " + total + " messages the blocks hold");
    }
    if (request.isSetProducerId() != request.isSetProducerSequence()) {
      throw TalosErrors.invalidParams("producerId and producerSequence go together (idempotent put) or are both"
          + " absent; got only " + (request.isSetProducerId() ? "producerId" : "producerSequence"));
    }
    long producerId = PartitionLog.NO_PRODUCER;
    int producerSequence = -1;
    if (request.isSetProducerId()) {
      if (request.getProducerId() <= 0) {
        throw TalosErrors.invalidParams("producerId " + request.getProducerId()
            + " is invalid; use the positive id initProducerId returned");
      }
      if (request.getProducerSequence() < 0) {
        throw TalosErrors.invalidParams("producerSequence " + request.getProducerSequence() + " is invalid; must be >= 0");
      }
      producerId = request.getProducerId();
      producerSequence = request.getProducerSequence();
    }
    int partition = request.getTopicAndPartition().getPartitionId();
    return new ValidatedPut(topic, partition, toAppend,
        request.getSequenceId() == null ? "" : request.getSequenceId(), producerId, producerSequence);
  }

  /**
   * Checks a get's arguments without touching storage (the same checks {@link #getMessage}
   * makes), so that the front-end charges quotas only for a get that can be served.
   */
  public void validateGet(GetMessageRequest request) throws GalaxyTalosException {
    if (request == null) throw TalosErrors.invalidParams("request is missing");
    topics.partition(request.getTopicAndPartition());
    long offset = request.getMessageOffset();
    if (offset < 0 && offset != MessageOffset.START_OFFSET.getValue()
        && offset != MessageOffset.LATEST_OFFSET.getValue()) {
      throw TalosErrors.invalidParams("messageOffset " + offset + " is invalid; use an offset >= 0, -1 (start) or -2 (latest)");
    }
    bound("maxGetMessageNumber", request.isSetMaxGetMessageNumber(), request.getMaxGetMessageNumber(), maxGetMessages);
    bound("maxGetMessageBytes", request.isSetMaxGetMessageBytes(), request.getMaxGetMessageBytes(), maxGetBytes);
    if (request.isSetMaxWaitMs() && request.getMaxWaitMs() < 0) {
      throw TalosErrors.invalidParams("maxWaitMs " + request.getMaxWaitMs()
          + " is negative; use 0 (answer at once) or a wait in ms (the server caps it)");
    }
  }

  /**
   * Appends several prepared puts of one partition log in one write and one flush (group
   * commit), in the given order. An idempotent put that repeats a stored one is not written again
   * and gets the stored offsets; one whose sequence is out of order is refused alone.
   *
   * @return what became of each put, in the same order (turn each into its answer with {@link
   *     PreparedPut#response(PartitionLog.PutResult)})
   * @throws GalaxyTalosException HDFS_OPERATION_FAILED if the append failed: none of the puts is
   *     stored (the log's contract), none may be acknowledged
   */
  public PartitionLog.PutResult[] appendAll(PartitionLog log, List<PreparedPut> puts) throws GalaxyTalosException {
    try {
      return appendAllAsync(log, puts).join();
    } catch (java.util.concurrent.CompletionException e) {
      if (e.getCause() instanceof GalaxyTalosException g) throw g;
      if (e.getCause() instanceof RuntimeException re) throw re;
      if (e.getCause() instanceof Error err) throw err;
      throw e;
    }
  }

  /**
   * As {@link #appendAll}, pipelined ({@link PartitionLog#appendPutsAsync}): returns once the puts
   * are written, with a future completed once they are durable (in the order of the partition's
   * appends, on the log's flusher thread), or failed with the {@link GalaxyTalosException} to answer
   * (HDFS_OPERATION_FAILED: none of the puts is stored; PARTITION_NOT_SERVING if fenced). The caller
   * may append the partition's next puts meanwhile.
   *
   * @throws IllegalArgumentException if the puts are of different logs
   */
  public java.util.concurrent.CompletableFuture<PartitionLog.PutResult[]> appendAllAsync(PartitionLog log,
      List<PreparedPut> puts) {
    List<PartitionLog.Put> all = new ArrayList<>(puts.size());
    for (PreparedPut put : puts) {
      if (put.log() != log) throw new IllegalArgumentException("puts of different partitions in one append");
      all.add(new PartitionLog.Put(put.blocks(), put.producerId(), put.producerSequence()));
    }
    java.util.concurrent.CompletableFuture<PartitionLog.PutResult[]> written;
    PartitionLog target = log;
    try {
      for (int attempt = 1; ; attempt++) {
        try {
          written = target.appendPutsAsync(all, clock.millis());
          break;
        } catch (PartitionLogClosedException e) {
          // Closed since the puts resolved it (idle, over storage.open.logs.max, or released):
          // nothing was written, so the puts go to the log opened again. Opening checks ownership
          // afresh (a fenced log throws PartitionFencedException instead). With more partitions
          // busy than may be open the new log can be closed again at once: after a few tries the
          // put is answered PARTITION_NOT_SERVING, which clients retry.
          if (attempt == CLOSED_LOG_ATTEMPTS) throw e;
          target = Topics.openLog(logs, puts.get(0).topic(), puts.get(0).partitionId());
        }
      }
    } catch (GalaxyTalosException e) {
      return java.util.concurrent.CompletableFuture.failedFuture(e);
    } catch (IOException e) {
      return java.util.concurrent.CompletableFuture.failedFuture(appendFailure(puts, e));
    }
    java.util.concurrent.CompletableFuture<PartitionLog.PutResult[]> answered =
        new java.util.concurrent.CompletableFuture<>();
    written.whenComplete((results, e) -> {
      if (e != null) {
        Throwable cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null
            ? e.getCause() : e;
        answered.completeExceptionally(cause instanceof IOException io ? appendFailure(puts, io) : cause);
        return;
      }
      try {
        if (meters != null) markStored(puts, results);
      } catch (RuntimeException meterFailure) {
        // the puts are durable: acknowledge them whatever a meter did
        LOG.warn("Metering an append to partition {} of topic '{}' failed",
            puts.get(0).partitionId(), puts.get(0).topic().name(), meterFailure);
      }
      // Acknowledged first, readers woken after: where the flush completed on a flusher thread,
      // waking a worker for a get before the put's answer was written put a thread hand-off (and
      // with busy cores a wait to be scheduled) ahead of the acknowledgement.
      answered.complete(results);
      try {
        appendListener.appended(puts.get(0).topic().name(), puts.get(0).partitionId());
      } catch (RuntimeException listenerFailure) {
        LOG.warn("Waking readers after an append to partition {} of topic '{}' failed",
            puts.get(0).partitionId(), puts.get(0).topic().name(), listenerFailure);
      }
    });
    return answered;
  }

  /** The answer to a put whose append failed: nothing of it was acknowledged. */
  private GalaxyTalosException appendFailure(List<PreparedPut> puts, IOException e) {
    PreparedPut p = puts.get(0);
    if (e instanceof PartitionFencedException) {
      return TalosErrors.of(ErrorCode.PARTITION_NOT_SERVING, "partition " + p.partitionId() + " of topic '"
          + p.topic().name() + "' is now served by another server; the put was not acknowledged: " + e.getMessage());
    }
    if (e instanceof PartitionLogClosedException) { // closed again at once: not a storage failure
      return TalosErrors.of(ErrorCode.PARTITION_NOT_SERVING, "partition " + p.partitionId() + " of topic '"
          + p.topic().name() + "' was closed on this server while the put waited (idle, over storage.open.logs.max,"
          + " released or stopping); the put was not acknowledged, retry: " + e.getMessage());
    }
    storageFailed(p.topic(), p.partitionId(), "put", e);
    return TalosErrors.of(ErrorCode.HDFS_OPERATION_FAILED, "append to partition " + p.partitionId()
        + " of topic '" + p.topic().name() + "' failed and was not acknowledged; retry: " + e.getMessage());
  }

  /** Counts what was written (not the repeats answered from the producer state) in the partition meters. */
  private void markStored(List<PreparedPut> puts, PartitionLog.PutResult[] results) {
    long messages = 0;
    long bytes = 0;
    for (int i = 0; i < puts.size(); i++) {
      if (results[i].duplicate() || results[i].outOfOrder() != null) continue;
      for (BlockToAppend b : puts.get(i).blocks()) {
        messages += b.messageCount();
        bytes += b.payloadLength();
      }
    }
    if (messages > 0) meters.markPut(puts.get(0).topic().name(), puts.get(0).partitionId(), messages, bytes);
  }

  @Override
  public GetMessageResponse getMessage(GetMessageRequest request) throws GalaxyTalosException {
    if (request == null) throw TalosErrors.invalidParams("request is missing");
    TopicRecord topic = topics.partition(request.getTopicAndPartition());
    int partition = request.getTopicAndPartition().getPartitionId();
    // The writer's log if this server has it open, else a read-only view: a read never takes the
    // partition over from the server that writes it.
    ReadablePartition log = readable(topic, partition);
    long start = log.startOffset();
    long next = log.endOffset();
    long offset = request.getMessageOffset();
    if (offset == MessageOffset.START_OFFSET.getValue()) {
      offset = start;
    } else if (offset == MessageOffset.LATEST_OFFSET.getValue()) {
      offset = next > start ? next - 1 : start;
    } else if (offset < 0) {
      throw TalosErrors.invalidParams("messageOffset " + offset + " is invalid; use an offset >= 0, -1 (start) or -2 (latest)");
    }
    int maxMessages = bound("maxGetMessageNumber", request.isSetMaxGetMessageNumber(),
        request.getMaxGetMessageNumber(), maxGetMessages);
    int maxBytes = bound("maxGetMessageBytes", request.isSetMaxGetMessageBytes(),
        request.getMaxGetMessageBytes(), maxGetBytes);
    if (request.isSetMaxWaitMs() && request.getMaxWaitMs() < 0) {
      throw TalosErrors.invalidParams("maxWaitMs " + request.getMaxWaitMs()
          + " is negative; use 0 (answer at once) or a wait in ms (the server caps it)");
    }
    List<StoredBlock> stored;
    // set by the task that writes the reply and releases it then: the blocks may live in its buffers
    ReadLease lease = ReadLease.bound();
    try {
      try {
        stored = log.read(offset, maxMessages, maxBytes, lease);
      } catch (IOException e) {
        // Closed meanwhile (idle, or over the open limits; not fenced): read it reopened, once.
        if (!log.isClosed() || log.isFenced() || e instanceof CorruptRecordException) {
          throw e;
        }
        log = readable(topic, partition);
        stored = log.read(offset, maxMessages, maxBytes, lease);
      }
    } catch (PartitionFencedException e) {
      throw TalosErrors.of(ErrorCode.PARTITION_NOT_SERVING, "partition " + partition + " of topic '" + topic.name()
          + "' is now served by another server: " + e.getMessage());
    } catch (OffsetOutOfRangeException e) {
      throw TalosErrors.of(ErrorCode.MESSAGE_OFFSET_OUT_OF_RANGE, "offset " + offset + " of partition "
          + partition + " of topic '" + topic.name() + "' is out of range: the partition holds ["
          + log.startOffset() + ", " + (log.endOffset() - 1) + "] and the next offset is " + log.endOffset());
    } catch (PartitionDataMissingException e) {
      storageFailed(topic, partition, "get", e);
      throw Topics.dataMissing(topic, partition, e);
    } catch (CorruptRecordException e) {
      storageFailed(topic, partition, "get", e);
      // The log knows these records are damaged: retrying cannot help (the SDK would retry the
      // same offset forever on a retriable error). An operator must look at the partition.
      throw TalosErrors.of(ErrorCode.MESSAGE_MISSING, "messages of partition " + partition + " of topic '"
          + topic.name() + "' from offset " + offset + " cannot be read (damaged on disk): " + e.getMessage());
    } catch (IOException e) {
      storageFailed(topic, partition, "get", e);
      throw TalosErrors.of(ErrorCode.HDFS_OPERATION_FAILED, "read of partition " + partition + " of topic '"
          + topic.name() + "' failed; retry: " + e.getMessage());
    }
    List<MessageBlock> blocks = new ArrayList<>(stored.size());
    int messages = 0;
    long last = offset;
    long bytes = 0;
    for (StoredBlock b : stored) {
      blocks.add(toWire(b));
      messages += b.messageCount();
      bytes += b.payloadLength();
      last = b.nextOffset();
    }
    if (meters != null && messages > 0) meters.markGet(topic.name(), partition, messages, bytes);
    GetMessageResponse response = new GetMessageResponse(blocks, messages,
        request.getSequenceId() == null ? "" : request.getSequenceId());
    response.setUnHandledMessageNumber(Math.max(0, log.endOffset() - last));
    return response;
  }

  /**
   * Talos extension: the offset of the partition's first message appended at or after the
   * timestamp (the server's append time); the next offset when all retained messages are older,
   * the start offset when the time precedes them all. Runs on the request thread; the time index
   * makes it a few small reads (see docs/storage-format.md).
   */
  @Override
  public GetOffsetForTimestampResponse getOffsetForTimestamp(GetOffsetForTimestampRequest request)
      throws GalaxyTalosException {
    if (request == null) throw TalosErrors.invalidParams("request is missing");
    TopicRecord topic = topics.partition(request.getTopicAndPartition());
    int partition = request.getTopicAndPartition().getPartitionId();
    long timestamp = request.getTimestamp();
    if (timestamp < 0) {
      throw TalosErrors.invalidParams("timestamp " + timestamp + " is negative; use epoch milliseconds >= 0");
    }
    ReadablePartition log = Topics.readable(logs, topic, partition);
    try {
      try {
        return new GetOffsetForTimestampResponse(log.offsetForTimestamp(timestamp));
      } catch (IOException e) {
        if (!log.isClosed() || log.isFenced() || e instanceof CorruptRecordException) throw e;
        log = Topics.readable(logs, topic, partition); // closed meanwhile: once more, reopened
        return new GetOffsetForTimestampResponse(log.offsetForTimestamp(timestamp));
      }
    } catch (PartitionFencedException e) {
      throw TalosErrors.of(ErrorCode.PARTITION_NOT_SERVING, "partition " + partition + " of topic '" + topic.name()
          + "' is now served by another server: " + e.getMessage());
    } catch (PartitionDataMissingException e) {
      throw Topics.dataMissing(topic, partition, e);
    } catch (CorruptRecordException e) {
      throw TalosErrors.of(ErrorCode.MESSAGE_MISSING, "messages of partition " + partition + " of topic '"
          + topic.name() + "' cannot be read (damaged on disk): " + e.getMessage());
    } catch (IOException e) {
      throw TalosErrors.of(ErrorCode.HDFS_OPERATION_FAILED, "time lookup in partition " + partition + " of topic '"
          + topic.name() + "' failed; retry: " + e.getMessage());
    }
  }

  @Override
  public GetTopicOffsetResponse getTopicOffset(GetTopicOffsetRequest request) throws GalaxyTalosException {
    if (request == null) throw TalosErrors.invalidParams("request is missing");
    TopicRecord topic = topics.byResourceName(request.getTopicTalosResourceName());
    List<OffsetInfo> infos = new ArrayList<>();
    for (int p = 0; p < topic.partitionCount(); p++) infos.add(offsetInfo(Topics.offsets(logs, topic, p), p));
    return new GetTopicOffsetResponse(infos);
  }

  @Override
  public GetPartitionOffsetResponse getPartitionOffset(GetPartitionOffsetRequest request) throws GalaxyTalosException {
    if (request == null) throw TalosErrors.invalidParams("request is missing");
    TopicRecord topic = topics.partition(request.getTopicAndPartition());
    int p = request.getTopicAndPartition().getPartitionId();
    return new GetPartitionOffsetResponse(offsetInfo(Topics.offsets(logs, topic, p), p));
  }

  /** Answers every listed partition; one that cannot be answered carries its own error code. */
  @Override
  public GetPartitionsOffsetResponse getPartitionsOffset(GetPartitionsOffsetRequest request) throws GalaxyTalosException {
    if (request == null || request.getTopicAndPartitionList() == null) {
      throw TalosErrors.invalidParams("topicAndPartitionList is missing");
    }
    List<OffsetInfo> infos = new ArrayList<>();
    for (TopicAndPartition tap : request.getTopicAndPartitionList()) {
      int p = tap == null ? -1 : tap.getPartitionId();
      try {
        infos.add(offsetInfo(Topics.offsets(logs, topics.partition(tap), p), p));
      } catch (GalaxyTalosException e) {
        infos.add(new OffsetInfo(p).setErrorCode(e.getErrorCode()).setErrorMsg(e.getErrMsg()));
      }
    }
    return new GetPartitionsOffsetResponse(infos);
  }

  /** Offsets come from {@link Topics#offsets}: answering them does not open the partition's log. */
  private static OffsetInfo offsetInfo(PartitionOffsets offsets, int partition) {
    long start = offsets.startOffset();
    long next = offsets.endOffset();
    return new OffsetInfo(partition).setStartOffset(start).setEndOffset(next - 1);
  }

  private PartitionLog log(TopicRecord topic, int partition) throws GalaxyTalosException {
    try {
      return Topics.openLog(logs, topic, partition);
    } catch (GalaxyTalosException e) {
      openFailed(topic, partition, e);
      throw e;
    }
  }

  private ReadablePartition readable(TopicRecord topic, int partition) throws GalaxyTalosException {
    try {
      return Topics.readable(logs, topic, partition);
    } catch (GalaxyTalosException e) {
      openFailed(topic, partition, e);
      throw e;
    }
  }

  /** An open that failed because of storage (not a deleted topic, a takeover or a deadline) is logged. */
  private void openFailed(TopicRecord topic, int partition, GalaxyTalosException e) {
    if (e.getErrorCode() == ErrorCode.HDFS_OPERATION_FAILED || e.getErrorCode() == ErrorCode.HDFS_FILE_NOT_EXIST) {
      storageFailed(topic, partition, "open", e.getCause() != null ? e.getCause() : new IOException(e.getErrMsg()));
    }
  }

  private void storageFailed(TopicRecord topic, int partition, String operation, Throwable cause) {
    if (failures != null) failures.failed(topic.name(), partition, operation, cause);
  }


  private static int bound(String field, boolean set, int requested, int serverMax) throws GalaxyTalosException {
    if (!set || requested == 0) return serverMax;
    if (requested < 0) throw TalosErrors.invalidParams(field + " " + requested + " is negative");
    return Math.min(requested, serverMax);
  }

  static MessageBlock toWire(StoredBlock b) {
    // Fields set one by one: the generated all-fields constructor copies the payload.
    MessageBlock block = new MessageBlock()
        .setStartMessageOffset(b.startOffset())
        .setMessageNumber(b.messageCount())
        .setCompressionType(MessageCompressionType.findByValue(b.compressionType()))
        .setAppendTimestamp(b.appendTimestampMs());
    block.messageBlock = b.payloadBuffer(); // a slice of the read's own array, handed over
    if (b.messageBlockSize() >= 0) block.setMessageBlockSize(b.messageBlockSize());
    if (b.createTimestampMs() >= 0) block.setCreateTimestamp(b.createTimestampMs());
    return block;
  }
}
