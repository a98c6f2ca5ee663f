package io.talos.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.client.consumer.ConsumedMessage;
import io.talos.client.producer.SimpleProducer;
import io.talos.thrift.ErrorCode;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class TalosClientTest {

  @Test
  void shouldProduceAndConsumeThroughOneClient() throws Exception {
    try (FakeTalosServer server = new FakeTalosServer();
        TalosClient client = TalosClient.create(server.config().build())) {
      client.admin().createTopic("orders", 2);
      SimpleProducer producer = client.producer("orders", 1);
      producer.put(List.of("hello".getBytes(StandardCharsets.UTF_8)));
      List<ConsumedMessage> got = client.consumer("orders", 1).fetch(0, 10);
      assertEquals("hello", new String(got.get(0).payload(), StandardCharsets.UTF_8));
    }
  }

  @Test
  void shouldRefuseAPartitionTheTopicDoesNotHave() throws Exception {
    try (FakeTalosServer server = new FakeTalosServer();
        TalosClient client = TalosClient.create(server.config().build())) {
      client.admin().createTopic("orders", 2);
      TalosException e = assertThrows(TalosException.class, () -> client.producer("orders", 2));
      assertEquals(ErrorCode.PARTITION_NOT_EXIST, e.errorCode());
      assertTrue(e.getMessage().contains("has 2 partitions"), e.getMessage());
      assertThrows(IllegalArgumentException.class, () -> client.consumer("orders", -1));
      TalosException missing = assertThrows(TalosException.class,
          () -> client.consumer("nope", 0));
      assertEquals(ErrorCode.TOPIC_NOT_EXIST, missing.errorCode());
    }
  }

  @Test
  void shouldFailCallsAfterClose() throws Exception {
    try (FakeTalosServer server = new FakeTalosServer()) {
      TalosClient client = TalosClient.create(server.config().build());
      client.admin().createTopic("orders", 1);
      SimpleProducer producer = client.producer("orders", 0);
      client.close();
      client.close();
      assertThrows(IllegalStateException.class, () -> producer.put(List.of(new byte[] {1})));
    }
  }
}
