package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.thrift.GetMessageRequest;
import io.talos.thrift.MessageBlock;
import io.talos.thrift.MessageService;
import io.talos.thrift.TopicAndPartition;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * message.get.inflight.max.bytes against a real server over HTTP: a get that asks for more than
 * the budget holds is answered with what fits (whole blocks, at least one), nothing is lost
 * across the smaller answers, and the budget is given back once each answer is sent.
 */
class LargeFetchesEndToEndTest {
  private static final int BUDGET = 64 * 1024;
  private static final int BLOCKS = 40;
  private static final int MESSAGE_BYTES = 4096;

  @TempDir
  static Path dataDir;

  static TalosServer server;
  static RawApi api;
  static TopicAndPartition tap;

  @BeforeAll
  static void start() throws Exception {
    server = TestServers.start(dataDir, ServerConfig.GET_INFLIGHT_MAX_BYTES, String.valueOf(BUDGET),
        "quota.partition.get.bytes.per.sec", "0", "quota.partition.put.bytes.per.sec", "0");
    api = new RawApi(server.endpoint(), server.adminCredential().secretKeyId(), server.adminCredential().secretKey());
    tap = new TopicAndPartition("large", api.createTopic("large", 1), 0);
    for (int i = 0; i < BLOCKS; i++) api.put(tap, List.of(String.valueOf((char) ('a' + i % 26)).repeat(MESSAGE_BYTES)));
  }

  @AfterAll
  static void stop() {
    if (server != null) server.close();
  }

  @Test
  void shouldAnswerAGetLargerThanTheBudgetWithWhatFitsAndLoseNothing() throws Exception {
    // 40 blocks of 4 KiB (160 KiB) are within message.get.max.bytes (8 MiB): without the budget
    // one get would carry them all
    MessageService.getMessage_result r = api.call("message", "getMessage", new MessageService.getMessage_args(
        new GetMessageRequest(tap, 0, "big#1").setMaxGetMessageBytes(8 * 1024 * 1024)),
        new MessageService.getMessage_result());
    assertTrue(r.isSetSuccess(), () -> "answered " + r);
    long bytes = 0;
    for (MessageBlock b : r.getSuccess().getMessageBlocks()) bytes += b.getMessageBlock().length;
    int messages = r.getSuccess().getMessageNumber();
    assertTrue(messages >= 1 && messages < BLOCKS, "one get carried " + messages + " of " + BLOCKS + " messages");
    assertTrue(bytes <= BUDGET + MESSAGE_BYTES + 64, "one get carried " + bytes + " bytes, budget " + BUDGET);

    SortedMap<Long, String> all = api.readAll(tap, 0);
    assertEquals(BLOCKS, all.size());
    List<Long> offsets = new ArrayList<>(all.keySet());
    for (int i = 0; i < BLOCKS; i++) {
      assertEquals(i, offsets.get(i));
      assertEquals(String.valueOf((char) ('a' + i % 26)).repeat(MESSAGE_BYTES), all.get((long) i));
    }
  }

  @Test
  void shouldGiveTheBudgetBackOnceTheAnswersAreSent() throws Exception {
    api.readAll(tap, 0);
    // released by the write's completion, which can run just after the client has the bytes
    long deadline = System.nanoTime() + 5_000_000_000L;
    long held;
    do {
      held = ((Number) server.metrics().getGauges().get("message.get.inflight.bytes").getValue()).longValue();
      Thread.onSpinWait();
    } while (held != 0 && System.nanoTime() < deadline);
    assertEquals(0, held);
  }
}
