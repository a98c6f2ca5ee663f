package io.talos.server;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.client.TalosClient;
import io.talos.client.TalosClientConfig;
import io.talos.client.admin.TalosAdmin;
import io.talos.client.consumer.ConsumedMessage;
import io.talos.client.consumer.SimpleConsumer;
import io.talos.client.producer.ProducerConfig;
import io.talos.client.producer.ProducerRecord;
import io.talos.client.producer.RecordMetadata;
import io.talos.client.producer.TalosProducer;
import io.talos.server.FaultInjectingProxy.Fault;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.InitProducerIdRequest;
import io.talos.thrift.MessageBlock;
import io.talos.thrift.MessageCompressionType;
import io.talos.thrift.MessageService;
import io.talos.thrift.PutMessageRequest;
import io.talos.thrift.PutMessageResponse;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicTalosResourceName;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Idempotent produce over HTTP: the {@link TalosProducer} against a real server, with answers lost
 * on the way back (the server stored the put, the producer sees a 503 and retries), and the wire
 * rules checked with raw requests.
 */
class IdempotentProduceEndToEndTest {
  @TempDir static Path dataDir;

  static TalosServer server;
  static FaultInjectingProxy proxy;
  static TalosClient direct;
  static TalosClient viaProxy;
  static TalosAdmin admin;
  static RawApi raw;

  @BeforeAll
  static void start() throws Exception {
    server = TestServers.start(dataDir);
    proxy = new FaultInjectingProxy(server.endpoint());
    TalosClientConfig config = TalosClientConfig.builder()
        .endpoint(server.endpoint().toString())
        .credentialFile(dataDir.resolve("admin-credential.properties"))
        .build();
    direct = TalosClient.create(config);
    viaProxy = TalosClient.create(config.toBuilder().endpoint(proxy.endpoint()).requestTimeoutMs(5_000).build());
    admin = direct.admin();
    raw = new RawApi(server.endpoint(), server.adminCredential().secretKeyId(), server.adminCredential().secretKey());
  }

  @AfterAll
  static void stop() {
    viaProxy.close();
    direct.close();
    proxy.close();
    server.close();
  }

  /** Sends 40 records in batches of 5 while every other put's answer is lost; returns what the partition holds. */
  private List<String> produceWithLostAnswers(String topic, boolean idempotent) throws Exception {
    admin.createTopic(topic, 1);
    List<Fault> faults = new ArrayList<>();
    for (int i = 0; i < 8; i++) faults.add(i % 2 == 0 ? Fault.LOST_ANSWER : Fault.NONE);
    proxy.failNextPuts(faults);
    ProducerConfig config = ProducerConfig.builder().enableIdempotence(idempotent).batchMaxRecords(5)
        .lingerMs(0).retryBackoffMs(10).build();
    List<RecordMetadata> acked = Collections.synchronizedList(new ArrayList<>());
    try (TalosProducer producer = viaProxy.producer(topic, config)) {
      for (int batch = 0; batch < 8; batch++) {
        List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
          futures.add(producer.send(new ProducerRecord(null, ("m" + (batch * 5 + i)).getBytes(UTF_8), 0, null,
              ProducerRecord.NOW)));
        }
        for (CompletableFuture<RecordMetadata> f : futures) acked.add(f.get(60, TimeUnit.SECONDS));
      }
    } finally {
      proxy.reset();
    }
    List<String> stored = new ArrayList<>();
    SimpleConsumer consumer = direct.consumer(topic, 0);
    long next = 0;
    while (true) {
      List<ConsumedMessage> got = consumer.fetch(next, 1000);
      if (got.isEmpty()) break;
      for (ConsumedMessage m : got) stored.add(new String(m.payload(), UTF_8));
      next = got.get(got.size() - 1).offset() + 1;
    }
    if (idempotent) {
      for (int i = 0; i < acked.size(); i++) {
        assertEquals(i, acked.get(i).offset(), "record " + i + " acknowledged at its stored offset");
      }
    }
    return stored;
  }

  @Test
  void lostAnswersAreRetriedWithoutDuplicates() throws Exception {
    List<String> stored = produceWithLostAnswers("idem-on", true);
    List<String> expected = new ArrayList<>();
    for (int i = 0; i < 40; i++) expected.add("m" + i);
    assertEquals(expected, stored, "every record once, in order");
  }

  @Test
  void withIdempotenceOffTheSameFaultsStoreDuplicates() throws Exception {
    List<String> stored = produceWithLostAnswers("idem-off", false);
    assertTrue(stored.size() > 40, "batches whose answer was lost are stored twice: " + stored);
    assertTrue(stored.size() > new java.util.HashSet<>(stored).size(), "duplicates: " + stored);
  }

  private static PutMessageRequest put(TopicAndPartition tap, String text, Long producerId, Integer seq) {
    byte[] m = text.getBytes(UTF_8);
    MessageBlock block = new MessageBlock(0, 1, MessageCompressionType.NONE, ByteBuffer.wrap(RawApi.noneBlock(m)));
    PutMessageRequest r = new PutMessageRequest(tap, List.of(block), 1, "raw#" + System.nanoTime());
    if (producerId != null) r.setProducerId(producerId);
    if (seq != null) r.setProducerSequence(seq);
    return r;
  }

  private static MessageService.putMessage_result send(PutMessageRequest r) throws Exception {
    return raw.call("message", "putMessage", new MessageService.putMessage_args(r), new MessageService.putMessage_result());
  }

  @Test
  void wireRules() throws Exception {
    TopicTalosResourceName trn = raw.createTopic("idem-wire", 1);
    TopicAndPartition tap = new TopicAndPartition("idem-wire", trn, 0);
    long id = raw.call("message", "initProducerId",
        new MessageService.initProducerId_args(new InitProducerIdRequest().setClientId("one")),
        new MessageService.initProducerId_result()).getSuccess().getProducerId();
    assertTrue(id > 0);
    long other = raw.call("message", "initProducerId",
        new MessageService.initProducerId_args(new InitProducerIdRequest().setClientId("two")),
        new MessageService.initProducerId_result()).getSuccess().getProducerId();
    assertTrue(other != id, "each producer its own id");

    PutMessageResponse first = send(put(tap, "a", id, 0)).getSuccess();
    assertEquals(0, first.getStartMessageOffset());
    assertFalse(first.isSetDuplicate());
    send(put(tap, "b", null, null)); // a plain put in between (offset 1)
    PutMessageResponse again = send(put(tap, "a", id, 0)).getSuccess();
    assertEquals(0, again.getStartMessageOffset());
    assertTrue(again.isDuplicate());
    assertEquals(2, send(put(tap, "c", id, 1)).getSuccess().getStartMessageOffset());

    MessageService.putMessage_result gap = send(put(tap, "e", id, 3));
    assertEquals(ErrorCode.OUT_OF_ORDER_SEQUENCE, gap.getE().getErrorCode());
    assertTrue(gap.getE().getErrMsg().contains("expected 2"), gap.getE().getErrMsg());

    MessageService.putMessage_result half = send(put(tap, "x", id, null));
    assertEquals(ErrorCode.INVALID_REQUEST_PARAMS, half.getE().getErrorCode());
    assertTrue(half.getE().getErrMsg().contains("producerSequence"), half.getE().getErrMsg());
    MessageService.putMessage_result badId = send(put(tap, "x", -5L, 0));
    assertEquals(ErrorCode.INVALID_REQUEST_PARAMS, badId.getE().getErrorCode());
    assertEquals(List.of("a", "b", "c"), new ArrayList<>(raw.readAll(tap, 0).values()));
  }
}
