package io.talos.client.producer;

import com.codahale.metrics.MetricRegistry;
import io.talos.client.TalosClient;
import io.talos.client.TalosClientConfig;
import io.talos.client.TalosException;
import io.talos.client.admin.TopicDescription;
import io.talos.client.codec.MessageBlockEncoder;
import io.talos.client.internals.TalosRpc;
import io.talos.client.producer.internals.BufferMemory;
import io.talos.client.producer.internals.ProducerBatch;
import io.talos.client.producer.internals.ProducerMetrics;
import io.talos.client.producer.internals.RecordAccumulator;
import io.talos.client.producer.internals.Sender;
import io.talos.client.producer.internals.TopicMetadata;
import io.talos.common.config.ConfigException;
import io.talos.thrift.ErrorCode;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes records to one topic asynchronously, in the manner of Kafka's producer and the Talos
 * SDK's {@code TalosProducer}: {@link #send} puts a record in a buffer and returns at once with a
 * future; a sender thread groups the buffered records per partition into batches and puts each
 * batch with one request. Make one with {@link TalosClient#producer(String, ProducerConfig)};
 * settings are in {@link ProducerConfig}, semantics in docs/clients.md.
 *
 * <pre>{@code
 * try (TalosProducer producer = client.producer("orders", ProducerConfig.defaults())) {
 *   producer.send(ProducerRecord.of("customer-17", payload), (metadata, error) -> { ... });
 *   RecordMetadata m = producer.send(ProducerRecord.of(other)).get();
 * }
 * }</pre>
 *
 * <ul>
 *   <li><b>Batching:</b> a partition's batch is sent when it holds {@code batch.max.records}
 *       records or {@code batch.max.bytes} bytes, when it has waited {@code linger.ms}, or on
 *       {@link #flush} and {@link #close}; each batch is one message block compressed with
 *       {@code compression.type}.
 *   <li><b>Order:</b> records of one partition are stored in the order {@code send} accepted
 *       them, also across retries (a partition never has more than one request in flight), and
 *       their callbacks run in that order.
 *   <li><b>Retries:</b> retriable failures (PARTITION_NOT_SERVING and the other retriable codes,
 *       timeouts, HTTP 408/429/5xx) are retried with exponential backoff until
 *       {@code delivery.timeout.ms} after the batch was opened; then the records fail with
 *       {@link DeliveryTimeoutException}. Other failures fail the records at once with the
 *       {@link TalosException} whose {@link TalosException#errorCode()} is the server's code.
 *   <li><b>Idempotence</b> ({@code enable.idempotence}, on by default): batches carry a producer
 *       id and a per-partition sequence, so a retry after a lost answer is stored once. A
 *       partition's next sequence under an id is used only after the server confirmed the
 *       previous one stored; after a batch that left unconfirmed (failed, expired, aborted) the
 *       partition's next batch takes a new producer id, since the server refuses a gap (see
 *       {@code Sender}).
 *   <li><b>Memory:</b> records waiting or in flight take at most {@code buffer.memory.bytes}
 *       (their serialized size); when full, {@code send} blocks up to {@code max.block.ms} and
 *       then throws {@link BufferExhaustedException}.
 *   <li><b>Routing:</b> every request goes to the client's endpoint; the partition count is
 *       refreshed every {@code metadata.refresh.interval.ms}, so partitions added to the topic
 *       are used from then on.
 * </ul>
 *
 * <p>Thread-safe: any number of threads may send. The producer does not close the client it was
 * made from.
 */
public final class TalosProducer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TalosProducer.class);
  private static final ThreadLocal<Boolean> ON_IO_THREAD = ThreadLocal.withInitial(() -> false);

  private final TalosClientConfig clientConfig;
  private final ProducerConfig config;
  private final TopicMetadata topic;
  private final Partitioner partitioner;
  private final BufferMemory memory;
  private final RecordAccumulator accumulator;
  private final ProducerMetrics metrics;
  private final Sender sender;
  private final ThreadPoolExecutor io;
  private final Thread senderThread;
  private final TalosRpc rpc;
  private final LongSupplier clockMs;
  // read once: send() runs per record, and the configs' getters are map lookups
  private final int maxMessageBytes;
  private final long maxBlockMs;
  private final String clientId;
  private final Object closeLock = new Object();
  private volatile boolean closed;

  /**
   * For {@link TalosClient}; applications use {@link TalosClient#producer(String, ProducerConfig)}.
   *
   * @throws ConfigException if {@code delivery.timeout.ms} is shorter than {@code linger.ms} plus
   *     the client's {@code requestTimeoutMs}
   */
  public TalosProducer(TalosRpc rpc, TopicDescription topicDescription, ProducerConfig config) {
    this.clientConfig = rpc.config();
    this.config = Objects.requireNonNull(config, "config");
    long minDelivery = config.lingerMs() + clientConfig.requestTimeoutMs();
    if (config.deliveryTimeoutMs() < minDelivery) {
      throw new ConfigException(ProducerConfig.DELIVERY_TIMEOUT_MS + "=" + config.deliveryTimeoutMs()
          + ": must be >= " + ProducerConfig.LINGER_MS + " + the client's "
          + TalosClientConfig.REQUEST_TIMEOUT_MS + " = " + minDelivery);
    }
    this.topic = new TopicMetadata(topicDescription);
    this.partitioner = config.newPartitioner();
    this.rpc = rpc;
    // the local clock TalosRpc uses by default, so that clockMs + rpc.clockOffsetMs() is its nowMs()
    this.clockMs = System::currentTimeMillis;
    this.maxMessageBytes = clientConfig.maxMessageBytes();
    this.maxBlockMs = config.maxBlockMs();
    this.clientId = "talos-producer-" + System.currentTimeMillis() + "-"
        + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16);
    this.memory = new BufferMemory(config.bufferMemoryBytes());
    this.accumulator = new RecordAccumulator(config.batchMaxRecords(), config.batchMaxBytes(),
        config.lingerMs(), config.compressionType(), memory, partitioner, topic::partitionCount);
    this.metrics = new ProducerMetrics(memory, accumulator, topic::partitionCount);
    String threadPrefix = "talos-producer-" + topic.topicName();
    AtomicInteger ioThreads = new AtomicInteger();
    this.io = new ThreadPoolExecutor(config.maxInFlightRequests(), config.maxInFlightRequests(),
        60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
          Thread t = new Thread(() -> {
            ON_IO_THREAD.set(true);
            r.run();
          }, threadPrefix + "-io-" + ioThreads.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
    this.sender = new Sender(rpc, topic, accumulator, memory, metrics, config, clockMs, io, clientId);
    this.senderThread = new Thread(sender, threadPrefix + "-sender");
    senderThread.setDaemon(true);
    senderThread.start();
  }

  /** {@link #send(ProducerRecord, Callback)} without a callback. */
  public CompletableFuture<RecordMetadata> send(ProducerRecord record) {
    return send(record, null);
  }

  /**
   * Accepts a record for sending. Returns once the record is buffered; the future (and the
   * callback, which runs first) completes when the record is stored or has failed for good, see
   * {@link Callback} for the failures. A record naming a partition the topic does not have (as
   * far as the producer knows) fails its future with {@code PARTITION_NOT_EXIST}.
   *
   * @param callback told the outcome, or null
   * @throws IllegalArgumentException if the value is empty or larger than the client's
   *     {@code maxMessageBytes}, the sequence number is empty or longer than 256 characters, or
   *     the record is larger than {@code buffer.memory.bytes}; nothing is sent
   * @throws BufferExhaustedException if buffer space was not freed within {@code max.block.ms}
   * @throws IllegalStateException if the producer is closed
   * @throws TalosException (not retriable) if interrupted while waiting for buffer space
   */
  public CompletableFuture<RecordMetadata> send(ProducerRecord record, Callback callback) {
    Objects.requireNonNull(record, "record");
    if (closed) throw new IllegalStateException("the producer of topic '" + topic.topicName() + "' is closed");
    int length = record.value().length;
    if (length < 1 || length > maxMessageBytes) {
      throw new IllegalArgumentException("record value has " + length + " bytes; allowed: 1 to "
          + maxMessageBytes + " (" + TalosClientConfig.MAX_MESSAGE_BYTES + ")");
    }
    String seq = record.sequenceNumber();
    if (seq != null && (seq.isEmpty() || seq.length() > MessageBlockEncoder.MAX_SEQUENCE_NUMBER_CHARS)) {
      throw new IllegalArgumentException("sequence number has " + seq.length()
          + " characters; allowed: 1 to " + MessageBlockEncoder.MAX_SEQUENCE_NUMBER_CHARS);
    }
    int count = topic.partitionCount();
    int partition;
    if (record.partition() != null) {
      partition = record.partition();
      if (partition >= count) {
        TalosException e = new TalosException(ErrorCode.PARTITION_NOT_EXIST, "topic '"
            + topic.topicName() + "' has " + count + " partitions (0 to " + (count - 1)
            + ") as of the producer's last refresh (every "
            + ProducerConfig.METADATA_REFRESH_INTERVAL_MS + "=" + config.metadataRefreshIntervalMs()
            + "); there is no partition " + partition);
        if (callback != null) callback.onCompletion(null, e);
        return CompletableFuture.failedFuture(e);
      }
    } else {
      partition = partitioner.partition(record, count);
      if (partition < 0 || partition >= count) {
        throw new IllegalStateException("partitioner " + partitioner.getClass().getName()
            + " chose partition " + partition + " of a topic with " + count + " partitions");
      }
    }
    int size = MessageBlockEncoder.serializedSize(length, seq);
    CompletableFuture<RecordMetadata> future = new CompletableFuture<>();
    // One clock read per record (the clock is slow on some machines, and send() is otherwise
    // cheap): the batch's opening time and the record's create time, corrected by the server's
    // clock offset as TalosRpc.nowMs() is, come from the same read.
    long nowMs = clockMs.getAsLong();
    // The value is serialized into its batch's buffer before append returns, which keeps the
    // documented promise that the caller may reuse the array once send returns. Most records fit
    // in room their batch's buffer has reserved already: one append, nothing to reserve. Only a
    // record that needs a new or larger buffer reserves its size (waiting if need be) first.
    if (accumulator.append(partition, record.value(), seq, createdMs(record, nowMs), size, 0,
        future, callback, nowMs) != null) {
      return future;
    }
    try {
      memory.reserve(size, maxBlockMs);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw TalosException.transport("interrupted while waiting for buffer space; the record was"
          + " not sent", false, e);
    }
    nowMs = clockMs.getAsLong(); // it may have waited
    try {
      accumulator.append(partition, record.value(), seq, createdMs(record, nowMs), size, size,
          future, callback, nowMs);
    } catch (IllegalStateException | IllegalArgumentException e) {
      memory.release(size);
      throw e;
    }
    return future;
  }

  private long createdMs(ProducerRecord record, long nowMs) {
    return record.createTimestampMs() == ProducerRecord.NOW
        ? nowMs + rpc.clockOffsetMs() : record.createTimestampMs();
  }

  /**
   * Sends every buffered record at once, without waiting for {@code linger.ms}, and waits until
   * every record sent before this call has completed (stored or failed) and its callback has run.
   * Bounded by {@code delivery.timeout.ms}. Must not be called from a callback.
   *
   * @throws TalosException (not retriable) if interrupted
   */
  public void flush() {
    if (ON_IO_THREAD.get()) {
      throw new IllegalStateException("flush() from a producer callback would wait for itself");
    }
    List<ProducerBatch> pending = accumulator.beginFlush();
    try {
      for (ProducerBatch b : pending) {
        try {
          b.done().get();
        } catch (ExecutionException e) {
          throw new IllegalStateException(e); // done() never fails
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw TalosException.transport("interrupted in flush()", false, e);
    } finally {
      accumulator.endFlush();
    }
  }

  /** {@link #close(Duration)} waiting as long as it takes (at most the delivery timeout). */
  @Override
  public void close() {
    close(Duration.ofMillis(Long.MAX_VALUE));
  }

  /**
   * Stops accepting records ({@code send} then throws {@link IllegalStateException}), sends every
   * buffered record at once and waits up to {@code timeout} for them. Records still unsent then
   * fail with {@link ProducerClosedException}; requests still in flight are abandoned (their
   * records fail; the server may still store them). Called from a callback, it does not wait.
   * Idempotent.
   */
  public void close(Duration timeout) {
    Objects.requireNonNull(timeout, "timeout");
    synchronized (closeLock) {
      closed = true;
      accumulator.close();
      long waitMs = ON_IO_THREAD.get() ? 0 : Math.max(0, timeout.toMillis());
      try {
        senderThread.join(waitMs == 0 ? 1 : waitMs);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (senderThread.isAlive()) {
        List<ProducerBatch> unsent = accumulator.abortUnsent();
        for (ProducerBatch b : unsent) {
          sender.fail(b, new ProducerClosedException(b.recordCount() + " records for partition "
              + b.partition() + " of topic '" + topic.topicName() + "' were not sent: the producer"
              + " was closed with a timeout of " + timeout.toMillis() + " ms"), false);
        }
        if (!ON_IO_THREAD.get()) {
          io.shutdownNow(); // interrupts requests in flight: their records fail
          try {
            senderThread.join(clientConfig.requestTimeoutMs());
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
        if (senderThread.isAlive()) {
          LOG.warn("producer of topic '{}' closed with {} batches still in flight",
              topic.topicName(), accumulator.inFlightCount());
          senderThread.interrupt();
        }
      }
      io.shutdown();
    }
  }

  /**
   * The producer's metrics (names in docs/clients.md). A {@code MetricSet}: register it in an
   * application's registry with {@code registry.register("talos.producer.orders", metrics())}.
   */
  public MetricRegistry metrics() {
    return metrics.registry();
  }

  public String topicName() {
    return topic.topicName();
  }

  /** The partition count the producer currently uses; grows on refresh. */
  public int partitionCount() {
    return topic.partitionCount();
  }

  /** The prefix of this producer's request sequence ids ({@code <clientId>#<n>}). */
  public String clientId() {
    return clientId;
  }

  public ProducerConfig config() {
    return config;
  }
}
