package io.talos.client.consumer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.client.FakeTalosServer;
import io.talos.client.TalosClient;
import io.talos.client.TalosException;
import io.talos.client.codec.CompressionType;
import io.talos.client.producer.SimpleProducer;
import io.talos.thrift.ErrorCode;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class SimpleConsumerTest {
  private FakeTalosServer server;
  private TalosClient client;
  private SimpleConsumer consumer;

  @BeforeEach
  void start() throws Exception {
    server = new FakeTalosServer();
    client = TalosClient.create(server.config().compressionType(CompressionType.SNAPPY).build());
    client.admin().createTopic("orders", 1);
    SimpleProducer producer = client.producer("orders", 0);
    for (int put = 0; put < 3; put++) { // blocks [0,10) [10,20) [20,30)
      List<byte[]> batch = new ArrayList<>();
      for (int i = 0; i < 10; i++) batch.add(new byte[] {(byte) (put * 10 + i)});
      producer.put(batch);
    }
    consumer = client.consumer("orders", 0);
  }

  @AfterEach
  void stop() {
    client.close();
    server.close();
  }

  @Test
  void shouldTrimMessagesBeforeTheRequestedOffset() {
    List<ConsumedMessage> got = consumer.fetch(13, 100);
    assertEquals(LongStream.range(13, 30).boxed().toList(), offsets(got));
    assertArrayEquals(new byte[] {13}, got.get(0).payload());
    assertTrue(got.get(0).appendTimestampMs() > 0);
    assertTrue(got.get(0).createTimestampMs() > 0);
  }

  @Test
  void shouldReturnAtMostMaxMessages() {
    assertEquals(List.of(5L, 6L, 7L), offsets(consumer.fetch(5, 3)));
    assertEquals(List.of(9L, 10L, 11L, 12L), offsets(consumer.fetch(9, 4)));
  }

  @Test
  void shouldReadFromTheStart() {
    assertEquals(LongStream.range(0, 30).boxed().toList(),
        offsets(consumer.fetch(SimpleConsumer.START_OFFSET)));
  }

  @Test
  void shouldReturnNothingWhenCaughtUp() {
    assertTrue(consumer.fetch(30, 10).isEmpty());
  }

  @Test
  void shouldReportOffsetsOutOfRange() {
    TalosException e = assertThrows(TalosException.class, () -> consumer.fetch(31, 10));
    assertEquals(ErrorCode.MESSAGE_OFFSET_OUT_OF_RANGE, e.errorCode());
  }

  @Test
  void shouldRejectInvalidArguments() {
    assertThrows(IllegalArgumentException.class, () -> consumer.fetch(-3, 10));
    assertThrows(IllegalArgumentException.class, () -> consumer.fetch(0, 0));
  }

  private static List<Long> offsets(List<ConsumedMessage> messages) {
    return messages.stream().map(ConsumedMessage::offset).toList();
  }
}
