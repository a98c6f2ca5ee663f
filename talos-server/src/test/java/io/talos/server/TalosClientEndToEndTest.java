package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.client.TalosClient;
import io.talos.client.TalosClientConfig;
import io.talos.client.TalosException;
import io.talos.client.admin.PartitionOffsets;
import io.talos.client.admin.TalosAdmin;
import io.talos.client.admin.TopicAttributeChange;
import io.talos.client.admin.TopicDescription;
import io.talos.client.codec.CompressionType;
import io.talos.client.consumer.ConsumedMessage;
import io.talos.client.consumer.SimpleConsumer;
import io.talos.client.producer.PutResult;
import io.talos.client.producer.SimpleProducer;
import io.talos.thrift.ErrorCode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Our SDK (talos-client) against a real server over HTTP. */
class TalosClientEndToEndTest {
  @TempDir
  static Path dataDir;

  static TalosServer server;
  static TalosClient client;
  static TalosAdmin admin;

  @BeforeAll
  static void start() throws Exception {
    server = TestServers.start(dataDir);
    client = TalosClient.create(TalosClientConfig.builder()
        .endpoint(server.endpoint().toString())
        .credentialFile(dataDir.resolve("admin-credential.properties"))
        .build());
    admin = client.admin();
  }

  @AfterAll
  static void stop() {
    client.close();
    server.close();
  }

  @Test
  void adminManagesTopics() {
    admin.createTopic("ours-admin", 2, OptionalInt.of(7200));
    TopicDescription d = admin.describeTopic("ours-admin");
    assertEquals(2, d.partitionCount());
    assertEquals(OptionalInt.of(7200), d.retentionSecs());
    assertEquals("admin", d.ownerId());
    assertTrue(admin.listTopics().stream().anyMatch(t -> t.name().equals("ours-admin")));

    admin.changeTopicAttribute("ours-admin", TopicAttributeChange.ofPartitionCount(5));
    assertEquals(5, admin.describeTopic("ours-admin").partitionCount());
    TalosException shrink = assertThrows(TalosException.class,
        () -> admin.changeTopicAttribute("ours-admin", TopicAttributeChange.ofPartitionCount(3)));
    assertEquals(ErrorCode.INVALID_TOPIC_PARAMS, shrink.errorCode());
    assertTrue(shrink.getMessage().contains("may only grow"), shrink.getMessage());

    TalosException exists = assertThrows(TalosException.class, () -> admin.createTopic("ours-admin", 1));
    assertEquals(ErrorCode.TOPIC_EXIST, exists.errorCode());

    admin.deleteTopic("ours-admin");
    TalosException gone = assertThrows(TalosException.class, () -> admin.describeTopic("ours-admin"));
    assertEquals(ErrorCode.TOPIC_NOT_EXIST, gone.errorCode());
    assertFalse(gone.isRetriable());
  }

  @Test
  void producesAndConsumesWithEveryCompressionAndReadsOffsets() {
    admin.createTopic("ours-data", 3);
    Random random = new Random(42);
    List<byte[]> sent = new ArrayList<>();
    for (CompressionType compression : CompressionType.values()) {
      try (TalosClient c = TalosClient.create(client.config().toBuilder().compressionType(compression).build())) {
        SimpleProducer producer = c.producer("ours-data", 2);
        List<byte[]> batch = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
          byte[] payload = new byte[1 + random.nextInt(3000)];
          random.nextBytes(payload);
          batch.add(payload);
        }
        PutResult result = producer.put(batch);
        assertEquals(sent.size(), result.firstOffset().orElseThrow());
        sent.addAll(batch);
      }
    }
    SimpleConsumer consumer = client.consumer("ours-data", 2);
    List<ConsumedMessage> got = new ArrayList<>();
    while (got.size() < sent.size()) {
      List<ConsumedMessage> page = consumer.fetch(got.size(), 77);
      assertFalse(page.isEmpty());
      got.addAll(page);
    }
    for (int i = 0; i < sent.size(); i++) {
      assertEquals(i, got.get(i).offset());
      assertArrayEquals(sent.get(i), got.get(i).payload(), "message " + i);
    }
    assertTrue(consumer.fetch(sent.size()).isEmpty(), "caught up");
    // LATEST answers the block that holds the last message (whole, as the SDK expects).
    List<ConsumedMessage> latest = consumer.fetch(SimpleConsumer.LATEST_OFFSET);
    assertEquals(sent.size() - 1, latest.get(latest.size() - 1).offset());
    assertEquals(0, consumer.fetch(SimpleConsumer.START_OFFSET, 1).get(0).offset());

    PartitionOffsets p2 = admin.getPartitionOffset("ours-data", 2);
    assertEquals(0, p2.startOffset());
    assertEquals(sent.size() - 1, p2.endOffset());
    List<PartitionOffsets> all = admin.getTopicOffsets("ours-data");
    assertEquals(3, all.size());
    assertEquals(-1, all.get(0).endOffset());

    TalosException outOfRange = assertThrows(TalosException.class, () -> consumer.fetch(sent.size() + 10));
    assertEquals(ErrorCode.MESSAGE_OFFSET_OUT_OF_RANGE, outOfRange.errorCode());
  }

  /** Replies larger than one write slice of the front-end arrive whole and in order. */
  @Test
  void largeRepliesArriveWhole() {
    admin.createTopic("ours-large", 1);
    SimpleProducer producer = client.producer("ours-large", 0);
    Random random = new Random(7);
    List<byte[]> sent = new ArrayList<>();
    for (int batch = 0; batch < 6; batch++) {
      List<byte[]> payloads = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        byte[] p = new byte[100 * 1024 + random.nextInt(1000)];
        random.nextBytes(p);
        payloads.add(p);
      }
      producer.put(payloads);
      sent.addAll(payloads);
    }
    SimpleConsumer consumer = client.consumer("ours-large", 0);
    List<ConsumedMessage> got = new ArrayList<>();
    int largestPage = 0;
    while (got.size() < sent.size()) {
      List<ConsumedMessage> page = consumer.fetch(got.size(), 1000);
      assertFalse(page.isEmpty());
      largestPage = Math.max(largestPage, page.stream().mapToInt(m -> m.payload().length).sum());
      got.addAll(page);
    }
    assertTrue(largestPage > 4 * 128 * 1024, "a reply of several slices: " + largestPage + " bytes");
    for (int i = 0; i < sent.size(); i++) {
      assertEquals(i, got.get(i).offset());
      assertArrayEquals(sent.get(i), got.get(i).payload(), "message " + i);
    }
  }

  @Test
  void clearErrorsForBadInput() {
    admin.createTopic("ours-bad", 1);
    TalosException partition = assertThrows(TalosException.class, () -> client.producer("ours-bad", 4));
    assertEquals(ErrorCode.PARTITION_NOT_EXIST, partition.errorCode());
    SimpleProducer producer = client.producer("ours-bad", 0);
    assertThrows(IllegalArgumentException.class, () -> producer.put(List.of(new byte[0])));
    assertThrows(IllegalArgumentException.class, () -> producer.put(List.of(new byte[10 * 1024 * 1024 + 1])));
    assertEquals(0, admin.getPartitionOffset("ours-bad", 0).endOffset() + 1, "nothing was stored");

    TalosClientConfig wrongSecret = client.config().toBuilder()
        .credentials(server.adminCredential().secretKeyId(), "not-the-secret").build();
    try (TalosClient bad = TalosClient.create(wrongSecret)) {
      TalosException e = assertThrows(TalosException.class, () -> bad.admin().listTopics());
      assertEquals(401, e.httpStatus());
      assertTrue(e.getMessage().contains("invalid signature"), e.getMessage());
    }
    // The client refuses a bad name before sending (the server's check is in BadInputTest).
    IllegalArgumentException name = assertThrows(IllegalArgumentException.class, () -> admin.createTopic("bad name!", 1));
    assertTrue(name.getMessage().contains("topic name"), name.getMessage());
    // After all of that the partition is intact and writable from offset 0.
    assertEquals(0, producer.put(List.of("hello".getBytes(StandardCharsets.UTF_8))).firstOffset().orElseThrow());
    assertEquals("hello", new String(client.consumer("ours-bad", 0).fetch(0).get(0).payload(), StandardCharsets.UTF_8));
  }
}
