package io.talos.client.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.client.FakeTalosServer;
import io.talos.client.TalosClient;
import io.talos.client.TalosException;
import io.talos.thrift.ErrorCode;
import java.util.List;
import java.util.OptionalInt;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class TalosAdminTest {
  private FakeTalosServer server;
  private TalosClient client;
  private TalosAdmin admin;

  @BeforeEach
  void start() throws Exception {
    server = new FakeTalosServer();
    client = TalosClient.create(server.config().build());
    admin = client.admin();
  }

  @AfterEach
  void stop() {
    client.close();
    server.close();
  }

  @Test
  void shouldCreateDescribeAndListTopics() {
    TopicListing created = admin.createTopic("orders", 3, OptionalInt.of(3600));
    assertEquals("orders", created.name());
    assertTrue(created.resourceName().matches("owner#orders#.+"), created.resourceName());

    TopicDescription d = admin.describeTopic("orders");
    assertEquals(created, d.listing());
    assertEquals(3, d.partitionCount());
    assertEquals(OptionalInt.of(3600), d.retentionSecs());
    assertEquals(TopicStatus.ACTIVE, d.status());
    assertEquals(List.of(0, 1, 2), d.partitions().stream().map(PartitionDescription::partitionId)
        .toList());
    assertEquals(-1, d.partitions().get(0).endOffset());

    admin.createTopic("audit", 1);
    assertEquals(OptionalInt.empty(), admin.describeTopic("audit").retentionSecs());
    assertEquals(List.of("orders", "audit"),
        admin.listTopics().stream().map(TopicListing::name).toList());
  }

  @Test
  void shouldReportAnExistingTopic() {
    admin.createTopic("orders", 1);
    TalosException e = assertThrows(TalosException.class, () -> admin.createTopic("orders", 1));
    assertEquals(ErrorCode.TOPIC_EXIST, e.errorCode());
  }

  @Test
  void shouldDeleteByNameThroughTheResourceName() {
    TopicListing t = admin.createTopic("orders", 1);
    admin.deleteTopic("orders");
    String sent = server.requests().get(server.requests().size() - 1).query();
    assertTrue(sent.endsWith("type=deleteTopic"), sent);
    assertTrue(admin.listTopics().isEmpty());
    TalosException e = assertThrows(TalosException.class, () -> admin.deleteTopic("orders"));
    assertEquals(ErrorCode.TOPIC_NOT_EXIST, e.errorCode());
    assertFalse(t.resourceName().isEmpty());
  }

  @Test
  void shouldChangeOnlyTheGivenAttributes() {
    admin.createTopic("orders", 2, OptionalInt.of(600));
    admin.changeTopicAttribute("orders", TopicAttributeChange.ofPartitionCount(4));
    TopicDescription d = admin.describeTopic("orders");
    assertEquals(4, d.partitionCount());
    assertEquals(OptionalInt.of(600), d.retentionSecs());

    admin.changeTopicAttribute("orders", TopicAttributeChange.ofRetentionSecs(60));
    assertEquals(OptionalInt.of(60), admin.describeTopic("orders").retentionSecs());
    assertEquals(4, admin.describeTopic("orders").partitionCount());

    TalosException e = assertThrows(TalosException.class, () -> admin.changeTopicAttribute(
        "orders", TopicAttributeChange.ofPartitionCount(1)));
    assertEquals(ErrorCode.INVALID_TOPIC_PARAMS, e.errorCode());
  }

  @Test
  void shouldReportOffsets() {
    admin.createTopic("orders", 2);
    client.producer("orders", 1).put(List.of(new byte[] {1}, new byte[] {2}, new byte[] {3}));

    List<PartitionOffsets> offsets = admin.getTopicOffsets("orders");
    assertEquals(2, offsets.size());
    assertEquals(-1, offsets.get(0).endOffset());
    assertEquals(0, offsets.get(0).nextOffset());
    assertEquals(2, offsets.get(1).endOffset());
    assertFalse(offsets.get(1).hasError());

    PartitionOffsets one = admin.getPartitionOffset("orders", 1);
    assertEquals(0, one.startOffset());
    assertEquals(3, one.nextOffset());
  }

  @Test
  void shouldRejectInvalidArgumentsBeforeSending() {
    assertThrows(IllegalArgumentException.class, () -> admin.createTopic("_bad", 1));
    assertThrows(IllegalArgumentException.class, () -> admin.createTopic("x".repeat(81), 1));
    assertThrows(IllegalArgumentException.class, () -> admin.createTopic("ok", 0));
    assertThrows(IllegalArgumentException.class,
        () -> admin.createTopic("ok", 1, OptionalInt.of(0)));
    assertThrows(IllegalArgumentException.class, () -> admin.describeTopic(""));
    assertThrows(IllegalArgumentException.class, () -> admin.getPartitionOffset("ok", -1));
    assertThrows(IllegalArgumentException.class, () -> TopicAttributeChange.ofPartitionCount(0));
    assertTrue(server.requests().isEmpty());
  }
}
