package io.talos.server;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.codahale.metrics.MetricRegistry;
import io.talos.client.TalosClient;
import io.talos.client.TalosClientConfig;
import io.talos.client.TalosException;
import io.talos.client.admin.TalosAdmin;
import io.talos.client.admin.TopicAttributeChange;
import io.talos.client.codec.CompressionType;
import io.talos.client.consumer.ConsumedMessage;
import io.talos.client.consumer.SimpleConsumer;
import io.talos.client.producer.BufferExhaustedException;
import io.talos.client.producer.DeliveryTimeoutException;
import io.talos.client.producer.ProducerClosedException;
import io.talos.client.producer.ProducerConfig;
import io.talos.client.producer.ProducerRecord;
import io.talos.client.producer.RecordMetadata;
import io.talos.client.producer.TalosProducer;
import io.talos.client.producer.internals.ProducerMetrics;
import io.talos.common.config.ConfigException;
import io.talos.server.FaultInjectingProxy.Fault;
import io.talos.thrift.ErrorCode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The asynchronous {@link TalosProducer} against a real server over HTTP. Puts go through a
 * {@link FaultInjectingProxy} so that tests can make the server fail retriably or stall; admin
 * calls and reads go to the server directly.
 */
class TalosProducerEndToEndTest {
  private static final long WAIT_S = 60;

  @TempDir
  static Path dataDir;

  static TalosServer server;
  static FaultInjectingProxy proxy;
  static TalosClient direct;
  static TalosClient viaProxy;
  static TalosAdmin admin;

  @BeforeAll
  static void start() throws Exception {
    server = TestServers.start(dataDir);
    proxy = new FaultInjectingProxy(server.endpoint());
    TalosClientConfig config = TalosClientConfig.builder()
        .endpoint(server.endpoint().toString())
        .credentialFile(dataDir.resolve("admin-credential.properties"))
        .build();
    direct = TalosClient.create(config);
    viaProxy = TalosClient.create(config.toBuilder().endpoint(proxy.endpoint())
        .requestTimeoutMs(5_000).build());
    admin = direct.admin();
  }

  @AfterAll
  static void stop() {
    viaProxy.close();
    direct.close();
    proxy.close();
    server.close();
  }

  @AfterEach
  void resetProxy() {
    proxy.reset();
  }

  @Test
  void batchesByCountWithEveryCompressionAndReportsOffsetsInOrder() throws Exception {
    admin.createTopic("prod-batch", 1);
    List<byte[]> sent = new ArrayList<>();
    int expectedOffset = 0;
    for (CompressionType compression : CompressionType.values()) {
      ProducerConfig config = ProducerConfig.builder().compressionType(compression)
          .batchMaxRecords(10).lingerMs(60_000).build();
      try (TalosProducer producer = viaProxy.producer("prod-batch", config)) {
        int putsBefore = proxy.putsReceived();
        List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
        List<Long> callbackOffsets = Collections.synchronizedList(new ArrayList<>());
        for (int i = 0; i < 25; i++) {
          byte[] value = (compression + "-" + i + "-" + "x".repeat(i * 10)).getBytes(UTF_8);
          sent.add(value);
          futures.add(producer.send(new ProducerRecord(null, value, 0, "seq-" + i, ProducerRecord.NOW),
              (m, e) -> callbackOffsets.add(e == null ? m.offset() : -100)));
        }
        // two full batches of 10 go without waiting for linger.ms; the last 5 linger
        for (int i = 0; i < 20; i++) futures.get(i).get(WAIT_S, TimeUnit.SECONDS);
        assertFalse(futures.get(24).isDone(), "a batch that is not full waits for linger.ms");
        producer.flush();
        for (int i = 0; i < 25; i++) {
          RecordMetadata m = futures.get(i).getNow(null);
          assertEquals(new RecordMetadata("prod-batch", 0, expectedOffset + i, m.timestampMs()), m);
          assertTrue(Math.abs(m.timestampMs() - System.currentTimeMillis()) < 600_000);
        }
        List<Long> expected = new ArrayList<>();
        for (int i = 0; i < 25; i++) expected.add((long) expectedOffset + i);
        assertEquals(expected, callbackOffsets, "callbacks in send order");
        assertEquals(3, proxy.putsReceived() - putsBefore, "25 records in batches of 10, 10, 5");

        MetricRegistry metrics = producer.metrics();
        assertEquals(25, metrics.meter(ProducerMetrics.RECORDS_SENT).getCount());
        assertEquals(3, metrics.histogram(ProducerMetrics.BATCH_RECORDS).getCount());
        assertEquals(10, metrics.histogram(ProducerMetrics.BATCH_RECORDS).getSnapshot().getMax());
        assertEquals(3, metrics.timer(ProducerMetrics.REQUEST_LATENCY).getCount());
        assertTrue(metrics.meter(ProducerMetrics.BYTES_SENT).getCount() > 25 * 20);
        assertEquals(0L, metrics.getGauges().get(ProducerMetrics.BUFFER_USED_BYTES).getValue());
        assertEquals(0, metrics.meter(ProducerMetrics.RETRIES).getCount());
        long raw = metrics.histogram(ProducerMetrics.BATCH_BYTES).getSnapshot().getMax();
        long wire = metrics.histogram(ProducerMetrics.BATCH_COMPRESSED_BYTES).getSnapshot().getMax();
        if (compression == CompressionType.NONE) {
          assertEquals(raw, wire);
        } else {
          assertTrue(wire < raw, compression + " shrinks the repetitive batch: " + wire + " < " + raw);
        }
        expectedOffset += 25;
      }
    }
    List<ConsumedMessage> got = readAll("prod-batch", 0, sent.size());
    for (int i = 0; i < sent.size(); i++) {
      assertArrayEquals(sent.get(i), got.get(i).payload(), "message " + i);
      assertEquals("seq-" + (i % 25), got.get(i).sequenceNumber());
    }
  }

  @Test
  void batchesByBytesAndByLingerTime() throws Exception {
    admin.createTopic("prod-bytes", 1);
    // each record: 100 bytes of value + 20 bytes of framing = 120; three fill a 360-byte batch
    ProducerConfig bySize = ProducerConfig.builder().batchMaxBytes(360).lingerMs(60_000).build();
    try (TalosProducer producer = viaProxy.producer("prod-bytes", bySize)) {
      int before = proxy.putsReceived();
      List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
      for (int i = 0; i < 9; i++) futures.add(producer.send(ProducerRecord.toPartition(0, new byte[100])));
      for (CompletableFuture<RecordMetadata> f : futures) f.get(WAIT_S, TimeUnit.SECONDS);
      assertEquals(3, proxy.putsReceived() - before);
      assertEquals(3, producer.metrics().histogram(ProducerMetrics.BATCH_RECORDS).getSnapshot().getMax());
    }
    ProducerConfig byTime = ProducerConfig.builder().lingerMs(1500).build();
    try (TalosProducer producer = viaProxy.producer("prod-bytes", byTime)) {
      int before = proxy.putsReceived();
      List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
      for (int i = 0; i < 5; i++) futures.add(producer.send(ProducerRecord.toPartition(0, new byte[] {(byte) i})));
      for (CompletableFuture<RecordMetadata> f : futures) f.get(WAIT_S, TimeUnit.SECONDS); // no flush
      assertEquals(1, proxy.putsReceived() - before, "sent together once linger.ms passed");
    }
  }

  @Test
  void aFullBufferBlocksSendForMaxBlockMsThenFails() throws Exception {
    admin.createTopic("prod-buffer", 1);
    ProducerConfig config = ProducerConfig.builder().bufferMemoryBytes(4096).maxBlockMs(300)
        .lingerMs(0).build();
    try (TalosProducer producer = viaProxy.producer("prod-buffer", config)) {
      proxy.holdPuts();
      List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
      for (int i = 0; i < 4; i++) futures.add(producer.send(ProducerRecord.toPartition(0, new byte[1000])));
      // the batches' buffers: the four records' 4080 bytes, and at most the rest of the buffer as
      // room not yet filled (how the records split into batches depends on when the first is sent)
      long used = (Long) producer.metrics().getGauges().get(ProducerMetrics.BUFFER_USED_BYTES).getValue();
      assertTrue(used >= 4080 && used <= 4096, "used " + used);
      long start = System.nanoTime();
      BufferExhaustedException e = assertThrows(BufferExhaustedException.class,
          () -> producer.send(ProducerRecord.toPartition(0, new byte[1000])));
      long blockedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      assertTrue(blockedMs >= 300, "blocked " + blockedMs + " ms");
      assertTrue(e.getMessage().contains("buffer.memory.bytes=4096") && e.getMessage().contains("max.block.ms=300"),
          e.getMessage());
      assertEquals(used, producer.metrics().getGauges().get(ProducerMetrics.BUFFER_USED_BYTES).getValue(),
          "the refused record took no memory");
      IllegalArgumentException tooBig = assertThrows(IllegalArgumentException.class,
          () -> producer.send(ProducerRecord.toPartition(0, new byte[5000])));
      assertTrue(tooBig.getMessage().contains("can never fit"), tooBig.getMessage());

      proxy.release();
      for (CompletableFuture<RecordMetadata> f : futures) f.get(WAIT_S, TimeUnit.SECONDS);
      producer.send(ProducerRecord.toPartition(0, new byte[1000])).get(WAIT_S, TimeUnit.SECONDS);
      assertEquals(0L, producer.metrics().getGauges().get(ProducerMetrics.BUFFER_USED_BYTES).getValue());
    }
    assertEquals(5, admin.getPartitionOffset("prod-buffer", 0).endOffset() + 1);
  }

  @Test
  void retriableFailuresAreRetriedWithoutReorderingAPartition() throws Exception {
    admin.createTopic("prod-retry", 2);
    List<Fault> faults = new ArrayList<>();
    for (int i = 0; i < 12; i++) faults.add(i % 3 == 0 ? Fault.NONE : i % 3 == 1 ? Fault.HTTP_503 : Fault.PARTITION_NOT_SERVING);
    proxy.failNextPuts(faults);
    ProducerConfig config = ProducerConfig.builder().batchMaxRecords(7).lingerMs(0)
        .retryBackoffMs(5).retryBackoffMaxMs(20).maxInFlightRequests(4).build();
    Map<Integer, List<String>> sent = new HashMap<>();
    List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
    try (TalosProducer producer = viaProxy.producer("prod-retry", config)) {
      for (int i = 0; i < 200; i++) {
        int partition = i % 2;
        String value = "r" + i;
        sent.computeIfAbsent(partition, p -> new ArrayList<>()).add(value);
        futures.add(producer.send(ProducerRecord.toPartition(partition, value.getBytes(UTF_8))));
      }
      producer.flush();
      assertEquals(8, producer.metrics().meter(ProducerMetrics.RETRIES).getCount(),
          "every injected failure was retried");
    }
    assertEquals(8, proxy.putsFailed());
    for (CompletableFuture<RecordMetadata> f : futures) assertTrue(f.isDone() && !f.isCompletedExceptionally());
    for (int p = 0; p < 2; p++) {
      List<String> got = new ArrayList<>();
      for (ConsumedMessage m : readAll("prod-retry", p, 100)) got.add(new String(m.payload(), UTF_8));
      assertEquals(sent.get(p), got, "partition " + p + " in send order, each record once");
    }
  }

  @Test
  void deliveryTimeoutEndsRetrying() throws Exception {
    admin.createTopic("prod-timeout", 1);
    proxy.failEveryPut(Fault.HTTP_503);
    try (TalosClient shortTimeout = TalosClient.create(viaProxy.config().toBuilder().requestTimeoutMs(1000).build())) {
      ConfigException tooShort = assertThrows(ConfigException.class, () -> shortTimeout.producer("prod-timeout",
          ProducerConfig.builder().deliveryTimeoutMs(1000).lingerMs(5).build()));
      assertTrue(tooShort.getMessage().contains("must be >= linger.ms + the client's requestTimeoutMs = 1005"),
          tooShort.getMessage());
      ProducerConfig config = ProducerConfig.builder().deliveryTimeoutMs(1500).lingerMs(0)
          .retryBackoffMs(50).retryBackoffMaxMs(200).build();
      try (TalosProducer producer = shortTimeout.producer("prod-timeout", config)) {
        CompletableFuture<RecordMetadata> f = producer.send(ProducerRecord.of(new byte[] {1}));
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(WAIT_S, TimeUnit.SECONDS));
        DeliveryTimeoutException timeout = assertInstanceOf(DeliveryTimeoutException.class, e.getCause());
        assertTrue(timeout.getMessage().contains("delivery.timeout.ms=1500"), timeout.getMessage());
        TalosException last = assertInstanceOf(TalosException.class, timeout.getCause());
        assertEquals(503, last.httpStatus());
        assertTrue(producer.metrics().meter(ProducerMetrics.RETRIES).getCount() >= 1);
        assertEquals(1, producer.metrics().meter(ProducerMetrics.RECORDS_FAILED).getCount());
      }
    }
    assertEquals(0, admin.getPartitionOffset("prod-timeout", 0).endOffset() + 1, "nothing stored");
  }

  @Test
  void aNonRetriableErrorFailsTheRecordWithTheWireCode() throws Exception {
    admin.createTopic("prod-gone", 1);
    try (TalosProducer producer = viaProxy.producer("prod-gone", ProducerConfig.builder().lingerMs(0).build())) {
      producer.send(ProducerRecord.of(new byte[] {1})).get(WAIT_S, TimeUnit.SECONDS);

      CompletableFuture<RecordMetadata> noPartition = producer.send(ProducerRecord.toPartition(3, new byte[] {1}));
      ExecutionException e1 = assertThrows(ExecutionException.class, noPartition::get);
      assertEquals(ErrorCode.PARTITION_NOT_EXIST, ((TalosException) e1.getCause()).errorCode());

      admin.deleteTopic("prod-gone");
      AtomicReference<Exception> seen = new AtomicReference<>();
      CompletableFuture<RecordMetadata> f = producer.send(ProducerRecord.of(new byte[] {2}),
          (m, error) -> {
            assertNull(m);
            seen.set(error);
          });
      ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(WAIT_S, TimeUnit.SECONDS));
      TalosException refused = assertInstanceOf(TalosException.class, e.getCause());
      assertEquals(ErrorCode.TOPIC_NOT_EXIST, refused.errorCode());
      assertFalse(refused.isRetriable());
      assertTrue(refused.getMessage().startsWith("TOPIC_NOT_EXIST("), refused.getMessage());
      assertSame(refused, seen.get());
      assertEquals(0, producer.metrics().meter(ProducerMetrics.RETRIES).getCount());
    }
    TalosException gone = assertThrows(TalosException.class,
        () -> viaProxy.producer("prod-gone", ProducerConfig.defaults()));
    assertEquals(ErrorCode.TOPIC_NOT_EXIST, gone.errorCode());
  }

  @Test
  void keyedRecordsLandOnTheDocumentedPartitions() throws Exception {
    admin.createTopic("prod-keys", 8);
    // the vector of docs/clients.md for 8 partitions
    Map<String, Integer> vector = new LinkedHashMap<>();
    vector.put("", 1);
    vector.put("a", 4);
    vector.put("orders", 4);
    vector.put("customer-17", 0);
    vector.put("user:42", 5);
    vector.put("\u00e9t\u00e9", 1);
    vector.put("\u6d88\u606f", 6);
    vector.put("a-little-bit-longer-string", 3);
    try (TalosProducer producer = viaProxy.producer("prod-keys", ProducerConfig.defaults())) {
      for (Map.Entry<String, Integer> c : vector.entrySet()) {
        for (int i = 0; i < 2; i++) {
          RecordMetadata m = producer.send(ProducerRecord.of(c.getKey(), ("k=" + c.getKey()).getBytes(UTF_8)))
              .get(WAIT_S, TimeUnit.SECONDS);
          assertEquals(c.getValue(), m.partition(), "key '" + c.getKey() + "'");
        }
      }
    }
    for (Map.Entry<String, Integer> c : vector.entrySet()) {
      long stored = direct.consumer("prod-keys", c.getValue()).fetch(SimpleConsumer.START_OFFSET, 100).stream()
          .filter(m -> new String(m.payload(), UTF_8).equals("k=" + c.getKey())).count();
      assertEquals(2, stored, "key '" + c.getKey() + "' on partition " + c.getValue());
    }
  }

  @Test
  void roundRobinSpreadsAndKeylessRecordsStickPerBatch() throws Exception {
    admin.createTopic("prod-spread", 4);
    try (TalosProducer producer = viaProxy.producer("prod-spread",
        ProducerConfig.builder().partitioner(ProducerConfig.PARTITIONER_ROUND_ROBIN).build())) {
      List<Integer> partitions = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        partitions.add(producer.send(ProducerRecord.of("same-key", new byte[] {1})).get(WAIT_S, TimeUnit.SECONDS).partition());
      }
      assertEquals(List.of(0, 1, 2, 3, 0, 1, 2, 3), partitions);
    }
    try (TalosProducer producer = viaProxy.producer("prod-spread",
        ProducerConfig.builder().batchMaxRecords(5).lingerMs(60_000).build())) {
      List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
      for (int i = 0; i < 10; i++) futures.add(producer.send(ProducerRecord.of(new byte[] {2})));
      producer.flush();
      Set<Integer> first = new HashSet<>();
      Set<Integer> second = new HashSet<>();
      for (int i = 0; i < 10; i++) (i < 5 ? first : second).add(futures.get(i).get().partition());
      assertEquals(1, first.size(), "one batch fills one partition");
      assertEquals(1, second.size());
      assertNotEquals(first, second, "the next batch sticks to another partition");
    }
  }

  @Test
  void partitionsAddedToTheTopicArePickedUp() throws Exception {
    admin.createTopic("prod-grow", 2);
    ProducerConfig config = ProducerConfig.builder().metadataRefreshIntervalMs(100)
        .partitioner(ProducerConfig.PARTITIONER_ROUND_ROBIN).lingerMs(0).build();
    try (TalosProducer producer = viaProxy.producer("prod-grow", config)) {
      assertEquals(2, producer.partitionCount());
      admin.changeTopicAttribute("prod-grow", TopicAttributeChange.ofPartitionCount(4));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
      while (producer.partitionCount() < 4 && System.nanoTime() < deadline) Thread.sleep(20);
      assertEquals(4, producer.partitionCount());
      assertEquals(4, producer.metrics().getGauges().get(ProducerMetrics.PARTITION_COUNT).getValue());
      Set<Integer> used = new HashSet<>();
      for (int i = 0; i < 8; i++) {
        used.add(producer.send(ProducerRecord.of(new byte[] {1})).get(WAIT_S, TimeUnit.SECONDS).partition());
      }
      assertEquals(Set.of(0, 1, 2, 3), used);
      producer.send(ProducerRecord.toPartition(3, new byte[] {1})).get(WAIT_S, TimeUnit.SECONDS);
    }
    assertEquals(3, admin.getPartitionOffset("prod-grow", 3).endOffset() + 1);
  }

  @Test
  void flushWaitsAndCloseSendsWhatIsBuffered() throws Exception {
    admin.createTopic("prod-close", 1);
    TalosProducer producer = viaProxy.producer("prod-close", ProducerConfig.builder().lingerMs(60_000).build());
    List<CompletableFuture<RecordMetadata>> flushed = new ArrayList<>();
    for (int i = 0; i < 3; i++) flushed.add(producer.send(ProducerRecord.of(new byte[] {1})));
    assertFalse(flushed.get(0).isDone());
    producer.flush();
    assertTrue(flushed.stream().allMatch(f -> f.isDone() && !f.isCompletedExceptionally()));
    List<CompletableFuture<RecordMetadata>> closed = new ArrayList<>();
    for (int i = 0; i < 2; i++) closed.add(producer.send(ProducerRecord.of(new byte[] {2})));
    producer.close(Duration.ofSeconds(WAIT_S));
    assertTrue(closed.stream().allMatch(f -> f.isDone() && !f.isCompletedExceptionally()), "close sends the rest");
    assertThrows(IllegalStateException.class, () -> producer.send(ProducerRecord.of(new byte[] {3})));
    producer.close(); // idempotent
    assertEquals(5, admin.getPartitionOffset("prod-close", 0).endOffset() + 1);

    // close with a timeout that runs out: what was not sent fails, nothing waits forever
    TalosProducer stuck = viaProxy.producer("prod-close",
        ProducerConfig.builder().lingerMs(0).batchMaxRecords(1).build());
    proxy.holdPuts();
    List<CompletableFuture<RecordMetadata>> dropped = new ArrayList<>();
    for (int i = 0; i < 3; i++) dropped.add(stuck.send(ProducerRecord.of(new byte[] {4})));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
    while (proxy.putsHeld() == 0 && System.nanoTime() < deadline) Thread.sleep(5);
    stuck.close(Duration.ofMillis(200));
    assertTrue(dropped.stream().allMatch(CompletableFuture::isDone));
    int closedExceptions = 0;
    for (CompletableFuture<RecordMetadata> f : dropped) {
      ExecutionException e = assertThrows(ExecutionException.class, f::get);
      if (e.getCause() instanceof ProducerClosedException) closedExceptions++;
      else assertInstanceOf(TalosException.class, e.getCause()); // the abandoned request
    }
    assertEquals(2, closedExceptions, "the two batches behind the one in flight were never sent");
    proxy.release();
  }

  private static List<ConsumedMessage> readAll(String topic, int partition, int count) {
    SimpleConsumer consumer = direct.consumer(topic, partition);
    List<ConsumedMessage> got = new ArrayList<>();
    while (got.size() < count) {
      List<ConsumedMessage> page = consumer.fetch(got.size(), 1000);
      if (page.isEmpty()) break;
      got.addAll(page);
    }
    assertEquals(count, got.size(), "messages in partition " + partition + " of " + topic);
    assertTrue(consumer.fetch(got.size()).isEmpty(), "no more than " + count);
    return got;
  }
}
