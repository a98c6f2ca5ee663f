package io.talos.client.producer.internals;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.client.FakeTalosServer;
import io.talos.client.TalosException;
import io.talos.client.admin.TalosAdmin;
import io.talos.client.admin.TopicAttributeChange;
import io.talos.client.internals.TalosRpc;
import io.talos.client.producer.Callback;
import io.talos.client.producer.DeliveryTimeoutException;
import io.talos.client.producer.KeyHashPartitioner;
import io.talos.client.producer.ProducerConfig;
import io.talos.client.producer.RecordMetadata;
import io.talos.thrift.MessageService;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.thrift.protocol.TCompactProtocol;
import org.apache.thrift.transport.TMemoryInputTransport;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Steps the sender by hand: a clock that moves only when told, requests sent synchronously on
 * the test thread. The retry schedule and the delivery deadline are checked to the millisecond,
 * without sleeping. (Real-server behaviour is covered in talos-server's
 * TalosProducerEndToEndTest.)
 */
class SenderTest {
  private final AtomicLong clock = new AtomicLong(1_000_000);
  private FakeTalosServer server;
  private TalosRpc rpc;
  private TopicMetadata topic;
  private BufferMemory memory;
  private RecordAccumulator accumulator;
  private ProducerMetrics metrics;
  private Sender sender;

  @BeforeEach
  void start() throws Exception {
    server = new FakeTalosServer();
    rpc = new TalosRpc(server.config().build());
    new TalosAdmin(rpc).createTopic("t", 1);
  }

  @AfterEach
  void stop() {
    rpc.close();
    server.close();
  }

  private void sender(ProducerConfig config) {
    topic = new TopicMetadata(new TalosAdmin(rpc).describeTopic("t"));
    memory = new BufferMemory(config.bufferMemoryBytes());
    accumulator = new RecordAccumulator(config.batchMaxRecords(), config.batchMaxBytes(),
        config.lingerMs(), config.compressionType(), memory, new KeyHashPartitioner(),
        topic::partitionCount);
    metrics = new ProducerMetrics(memory, accumulator, topic::partitionCount);
    sender = new Sender(rpc, topic, accumulator, memory, metrics, config, clock::get, Runnable::run,
        "test-client");
  }

  private CompletableFuture<RecordMetadata> append() throws Exception {
    return append(0, null);
  }

  private long puts() {
    return server.requests().stream().filter(r -> r.query().endsWith("type=putMessage")).count();
  }

  private void advanceTo(long offsetMs) {
    clock.set(1_000_000 + offsetMs);
  }

  @Test
  void retriesWithExponentialBackoffThenSucceeds() throws Exception {
    sender(ProducerConfig.builder().lingerMs(0).enableIdempotence(false).retryBackoffMs(100).retryBackoffMaxMs(300)
        .metadataRefreshIntervalMs(86_400_000).build());
    CompletableFuture<RecordMetadata> f = append();
    for (int i = 0; i < 3; i++) server.enqueue(FakeTalosServer.Canned.text(503, "busy"));

    advanceTo(0);
    assertEquals(100, sender.runOnce(), "next turn when the backoff ends");
    assertEquals(1, puts());
    long[][] schedule = {{99, 1}, {100, 2}, {299, 2}, {300, 3}, {599, 3}, {600, 4}};
    for (long[] step : schedule) { // backoffs 100, 200, then 300 (the cap) instead of 400
      advanceTo(step[0]);
      sender.runOnce();
      assertEquals(step[1], puts(), "puts sent by t=" + step[0]);
    }
    assertEquals(0, f.get().offset());
    assertEquals(3, metrics.retries.getCount());
    List<String> sequenceIds = new ArrayList<>();
    List<ByteBuffer> blocks = new ArrayList<>();
    for (FakeTalosServer.Received r : server.requests()) {
      if (!r.query().endsWith("type=putMessage")) continue;
      TCompactProtocol p = new TCompactProtocol(new TMemoryInputTransport(r.body()));
      p.readMessageBegin();
      MessageService.putMessage_args args = new MessageService.putMessage_args();
      args.read(p);
      sequenceIds.add(args.getRequest().getSequenceId());
      blocks.add(args.getRequest().getMessageBlocks().get(0).bufferForMessageBlock());
    }
    assertEquals(List.of("test-client#1", "test-client#1", "test-client#1", "test-client#1"), sequenceIds,
        "a retry is the same request");
    assertEquals(1, new java.util.HashSet<>(blocks).size(), "with the same block");
    assertEquals(0, memory.usedBytes());
    assertTrue(accumulator.isEmpty());
  }

  private List<io.talos.thrift.PutMessageRequest> putRequests() throws Exception {
    List<io.talos.thrift.PutMessageRequest> out = new ArrayList<>();
    for (FakeTalosServer.Received r : server.requests()) {
      if (!r.query().endsWith("type=putMessage")) continue;
      TCompactProtocol p = new TCompactProtocol(new TMemoryInputTransport(r.body()));
      p.readMessageBegin();
      MessageService.putMessage_args args = new MessageService.putMessage_args();
      args.read(p);
      out.add(args.getRequest());
    }
    return out;
  }

  private List<String> producerSequences() throws Exception {
    List<String> seen = new ArrayList<>();
    for (io.talos.thrift.PutMessageRequest r : putRequests()) {
      seen.add(r.getProducerId() + "/" + r.getProducerSequence());
    }
    return seen;
  }

  @Test
  void idempotentBatchesCarryProducerIdAndSequenceAndRetriesKeepThem() throws Exception {
    sender(ProducerConfig.builder().lingerMs(0).retryBackoffMs(100).retryBackoffMaxMs(100)
        .metadataRefreshIntervalMs(86_400_000).build());
    CompletableFuture<RecordMetadata> f0 = append();
    advanceTo(0);
    sender.runOnce(); // asks for the producer id, sends batch 0
    assertEquals(0, f0.get().offset());
    CompletableFuture<RecordMetadata> f1 = append();
    server.enqueue(FakeTalosServer.Canned.text(503, "busy"));
    sender.runOnce(); // batch 1 fails retriably
    advanceTo(100);
    sender.runOnce(); // batch 1 again
    assertEquals(1, f1.get().offset());
    assertEquals(List.of("1/0", "1/1", "1/1"), producerSequences(), "producer id 1; a retry keeps its sequence");
  }

  @Test
  void aBatchThatFailsForGoodStartsOverUnderANewProducerId() throws Exception {
    sender(ProducerConfig.builder().lingerMs(0).retries(0).metadataRefreshIntervalMs(86_400_000).build());
    CompletableFuture<RecordMetadata> f0 = append();
    advanceTo(0);
    sender.runOnce();
    f0.get();
    CompletableFuture<RecordMetadata> f1 = append();
    server.enqueue(FakeTalosServer.Canned.text(503, "busy"));
    sender.runOnce();
    assertTrue(f1.isCompletedExceptionally(), "no retries: failed for good, maybe stored");
    CompletableFuture<RecordMetadata> f2 = append();
    sender.runOnce();
    f2.get();
    assertEquals(List.of("1/0", "1/1", "2/0"), producerSequences(),
        "a gap after 1/1 would be refused: new id, sequence 0");
  }

  private CompletableFuture<RecordMetadata> append(int partition, Callback callback) throws Exception {
    memory.reserve(21, 0);
    CompletableFuture<RecordMetadata> f = new CompletableFuture<>();
    accumulator.append(partition, new byte[] {7}, null, clock.get(), 21, 21, f, callback, clock.get());
    return f;
  }

  /**
   * A sent batch that expires while waiting for its retry leaves the server one sequence short.
   * The sender thread removes it from its queue, then fails it; an I/O thread that got an answer
   * meanwhile drains the partition's next batch (Sender.send's loop) at any point in between, e.g.
   * while the callbacks of another expired batch run. That batch must not go out with the next
   * sequence under the same producer id: the server would refuse the gap (OUT_OF_ORDER_SEQUENCE)
   * and fail records it could have stored. The callback below runs exactly that I/O thread's step
   * on its own thread inside the window.
   */
  @Test
  void aBatchDrainedWhileAnExpiredSentBatchIsBeingFailedTakesANewProducerId() throws Exception {
    new TalosAdmin(rpc).changeTopicAttribute("t", TopicAttributeChange.ofPartitionCount(2));
    ProducerConfig config = ProducerConfig.builder().lingerMs(5000).batchMaxRecords(2).deliveryTimeoutMs(1000)
        .retryBackoffMs(999).retryBackoffMaxMs(999).metadataRefreshIntervalMs(86_400_000).build();
    sender(config);
    advanceTo(0);
    CompletableFuture<RecordMetadata> b0 = append(1, null);
    append(1, null); // batch 0 of partition 1 is full: ready
    sender.runOnce();
    assertEquals(0, b0.get().offset(), "1/0 stored");

    List<Throwable> ioThreadErrors = new ArrayList<>();
    Callback inTheWindow = (m, e) -> {
      Thread io = new Thread(() -> { // an I/O thread that just got an answer drains the next batch
        for (ProducerBatch b : accumulator.drain(clock.get(), 1, config.maxInFlightRequests())) sender.send(b);
      });
      io.setUncaughtExceptionHandler((t, x) -> ioThreadErrors.add(x));
      io.start();
      try {
        io.join();
      } catch (InterruptedException x) {
        throw new IllegalStateException(x);
      }
    };
    CompletableFuture<RecordMetadata> lingering = append(0, inTheWindow); // never sent, expires first
    CompletableFuture<RecordMetadata> b1 = append(1, null);
    append(1, null);
    server.enqueue(FakeTalosServer.Canned.text(503, "busy"));
    sender.runOnce(); // 1/1 fails retriably: retry at 999, before its deadline at 1000
    assertEquals(List.of("1/0", "1/1"), producerSequences());
    advanceTo(10);
    CompletableFuture<RecordMetadata> b2 = append(1, null);
    append(1, null); // batch 2 of partition 1, full, behind batch 1

    advanceTo(1000); // the sender wakes 1 ms late: batch 1 expires before its retry
    sender.runOnce();
    assertTrue(ioThreadErrors.isEmpty(), ioThreadErrors.toString());
    assertInstanceOf(DeliveryTimeoutException.class,
        org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, lingering::get).getCause());
    assertInstanceOf(DeliveryTimeoutException.class,
        org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, b1::get).getCause());
    assertEquals(List.of("1/0", "1/1", "2/0"), producerSequences(),
        "1/1 may never have been stored: batch 2 must not go out as 1/2 (a gap the server refuses)");
    assertEquals(2, b2.get().offset(), "after the 2 records of batch 0; batch 1 was never stored");
    assertEquals(0, memory.usedBytes());
  }

  @Test
  void idempotenceOffSendsPlainPuts() throws Exception {
    sender(ProducerConfig.builder().lingerMs(0).enableIdempotence(false).metadataRefreshIntervalMs(86_400_000)
        .build());
    CompletableFuture<RecordMetadata> f = append();
    advanceTo(0);
    sender.runOnce();
    f.get();
    io.talos.thrift.PutMessageRequest r = putRequests().get(0);
    assertFalse(r.isSetProducerId());
    assertFalse(r.isSetProducerSequence());
    assertTrue(server.requests().stream().noneMatch(x -> x.query().endsWith("type=initProducerId")));
  }

  @Test
  void stopsRetryingAtTheDeliveryDeadline() throws Exception {
    sender(ProducerConfig.builder().lingerMs(0).enableIdempotence(false).retryBackoffMs(100).retryBackoffMaxMs(1000)
        .deliveryTimeoutMs(1000).metadataRefreshIntervalMs(86_400_000).build());
    CompletableFuture<RecordMetadata> f = append();
    for (int i = 0; i < 10; i++) server.enqueue(FakeTalosServer.Canned.text(503, "busy"));
    for (long t : new long[] {0, 100, 300, 700}) { // the retry after 700 would start at 1500
      advanceTo(t);
      sender.runOnce();
    }
    assertEquals(4, puts());
    ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, f::get);
    DeliveryTimeoutException timeout = assertInstanceOf(DeliveryTimeoutException.class, e.getCause());
    assertTrue(timeout.getMessage().contains("4 attempts"), timeout.getMessage());
    assertEquals(503, ((TalosException) timeout.getCause()).httpStatus());
    assertEquals(0, memory.usedBytes());
  }

  @Test
  void expiresABatchThatWaitedTooLong() throws Exception {
    sender(ProducerConfig.builder().lingerMs(5000).deliveryTimeoutMs(2000)
        .metadataRefreshIntervalMs(86_400_000).build());
    CompletableFuture<RecordMetadata> f = append();
    advanceTo(1999);
    sender.runOnce();
    assertFalse(f.isDone());
    advanceTo(2000);
    sender.runOnce();
    assertInstanceOf(DeliveryTimeoutException.class,
        org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, f::get).getCause());
    assertEquals(0, puts(), "never sent");
  }

  @Test
  void aNonRetriableErrorFailsAtOnceWithItsCode() throws Exception {
    sender(ProducerConfig.builder().lingerMs(0).metadataRefreshIntervalMs(86_400_000).build());
    CompletableFuture<RecordMetadata> f = append();
    new TalosAdmin(rpc).deleteTopic("t");
    advanceTo(0);
    sender.runOnce();
    TalosException e = assertInstanceOf(TalosException.class,
        org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, f::get).getCause());
    assertEquals(io.talos.thrift.ErrorCode.TOPIC_NOT_EXIST, e.errorCode());
    assertEquals(0, metrics.retries.getCount());
  }

  @Test
  void refreshesThePartitionCountOnSchedule() throws Exception {
    sender(ProducerConfig.builder().metadataRefreshIntervalMs(1000).build());
    new TalosAdmin(rpc).changeTopicAttribute("t", TopicAttributeChange.ofPartitionCount(3));
    advanceTo(999);
    sender.runOnce();
    assertEquals(1, topic.partitionCount(), "not yet due");
    advanceTo(1000);
    sender.runOnce();
    assertEquals(3, topic.partitionCount());
  }

  /**
   * The I/O thread that got a put's answer sends the partition's next ready batch itself, within
   * the same turn, instead of leaving it to the sender thread's next turn (two thread hand-offs).
   */
  @Test
  void theThreadThatGotAnAnswerSendsTheNextReadyBatch() throws Exception {
    sender(ProducerConfig.builder().lingerMs(0).batchMaxRecords(1).enableIdempotence(false)
        .metadataRefreshIntervalMs(86_400_000).build());
    CompletableFuture<RecordMetadata> first = append(); // a batch of its own (batch.max.records=1)
    CompletableFuture<RecordMetadata> second = append(); // the partition's next batch, behind it
    advanceTo(0);
    sender.runOnce(); // requests run on the calling thread here
    assertEquals(2, puts(), "the second batch went out after the first's answer, in the same turn");
    assertEquals(0, first.get().offset());
    assertEquals(1, second.get().offset());
    assertTrue(accumulator.isEmpty());
    assertEquals(0, accumulator.inFlightCount());
  }
}
