package io.talos.client.producer;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.client.FakeTalosServer;
import io.talos.client.TalosClient;
import io.talos.client.TalosException;
import io.talos.client.codec.CompressionType;
import io.talos.client.codec.MessageBlockDecoder;
import io.talos.client.consumer.ConsumedMessage;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.MessageBlock;
import io.talos.thrift.PutMessageRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.apache.thrift.protocol.TCompactProtocol;
import org.apache.thrift.transport.TMemoryInputTransport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class SimpleProducerTest {
  private FakeTalosServer server;
  private TalosClient client;

  @BeforeEach
  void start() throws Exception {
    server = new FakeTalosServer();
    client = TalosClient.create(server.config().build());
    client.admin().createTopic("orders", 2);
  }

  @AfterEach
  void stop() {
    client.close();
    server.close();
  }

  @Test
  void shouldPutAndReportTheAssignedOffsets() {
    SimpleProducer producer = client.producer("orders", 1);
    PutResult first = producer.put(List.of("a".getBytes(UTF_8), "b".getBytes(UTF_8)));
    PutResult second = producer.put(List.of("c".getBytes(UTF_8)));
    assertEquals(new PutResult(2, 1, OptionalLong.of(0)), first);
    assertEquals(OptionalLong.of(1), first.lastOffset());
    assertEquals(OptionalLong.of(2), second.firstOffset());
  }

  @Test
  void shouldSendEachBodyExactlyWhenOneThreadReusesItsRequestBuffer() throws Exception {
    // A thread's request buffer is reused from call to call: a large put, a small one (shorter
    // than what the buffer still holds), a large one again. The server checks each body against
    // its signed tag, and every message must come back as it was sent.
    SimpleProducer producer = client.producer("orders", 0);
    java.util.Random random = new java.util.Random(11);
    List<byte[]> sent = new ArrayList<>();
    for (int size : new int[] {200_000, 3, 150_000, 1, 200_000}) {
      byte[] payload = new byte[size];
      random.nextBytes(payload);
      producer.put(List.of(payload));
      sent.add(payload);
    }
    List<ConsumedMessage> back = MessageBlockDecoder.decode(server.storedBlocks("orders", 0));
    assertEquals(sent.size(), back.size());
    for (int i = 0; i < sent.size(); i++) assertArrayEquals(sent.get(i), back.get(i).payload(), "message " + i);
    assertEquals(5, putRequests().size());
  }

  @Test
  void shouldTreatAMissingOffsetAsUnknown() {
    server.reportStartOffset(false);
    PutResult r = client.producer("orders", 0).put(List.of(new byte[] {1}));
    assertEquals(OptionalLong.empty(), r.firstOffset());
    assertEquals(OptionalLong.empty(), r.lastOffset());
    assertEquals(1, r.messageCount());
  }

  @Test
  void shouldSendSequenceIdsAndADeadline() throws Exception {
    SimpleProducer producer = client.producer("orders", 0);
    producer.put(List.of(new byte[] {1}));
    producer.put(List.of(new byte[] {2}));
    List<PutMessageRequest> puts = putRequests();
    assertEquals(producer.clientId() + "#1", puts.get(0).getSequenceId());
    assertEquals(producer.clientId() + "#2", puts.get(1).getSequenceId());
    assertTrue(producer.clientId().matches("^(?!_)(?!-)(?!.*?_$)[a-zA-Z0-9_-]+$"));
    long deadline = puts.get(0).getTimeoutTimestamp();
    assertTrue(Math.abs(deadline - (System.currentTimeMillis() + 10_000)) < 5_000, "" + deadline);
    assertEquals("orders", puts.get(0).getTopicAndPartition().getTopicName());
    assertEquals(producer.topicResourceName(),
        puts.get(0).getTopicAndPartition().getTopicTalosResourceName().getTopicTalosResourceName());
  }

  @ParameterizedTest
  @EnumSource(value = CompressionType.class, names = {"NONE", "GZIP"})
  void shouldSplitIntoBlocksOfAboutMaxBlockBytes(CompressionType compression) throws Exception {
    try (TalosClient small = TalosClient.create(server.config().maxBlockBytes(1000)
        .compressionType(compression).build())) {
      List<ProducerMessage> messages = new ArrayList<>();
      for (int i = 0; i < 10; i++) messages.add(ProducerMessage.of(new byte[300], "s" + i));
      messages.add(ProducerMessage.of(new byte[5000])); // larger than a block: a block of its own
      messages.add(new ProducerMessage(new byte[] {42}, null, 1234));

      PutResult r = small.producer("orders", 0).putMessages(messages);

      List<MessageBlock> blocks = server.storedBlocks("orders", 0);
      assertEquals(r.blockCount(), blocks.size());
      assertEquals(List.of(3, 3, 3, 1, 1, 1),
          blocks.stream().map(MessageBlock::getMessageNumber).toList());
      assertTrue(blocks.stream().allMatch(b -> b.getCompressionType() == compression.wireType()));
      List<ConsumedMessage> back = MessageBlockDecoder.decode(blocks);
      assertEquals(12, back.size());
      assertEquals("s9", back.get(9).sequenceNumber());
      assertEquals(1234, back.get(11).createTimestampMs());
      assertArrayEquals(new byte[] {42}, back.get(11).payload());
      assertEquals(11, back.get(11).offset());
    }
  }

  @Test
  void shouldValidateSizesBeforeSending() {
    try (TalosClient limited = TalosClient.create(server.config().maxMessageBytes(10).build())) {
      SimpleProducer producer = limited.producer("orders", 0);
      int before = server.requests().size();
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> producer.put(List.of(new byte[3], new byte[11])));
      assertTrue(e.getMessage().contains("message 1 has 11 bytes; allowed: 1 to 10"),
          e.getMessage());
      assertThrows(IllegalArgumentException.class, () -> producer.put(List.of(new byte[0])));
      assertThrows(IllegalArgumentException.class,
          () -> producer.putMessages(List.of(ProducerMessage.of(new byte[1], ""))));
      assertEquals(new PutResult(0, 0, OptionalLong.empty()), producer.put(List.of()));
      assertEquals(before, server.requests().size());
    }
  }

  @Test
  void shouldReportTheServersRefusal() throws Exception {
    SimpleProducer producer = client.producer("orders", 0);
    client.admin().deleteTopic("orders");
    TalosException e = assertThrows(TalosException.class,
        () -> producer.put(List.of(new byte[] {1})));
    assertEquals(ErrorCode.TOPIC_NOT_EXIST, e.errorCode());
  }

  private List<PutMessageRequest> putRequests() throws Exception {
    List<PutMessageRequest> out = new ArrayList<>();
    for (FakeTalosServer.Received r : server.requests()) {
      if (!r.query().endsWith("type=putMessage")) continue;
      TCompactProtocol p = new TCompactProtocol(new TMemoryInputTransport(r.body()));
      p.readMessageBegin();
      io.talos.thrift.MessageService.putMessage_args args =
          new io.talos.thrift.MessageService.putMessage_args();
      args.read(p);
      out.add(args.getRequest());
    }
    return out;
  }
}
