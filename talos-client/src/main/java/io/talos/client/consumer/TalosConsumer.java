package io.talos.client.consumer;

import com.codahale.metrics.MetricRegistry;
import io.talos.client.TalosException;
import io.talos.client.admin.PartitionOffsets;
import io.talos.client.admin.TalosAdmin;
import io.talos.client.admin.TopicDescription;
import io.talos.client.consumer.internals.ConsumerMetrics;
import io.talos.client.consumer.internals.GroupBalancer;
import io.talos.client.consumer.internals.PartitionReader;
import io.talos.client.internals.TalosRpc;
import io.talos.thrift.CheckPoint;
import io.talos.thrift.ConsumeUnit;
import io.talos.thrift.LockPartitionRequest;
import io.talos.thrift.LockPartitionResponse;
import io.talos.thrift.LockWorkerRequest;
import io.talos.thrift.QueryOffsetRequest;
import io.talos.thrift.QueryWorkerRequest;
import io.talos.thrift.RenewRequest;
import io.talos.thrift.RenewResponse;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicTalosResourceName;
import io.talos.thrift.UnlockPartitionRequest;
import io.talos.thrift.UpdateOffsetRequest;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A member of a consumer group reading a whole topic, on the Talos group protocol of the SDK
 * 2.0.2 (lockWorker, queryWorker, lockPartition, unlockPartition, renew, updateOffset,
 * queryOffset), so a group can mix these consumers with the SDK's {@code TalosConsumer}: both
 * balance partitions with the same rule ({@link GroupBalancer}) to ⌊P/W⌋ or ⌈P/W⌉ per worker.
 *
 * <p>Two ways to consume:
 * <ul>
 *   <li>{@link MessageProcessor} mode ({@code client.consumer(topic, group, config, factory)}):
 *       one processor per partition, called serially in offset order; partitions in parallel on
 *       {@code processor.threads} threads.</li>
 *   <li>poll mode ({@code client.consumer(topic, group, config)}): {@link #poll} returns
 *       fetched messages, each partition's in order; at most {@code max.poll.buffered.records}
 *       wait in memory. A message counts as consumed once poll returned it.</li>
 * </ul>
 *
 * <p>Offsets: the group's committed offset of a partition is its last consumed message.
 * Auto-commit (default) commits every {@code auto.commit.interval.ms} and every
 * {@code auto.commit.messages} messages; manual commit is {@link MessageCheckpointer} or
 * {@link #commitSync()}; progress is also committed when a partition is released and on
 * {@link #close} (with auto-commit). Delivery is at least once: after a crash or a lost lock,
 * messages after the last commit are delivered again, to whichever worker takes the partition.
 *
 * <p>Membership: the consumer registers (lockWorker), renews its registration and locks every
 * {@code renew.interval.ms}, and every {@code worker.check.interval.ms} reads the group
 * (queryWorker) and takes one balancing step. A partition whose renewal fails (another worker
 * took it after this one's lock expired) is stopped without commit. {@link #close} unlocks the
 * partitions; the worker's registration expires with the server's lock TTL (there is no
 * unregister call in the protocol).
 *
 * <p>Thread-safe. Background threads: one for the group protocol, {@code processor.threads} for
 * reading.
 */
public final class TalosConsumer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TalosConsumer.class);

  private final TalosRpc rpc;
  private final TalosAdmin admin;
  private final String topicName;
  private final TopicTalosResourceName resourceName;
  private final String group;
  private final String workerId;
  private final ConsumerConfig config;
  private final MessageProcessorFactory factory;
  private final BlockingQueue<Polled> polled;
  private final ConsumerMetrics metrics;
  private final Map<Integer, PartitionReader> readers = new ConcurrentHashMap<>();
  /**
   * Poll mode: readers whose batch did not fit in the poll buffer; the one who removes a reader
   * from here (poll after making room, or the reader's own re-check) schedules its next step, so
   * that steps of a reader never overlap and no wake-up is lost.
   */
  private final java.util.Set<PartitionReader> waitingForRoom = ConcurrentHashMap.newKeySet();
  /** Partitions in the order they were taken (the SDK releases the oldest first). */
  private final List<Integer> heldOrder = new ArrayList<>();
  private final ScheduledExecutorService coordinator;
  private final ScheduledThreadPoolExecutor pool;
  private final Random random = new Random();
  /** With long poll: at most processor.threads partitions process at once (threads may be more). */
  private final java.util.concurrent.Semaphore processing;
  private volatile int partitionCount;
  private volatile boolean closed;

  /** For {@link io.talos.client.TalosClient}; {@code factory} null means poll mode. */
  public TalosConsumer(TalosRpc rpc, TalosAdmin admin, TopicDescription topic, String group,
      ConsumerConfig config, MessageProcessorFactory factory) {
    if (group == null || group.isEmpty() || group.length() > 256) {
      throw new IllegalArgumentException("consumer group must be 1 to 256 characters, got "
          + (group == null ? "null" : group.length() + " characters"));
    }
    this.rpc = rpc;
    this.admin = admin;
    this.topicName = topic.name();
    this.resourceName = new TopicTalosResourceName(topic.resourceName());
    this.partitionCount = topic.partitionCount();
    this.group = group;
    this.config = config;
    this.workerId = config.workerId().isEmpty() ? newWorkerId() : config.workerId();
    this.factory = factory;
    if (factory == null && config.maxPollBufferedRecords() < config.maxFetchRecords()) {
      throw new io.talos.common.config.ConfigException(ConsumerConfig.MAX_POLL_BUFFERED_RECORDS
          + "=" + config.maxPollBufferedRecords() + ": must be at least "
          + ConsumerConfig.MAX_FETCH_RECORDS + " (" + config.maxFetchRecords() + ") in poll mode");
    }
    if (config.fetchMaxWaitMs() >= rpc.config().requestTimeoutMs()) {
      throw new io.talos.common.config.ConfigException(ConsumerConfig.FETCH_MAX_WAIT_MS + "="
          + config.fetchMaxWaitMs() + ": must be less than the client's requestTimeoutMs ("
          + rpc.config().requestTimeoutMs() + "), or the server's answer would come after the client gave up");
    }
    this.polled = factory == null ? new ArrayBlockingQueue<>(config.maxPollBufferedRecords()) : null;
    this.metrics = new ConsumerMetrics(readers::size,
        () -> readers.values().stream().mapToLong(PartitionReader::lag).sum());
    AtomicInteger threads = new AtomicInteger();
    this.coordinator = new ScheduledThreadPoolExecutor(1, r -> daemon(r, "talos-consumer-group-"
        + group));
    this.pool = new ScheduledThreadPoolExecutor(config.processorThreads(), r -> daemon(r,
        "talos-consumer-" + group + "-" + threads.incrementAndGet()));
    this.pool.setRemoveOnCancelPolicy(true);
    this.processing = new java.util.concurrent.Semaphore(config.processorThreads(), true);
    register();
    coordinator.scheduleWithFixedDelay(guard(this::balanceOnce), 0,
        config.workerCheckIntervalMs(), TimeUnit.MILLISECONDS);
    coordinator.scheduleWithFixedDelay(guard(this::renewOnce), config.renewIntervalMs(),
        config.renewIntervalMs(), TimeUnit.MILLISECONDS);
    coordinator.scheduleWithFixedDelay(guard(this::refreshMetadataOnce),
        config.metadataRefreshIntervalMs(), config.metadataRefreshIntervalMs(),
        TimeUnit.MILLISECONDS);
  }

  public String topicName() {
    return topicName;
  }

  public String group() {
    return group;
  }

  /** This member's worker id in the group. */
  public String workerId() {
    return workerId;
  }

  /** The partitions this member holds now. */
  public List<Integer> assignment() {
    return readers.keySet().stream().sorted().toList();
  }

  /**
   * The consumer's Dropwizard metrics (a {@code MetricSet}): {@code partition.<p>.lag} per held
   * partition, {@code lag}, {@code records-consumed}, commits, errors (see docs/clients.md).
   */
  public MetricRegistry metrics() {
    return metrics.registry();
  }

  /**
   * Poll mode: waits up to {@code timeout} for messages and returns those available (at most
   * {@code max.poll.buffered.records}), each partition's in offset order.
   *
   * @throws IllegalStateException in MessageProcessor mode or after close
   * @throws TalosException when a partition stopped on an error (auto.offset.reset NONE)
   */
  public List<ConsumerRecord> poll(Duration timeout) throws InterruptedException {
    if (polled == null) throw new IllegalStateException("poll() needs a consumer made without a MessageProcessorFactory");
    if (closed) throw new IllegalStateException("the consumer is closed");
    for (PartitionReader r : readers.values()) {
      if (r.failure() != null) throw r.failure();
    }
    List<ConsumerRecord> out = new ArrayList<>();
    Polled first = polled.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
    if (first == null) return out;
    List<Polled> batch = new ArrayList<>();
    batch.add(first);
    polled.drainTo(batch);
    Map<PartitionReader, Long> lastOf = new java.util.HashMap<>();
    for (Polled p : batch) {
      if (p.reader.stopped()) continue; // released meanwhile: the next owner reads it again
      out.add(p.record);
      lastOf.put(p.reader, p.record.offset());
    }
    lastOf.forEach(PartitionReader::markConsumed);
    wakeWaitingForRoom();
    return out;
  }

  /** Commits what every held partition has consumed. @return false if any commit failed */
  public boolean commitSync() {
    boolean ok = true;
    for (PartitionReader r : readers.values()) ok &= r.commitConsumed();
    return ok;
  }

  /**
   * Commits explicit offsets (last consumed message per partition) of held partitions.
   *
   * @throws IllegalArgumentException for a partition not held, or an offset outside the committed
   *     to consumed range
   */
  public boolean commitSync(Map<Integer, Long> offsets) {
    boolean ok = true;
    for (Map.Entry<Integer, Long> e : offsets.entrySet()) {
      PartitionReader r = readers.get(e.getKey());
      if (r == null) throw new IllegalArgumentException("partition " + e.getKey() + " is not held by this consumer");
      ok &= r.commit(e.getValue());
    }
    return ok;
  }

  /** Stops reading, commits (with auto-commit), unlocks the partitions. Idempotent. */
  @Override
  public void close() {
    if (closed) return;
    closed = true;
    coordinator.shutdownNow();
    try {
      coordinator.awaitTermination(rpc.config().requestTimeoutMs(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    List<Integer> held;
    synchronized (this) {
      held = new ArrayList<>(heldOrder);
    }
    release(held, true);
    pool.shutdownNow();
  }

  // ---------------------------------------------------------------- group protocol

  private void register() {
    rpc.consumer(c -> c.lockWorker(new LockWorkerRequest(unit(List.of()))));
  }

  /** One balancing step (see {@link GroupBalancer}). */
  synchronized void balanceOnce() {
    if (closed) return;
    Map<String, List<Integer>> workers = rpc.consumer(c -> c.queryWorker(
        new QueryWorkerRequest(group, resourceName))).getWorkerMap();
    if (!workers.containsKey(workerId)) {
      LOG.warn("worker {} is not registered in group {} (expired?); registering again", workerId, group);
      register();
      return;
    }
    GroupBalancer.Decision d = GroupBalancer.decide(workerId, partitionCount, workers,
        List.copyOf(heldOrder), random);
    if (d.isEmpty()) return;
    metrics.rebalances.mark();
    if (!d.toRelease().isEmpty()) {
      LOG.info("worker {} releases partitions {} of {}", workerId, d.toRelease(), topicName);
      release(d.toRelease(), true);
    }
    if (!d.toLock().isEmpty()) {
      LockPartitionResponse r = rpc.consumer(c -> c.lockPartition(
          new LockPartitionRequest(unit(d.toLock()))));
      LOG.info("worker {} locked partitions {} of {} (refused: {})", workerId,
          r.getSuccessPartitions(), topicName, r.getFailedPartitions());
      for (int p : r.getSuccessPartitions()) start(p);
    }
  }

  synchronized void renewOnce() {
    if (closed) return;
    RenewResponse r = rpc.consumer(c -> c.renew(new RenewRequest(unit(List.copyOf(heldOrder)))));
    if (r.getFailedPartitionList() != null && !r.getFailedPartitionList().isEmpty()) {
      LOG.warn("worker {} lost partitions {} of {}", workerId, r.getFailedPartitionList(), topicName);
      for (int p : r.getFailedPartitionList()) {
        PartitionReader reader = readers.remove(p);
        heldOrder.remove((Integer) p);
        metrics.removePartition(p);
        if (reader != null) reader.stop(false);
      }
    }
  }

  void refreshMetadataOnce() {
    if (closed) return;
    TopicDescription d = admin.describeTopic(topicName);
    if (!d.resourceName().equals(resourceName.getTopicTalosResourceName())) {
      LOG.error("topic {} was deleted and created again; this consumer keeps the old one", topicName);
      return;
    }
    partitionCount = Math.max(partitionCount, d.partitionCount());
    for (PartitionOffsets o : admin.getTopicOffsets(topicName)) {
      PartitionReader r = readers.get(o.partitionId());
      if (r != null && !o.hasError()) r.updateEndOffset(o.endOffset());
    }
  }

  private void start(int partition) {
    MessageProcessor processor = factory != null ? factory.createProcessor() : new PollFeeder(partition);
    TopicAndPartition tp = new TopicAndPartition(topicName, resourceName, partition);
    SimpleConsumer fetcher = new SimpleConsumer(rpc, topicName,
        resourceName.getTopicTalosResourceName(), partition);
    PartitionReader reader = new PartitionReader(partition,
        (PartitionReader.WaitingFetcher) fetcher::fetch,
        processor, new GroupOffsetsOf(tp), config, System::currentTimeMillis, metrics,
        factory != null);
    if (processor instanceof PollFeeder f) f.reader = reader;
    if (config.fetchMaxWaitMs() > 0) reader.limitProcessing(processing);
    readers.put(partition, reader);
    heldOrder.add(partition);
    if (config.fetchMaxWaitMs() > 0 && readers.size() > pool.getCorePoolSize()) {
      // A long-poll fetch occupies its thread while the server holds it: one thread per held
      // partition, so that a waiting partition never delays one with messages.
      pool.setCorePoolSize(readers.size());
    }
    metrics.addPartition(reader);
    pool.execute(() -> step(reader));
  }

  private void step(PartitionReader reader) {
    PartitionReader.Step s = reader.runOnce();
    if (s == PartitionReader.Step.STOPPED || pool.isShutdown()) return;
    try {
      if (s == PartitionReader.Step.BUSY) {
        pool.execute(() -> step(reader));
      } else if (s == PartitionReader.Step.BLOCKED && polled != null) {
        // The poll buffer was full: go on once poll has made room, not after fetch.backoff.ms
        // (with a backlog that pause would bound the throughput to a buffer per backoff).
        waitingForRoom.add(reader);
        if (polled.remainingCapacity() >= config.maxFetchRecords() && waitingForRoom.remove(reader)) {
          pool.execute(() -> step(reader)); // poll made room between the full check and the add
        }
      } else {
        pool.schedule(() -> step(reader), config.fetchBackoffMs(), TimeUnit.MILLISECONDS);
      }
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // closing
    }
  }

  /** Poll mode: schedules the next step of every reader that waits for room in the buffer. */
  private void wakeWaitingForRoom() {
    for (PartitionReader r : waitingForRoom) {
      if (!waitingForRoom.remove(r)) continue; // woken by someone else
      try {
        pool.execute(() -> step(r));
      } catch (java.util.concurrent.RejectedExecutionException e) {
        return; // closing
      }
    }
  }

  private void release(List<Integer> partitions, boolean commit) {
    List<Integer> released = new ArrayList<>();
    for (int p : partitions) {
      PartitionReader reader;
      synchronized (this) {
        reader = readers.remove(p);
        heldOrder.remove((Integer) p);
      }
      metrics.removePartition(p);
      if (reader != null) {
        waitingForRoom.remove(reader);
        reader.stop(commit);
        released.add(p);
      }
    }
    if (released.isEmpty()) return;
    try {
      rpc.consumer(c -> {
        c.unlockPartition(new UnlockPartitionRequest(unit(released)));
        return null;
      });
    } catch (TalosException | IllegalStateException e) {
      LOG.warn("unlocking partitions {} failed (they expire with the lock TTL): {}", released, e.getMessage());
    }
  }

  private ConsumeUnit unit(List<Integer> partitions) {
    return new ConsumeUnit(group, resourceName, new ArrayList<>(partitions), workerId);
  }

  private Runnable guard(Runnable task) {
    return () -> {
      try {
        task.run();
      } catch (TalosException | IllegalStateException e) {
        if (!closed) LOG.warn("consumer group {} of {}: {}", group, topicName, e.getMessage());
      } catch (RuntimeException e) {
        LOG.error("consumer group {} of {}: unexpected failure", group, topicName, e);
      }
    };
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  private static String newWorkerId() {
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (Exception e) {
      host = "localhost";
    }
    return "talos-java-" + host + "-" + ProcessHandle.current().pid() + "-"
        + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 20);
  }

  /** The group's offsets of one partition, as this worker sees them. */
  private final class GroupOffsetsOf implements PartitionReader.GroupOffsets {
    private final TopicAndPartition tp;

    GroupOffsetsOf(TopicAndPartition tp) {
      this.tp = tp;
    }

    @Override
    public long committed() {
      return rpc.consumer(c -> c.queryOffset(new QueryOffsetRequest(group, tp))).getMsgOffset();
    }

    @Override
    public boolean commit(long offset) {
      return rpc.consumer(c -> c.updateOffset(new UpdateOffsetRequest(
          new CheckPoint(group, tp, offset, workerId)))).isSuccess();
    }

    @Override
    public long[] range() {
      PartitionOffsets o = admin.getPartitionOffset(topicName, tp.getPartitionId());
      return new long[] {o.startOffset(), o.endOffset()};
    }

    @Override
    public long offsetForTimestamp(long timestampMs) {
      return admin.offsetForTimestamp(topicName, tp.getPartitionId(), timestampMs);
    }
  }

  private record Polled(PartitionReader reader, ConsumerRecord record) {}

  /** Poll mode: a partition's "processor" queues its messages for {@link #poll}. */
  private final class PollFeeder implements MessageProcessor {
    private final int partition;
    PartitionReader reader;

    PollFeeder(int partition) {
      this.partition = partition;
    }

    @Override
    public void init(int partition, long startOffset) {}

    /** Throws (so the batch comes again later) when the poll buffer has no room for it all. */
    @Override
    public void process(List<ConsumedMessage> messages, MessageCheckpointer checkpointer) {
      synchronized (polled) { // producers only add under this lock, so the check holds
        if (polled.remainingCapacity() < messages.size()) throw new PartitionReader.RetryLater();
        for (ConsumedMessage m : messages) polled.add(new Polled(reader, new ConsumerRecord(partition, m)));
      }
    }
  }
}
