package io.talos.client.consumer.internals;

import io.talos.client.TalosException;
import io.talos.client.consumer.ConsumedMessage;
import io.talos.client.consumer.ConsumerConfig;
import io.talos.client.consumer.ConsumerConfig.OffsetReset;
import io.talos.client.consumer.MessageCheckpointer;
import io.talos.client.consumer.MessageProcessor;
import io.talos.thrift.ErrorCode;
import java.util.List;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads one partition the consumer holds and hands its messages, in order, to the partition's
 * {@link MessageProcessor}. {@link #runOnce} is one step (initialise, or fetch one batch and
 * process it, and commit if due); the consumer schedules the next step only after the previous
 * one returned, so steps of a partition never overlap and messages are processed serially.
 *
 * <p>Offsets: {@code position} is the next offset to fetch; {@code consumed} the last offset
 * finished (processed, or in poll mode returned by poll); {@code committed} the last offset the
 * server accepted for the group. Lag is {@code endOffset - consumed}.
 *
 * <p>Thread-safety: steps, {@link #stop} and checkpoints synchronize on the reader; the offset
 * getters are lock-free reads for metrics. {@link #markConsumed} takes only a small lock of its
 * own ({@code consumedLock}, which guards {@code consumed} and the count since the last commit),
 * never the reader's: a step holds the reader for a whole commit round trip, and poll() marks
 * every partition it returned, so one partition's commit would otherwise hold up the messages of
 * all the others.
 */
public final class PartitionReader {
  private static final Logger LOG = LoggerFactory.getLogger(PartitionReader.class);

  /**
   * What the step did, for scheduling the next one. BLOCKED: the processor could not take the
   * batch yet ({@link RetryLater}, e.g. a full poll buffer); the same batch is offered again.
   */
  public enum Step { BUSY, IDLE, BLOCKED, STOPPED }

  /** Reads messages of the partition, as {@code SimpleConsumer.fetch(long, int)} does. */
  @FunctionalInterface
  public interface Fetcher {
    List<ConsumedMessage> fetch(long offset, int maxMessages);
  }

  /** A long-poll fetch: {@code SimpleConsumer.fetch(long, int, long)}. */
  @FunctionalInterface
  public interface WaitingFetcher {
    io.talos.client.consumer.SimpleConsumer.Fetched fetch(long offset, int maxMessages, long maxWaitMs);
  }

  /** The group's offset operations for this partition. */
  public interface GroupOffsets {
    /** The committed offset, or -1. */
    long committed();

    /** @return false if the server refused (lock lost) */
    boolean commit(long offset);

    /** Start (oldest) and end (newest, inclusive) offsets of the partition. */
    long[] range();

    /**
     * The offset of the first message appended at or after {@code timestampMs} (the end offset + 1
     * when there is none).
     */
    long offsetForTimestamp(long timestampMs);
  }

  private final int partition;
  private final WaitingFetcher reader;
  private final MessageProcessor processor;
  private final GroupOffsets group;
  private final ConsumerConfig config;
  private final LongSupplier clockMs;
  private final ConsumerMetrics metrics;
  private final boolean consumedOnProcess;
  private final MessageCheckpointer checkpointer = new Checkpointer();

  private boolean initialized;
  private volatile boolean stopped;
  private volatile long position;
  private volatile long consumed = -1;
  private volatile long committed = -1;
  private volatile long endOffset = -1;
  private volatile TalosException failure;
  private long delivered = -1;
  /** Guards writes of {@code consumed} and {@code consumedSinceCommit}; taken after the reader's lock, never before. */
  private final Object consumedLock = new Object();
  private long consumedSinceCommit;
  private long lastCommitMs;
  /** Bounds how many partitions process at once when threads outnumber processor.threads; or null. */
  private volatile java.util.concurrent.Semaphore processing;

  /**
   * Makes {@code process} calls take a permit of {@code permits}: with long poll the consumer runs
   * more threads than {@code processor.threads} (a waiting fetch holds one), and this keeps the
   * processing itself to {@code processor.threads} partitions at once.
   */
  public void limitProcessing(java.util.concurrent.Semaphore permits) {
    this.processing = permits;
  }
  private List<ConsumedMessage> pending;

  /**
   * @param consumedOnProcess true: a message counts as consumed once {@code process} returned;
   *     false (poll mode): once {@link #markConsumed} says so
   */
  public PartitionReader(int partition, Fetcher reader, MessageProcessor processor,
      GroupOffsets group, ConsumerConfig config, LongSupplier clockMs, ConsumerMetrics metrics,
      boolean consumedOnProcess) {
    this(partition, (WaitingFetcher) (offset, max, wait) ->
        new io.talos.client.consumer.SimpleConsumer.Fetched(reader.fetch(offset, max), -1),
        processor, group, config, clockMs, metrics, consumedOnProcess);
  }

  /**
   * With long poll ({@code fetch.max.wait.ms} &gt; 0): every fetch asks the server to wait up to
   * {@code fetch.max.wait.ms} when there is nothing new; when the server did hold an empty answer,
   * the next step is due at once ({@link Step#BUSY}) instead of after {@code fetch.backoff.ms}.
   */
  public PartitionReader(int partition, WaitingFetcher reader, MessageProcessor processor,
      GroupOffsets group, ConsumerConfig config, LongSupplier clockMs, ConsumerMetrics metrics,
      boolean consumedOnProcess) {
    this.partition = partition;
    this.reader = reader;
    this.processor = processor;
    this.group = group;
    this.config = config;
    this.clockMs = clockMs;
    this.metrics = metrics;
    this.consumedOnProcess = consumedOnProcess;
  }

  public int partition() {
    return partition;
  }

  /**
   * One step; never throws for server or processor failures (they are logged and retried). A
   * long-poll fetch runs without holding the reader's lock, so commits, {@link #stop} and
   * {@link #markConsumed} do not wait for it.
   */
  public Step runOnce() {
    long waitAt;
    long wait;
    synchronized (this) {
      if (stopped) return Step.STOPPED;
      if (failure != null) return Step.IDLE;
      // Every fetch may wait: the server answers at once when there are messages, and otherwise
      // holds it until one arrives. (Waiting only after a fetch that found nothing would leave a
      // message written just after a batch to the next fetch, fetch.backoff.ms later.)
      boolean longPoll = initialized && pending == null && config.fetchMaxWaitMs() > 0;
      waitAt = position;
      wait = longPoll ? config.fetchMaxWaitMs() : 0;
    }
    io.talos.client.consumer.SimpleConsumer.Fetched waited = null;
    TalosException waitError = null;
    if (wait > 0) {
      try {
        waited = reader.fetch(waitAt, config.maxFetchRecords(), wait);
      } catch (TalosException e) {
        waitError = e;
      }
    }
    synchronized (this) {
      if (stopped) return Step.STOPPED;
      if (wait > 0 && position != waitAt) { // moved meanwhile (cannot happen between steps): fetch again
        waited = null;
        waitError = null;
        wait = 0;
      }
      return stepLocked(waited, waitError, wait);
    }
  }

  /** The rest of a step; {@code waited}/{@code waitError}: the outcome of a long-poll fetch, if one ran. */
  private Step stepLocked(io.talos.client.consumer.SimpleConsumer.Fetched waited, TalosException waitError, long wait) {
    try {
      if (!initialized) {
        initialize();
        return Step.BUSY;
      }
      if (pending == null) {
        List<ConsumedMessage> got;
        io.talos.client.consumer.SimpleConsumer.Fetched fetched;
        try {
          if (waitError != null) throw waitError;
          fetched = waited != null ? waited : reader.fetch(position, config.maxFetchRecords(), 0);
          got = fetched.messages();
        } catch (TalosException e) {
          if (e.errorCode() != ErrorCode.MESSAGE_OFFSET_OUT_OF_RANGE) throw e;
          resetOutOfRange(e);
          return Step.BUSY;
        }
        if (got.isEmpty()) {
          endOffset = Math.max(endOffset, position - 1);
          commitIfDue(false);
          boolean serverWaited = wait > 0 && fetched.serverWaited(wait);
          return serverWaited ? Step.BUSY : Step.IDLE;
        }
        pending = got;
      }
      List<ConsumedMessage> batch = pending;
      long last = batch.get(batch.size() - 1).offset();
      delivered = last;
      java.util.concurrent.Semaphore permits = processing;
      if (permits != null) permits.acquireUninterruptibly();
      try {
        processor.process(batch, checkpointer);
      } catch (RetryLater e) {
        return Step.BLOCKED;
      } catch (RuntimeException e) {
        LOG.warn("processing partition {} at offset {} failed; the batch is delivered again",
            partition, batch.get(0).offset(), e);
        metrics.processingErrors.mark();
        return Step.IDLE;
      } finally {
        if (permits != null) permits.release();
      }
      pending = null;
      position = last + 1;
      endOffset = Math.max(endOffset, last);
      metrics.recordsConsumed.mark(batch.size());
      if (consumedOnProcess) markConsumedLocked(last);
      commitIfDue(false);
      return Step.BUSY;
    } catch (TalosException e) {
      metrics.fetchErrors.mark();
      LOG.debug("partition {}: {}", partition, e.getMessage());
      return Step.IDLE;
    }
  }

  private void initialize() {
    long start;
    committed = group.committed();
    switch (config.startFrom()) {
      case COMMITTED -> start = committed >= 0 ? committed + 1 : resetPosition(null);
      case EARLIEST -> start = group.range()[0];
      case LATEST -> start = group.range()[1] + 1;
      case TIMESTAMP -> start = group.offsetForTimestamp(config.startTimestampMs());
      default -> start = config.startOffset();
    }
    if (failure != null) return;
    position = start;
    synchronized (consumedLock) {
      consumed = start - 1;
    }
    endOffset = Math.max(endOffset, start - 1);
    lastCommitMs = clockMs.getAsLong();
    initialized = true;
    processor.init(partition, start);
  }

  /** The position auto.offset.reset gives, or -1 after recording the failure for NONE. */
  private long resetPosition(TalosException cause) {
    OffsetReset reset = config.autoOffsetReset();
    if (reset == OffsetReset.NONE) {
      failure = cause != null ? cause : new TalosException(ErrorCode.MESSAGE_OFFSET_OUT_OF_RANGE,
          "partition " + partition + " has no committed offset and auto.offset.reset is NONE");
      LOG.error("partition {} stopped: {}", partition, failure.getMessage());
      return -1;
    }
    long[] range = group.range();
    return reset == OffsetReset.EARLIEST ? range[0] : range[1] + 1;
  }

  private void resetOutOfRange(TalosException e) {
    long to = resetPosition(e);
    if (failure != null) return;
    LOG.warn("partition {}: offset {} is out of range; reset to {} ({})", partition, position,
        to, config.autoOffsetReset());
    metrics.offsetResets.mark();
    position = to;
    synchronized (consumedLock) {
      if (consumed < to - 1 || consumed >= to) consumed = to - 1;
    }
  }

  /**
   * Poll mode: messages up to {@code offset} were returned by poll. Does not wait for a step in
   * progress (see the class comment).
   */
  public void markConsumed(long offset) {
    if (!stopped) markConsumedLocked(offset);
  }

  private void markConsumedLocked(long offset) {
    synchronized (consumedLock) {
      if (offset > consumed) {
        consumedSinceCommit += offset - consumed;
        consumed = offset;
      }
    }
  }

  private void commitIfDue(boolean force) {
    if (!config.autoCommit() && !force) return;
    long upTo;
    long since;
    synchronized (consumedLock) {
      upTo = consumed;
      since = consumedSinceCommit;
    }
    if (upTo <= committed) return;
    long now = clockMs.getAsLong();
    if (force || since >= config.autoCommitMessages()
        || now - lastCommitMs >= config.autoCommitIntervalMs()) {
      commitLocked(upTo);
    }
  }

  private boolean commitLocked(long offset) {
    lastCommitMs = clockMs.getAsLong();
    try {
      boolean ok = group.commit(offset);
      if (ok) {
        committed = offset;
        synchronized (consumedLock) {
          // poll may have marked more meanwhile: those count towards the next commit
          consumedSinceCommit = Math.max(0, consumed - offset);
        }
        metrics.commits.mark();
      } else {
        metrics.commitFailures.mark();
        LOG.warn("commit of offset {} for partition {} refused: the lock is no longer held",
            offset, partition);
      }
      return ok;
    } catch (TalosException e) {
      metrics.commitFailures.mark();
      LOG.warn("commit of offset {} for partition {} failed: {}", offset, partition, e.getMessage());
      return false;
    }
  }

  /** Commits what is consumed and not yet committed (manual commit in poll mode). */
  public synchronized boolean commitConsumed() {
    if (!initialized || consumed <= committed) return true;
    return commitLocked(consumed);
  }

  /** Commits {@code offset} (an explicit manual commit). */
  public synchronized boolean commit(long offset) {
    if (offset < committed || offset > Math.max(consumed, delivered)) {
      throw new IllegalArgumentException("partition " + partition + ": can commit offsets "
          + committed + ".." + Math.max(consumed, delivered) + " only, got " + offset);
    }
    return commitLocked(offset);
  }

  /**
   * Ends the reader: no further steps; the processor is shut down; with {@code commit} (the lock
   * is still held) consumed progress is committed when auto-commit is on. Idempotent.
   */
  public synchronized void stop(boolean commit) {
    if (stopped) return;
    stopped = true;
    if (!initialized) return;
    try {
      processor.shutdown(checkpointer);
    } catch (RuntimeException e) {
      LOG.warn("MessageProcessor.shutdown of partition {} failed", partition, e);
    }
    if (commit && config.autoCommit()) commitIfDue(true);
  }

  public boolean stopped() {
    return stopped;
  }

  /** The error that stopped the partition (auto.offset.reset NONE), or null. */
  public TalosException failure() {
    return failure;
  }

  public long position() {
    return position;
  }

  public long consumedOffset() {
    return consumed;
  }

  public long committedOffset() {
    return committed;
  }

  /** Records the partition's newest offset as last read from the server. */
  public void updateEndOffset(long end) {
    if (end > endOffset) endOffset = end;
  }

  /** Messages after the last consumed one; 0 until the reader has started. */
  public long lag() {
    return initialized ? Math.max(0, endOffset - consumed) : 0;
  }

  /**
   * Thrown by a processor that cannot take the batch now (flow control, e.g. a full poll
   * buffer): the step returns {@link Step#BLOCKED} and the same batch is offered again later
   * (in poll mode once poll made room, otherwise after {@code fetch.backoff.ms}); nothing is logged.
   */
  public static final class RetryLater extends RuntimeException {
    public RetryLater() {
      super("retry later", null, false, false);
    }
  }

  private final class Checkpointer implements MessageCheckpointer {
    @Override
    public boolean checkpoint() {
      synchronized (PartitionReader.this) {
        long upTo = Math.max(delivered, consumed);
        if (upTo <= committed) return true;
        return commitLocked(upTo);
      }
    }

    @Override
    public boolean checkpoint(long offset) {
      return commit(offset);
    }
  }
}
