package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.thrift.MessageBlock;
import io.talos.thrift.MessageCompressionType;
import io.talos.thrift.MessageService;
import io.talos.thrift.PutMessageRequest;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicService;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A signed request captured on the wire cannot be executed twice, a client clock far ahead is
 * refused, and the unsigned {@code type} query parameter cannot disagree with the signed body.
 * Over real HTTP against a running server.
 */
class ReplayAndSkewTest {
  @TempDir
  static Path dataDir;

  static TalosServer server;
  static RawApi api;
  static TopicAndPartition tap;

  @BeforeAll
  static void start() throws Exception {
    server = TestServers.start(dataDir);
    api = new RawApi(server.endpoint(), server.adminCredential().secretKeyId(), server.adminCredential().secretKey());
    tap = new TopicAndPartition("replayed", api.createTopic("replayed", 1), 0);
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private static byte[] putBody(String text, String sequenceId) throws Exception {
    byte[] payload = RawApi.noneBlock(text.getBytes(StandardCharsets.UTF_8));
    MessageBlock block = new MessageBlock(0, 1, MessageCompressionType.NONE, ByteBuffer.wrap(payload));
    return RawApi.call("putMessage", new MessageService.putMessage_args(
        new PutMessageRequest(tap, List.of(block), 1, sequenceId)));
  }

  private static HttpResponse<byte[]> sendPut(byte[] body, long epochSecs, String type) throws Exception {
    return api.send("POST", "/v1/api/message", type, body, epochSecs, server.adminCredential().secretKey(), null,
        "talos-java-client/test");
  }

  @Test
  void aReplayedPutIsRefusedAndStoredOnce() throws Exception {
    long before = api.readAll(tap, 0).size();
    byte[] body = putBody("once", "replay#1");
    long now = Instant.now().getEpochSecond();
    HttpResponse<byte[]> first = sendPut(body, now, "putMessage");
    assertEquals(200, first.statusCode(), RawApi.text(first));
    MessageService.putMessage_result r = RawApi.reply(first.body(), new MessageService.putMessage_result());
    assertTrue(r.isSetSuccess(), String.valueOf(r));
    for (int i = 0; i < 20; i++) {
      HttpResponse<byte[]> again = sendPut(body, now, "putMessage");
      assertEquals(409, again.statusCode(), RawApi.text(again));
      assertTrue(RawApi.text(again).contains("replayed request"), RawApi.text(again));
    }
    assertEquals(before + 1, api.readAll(tap, 0).size());
    // The same body signed again (a new timestamp: a new request) is served: retries work.
    HttpResponse<byte[]> resigned = sendPut(body, now + 1, "putMessage");
    assertEquals(200, resigned.statusCode(), RawApi.text(resigned));
    assertEquals(before + 2, api.readAll(tap, 0).size());
  }

  @Test
  void identicalReadOnlyCallsWithinOneSecondAreBothServed() throws Exception {
    byte[] body = RawApi.call("listTopics", new TopicService.listTopics_args());
    long now = Instant.now().getEpochSecond();
    for (int i = 0; i < 3; i++) {
      HttpResponse<byte[]> r = api.send("POST", "/v1/api/topic", "listTopics", body, now,
          server.adminCredential().secretKey(), null, null);
      assertEquals(200, r.statusCode(), RawApi.text(r));
    }
  }

  @Test
  void aTimestampFarAheadIsRefusedAndASmallLeadAccepted() throws Exception {
    long now = Instant.now().getEpochSecond();
    HttpResponse<byte[]> ahead = sendPut(putBody("future", "future#1"), now + 870, "putMessage");
    assertEquals(412, ahead.statusCode(), RawApi.text(ahead));
    assertTrue(RawApi.text(ahead).contains("auth.clock.skew.future.max.ms"), RawApi.text(ahead));
    long serverTime = Long.parseLong(ahead.headers().firstValue("X-Xiaomi-Timestamp").orElseThrow());
    assertTrue(Math.abs(serverTime - now) < 60, "server time " + serverTime);
    HttpResponse<byte[]> slightlyAhead = sendPut(putBody("near future", "future#2"), now + 30, "putMessage");
    assertEquals(200, slightlyAhead.statusCode(), RawApi.text(slightlyAhead));
    // The past window is unchanged: 800 s behind is still a valid (slow-clock) client.
    HttpResponse<byte[]> behind = sendPut(putBody("past", "past#1"), now - 800, "putMessage");
    assertEquals(200, behind.statusCode(), RawApi.text(behind));
  }

  @Test
  void theTypeParameterMustNameTheSignedMethod() throws Exception {
    long before = api.readAll(tap, 0).size();
    long now = Instant.now().getEpochSecond();
    HttpResponse<byte[]> mismatch = sendPut(putBody("mismatch", "type#1"), now, "getMessage");
    assertEquals(400, mismatch.statusCode(), RawApi.text(mismatch));
    assertTrue(RawApi.text(mismatch).contains("does not match the Thrift method 'putMessage'"), RawApi.text(mismatch));
    HttpResponse<byte[]> missing = sendPut(putBody("missing", "type#2"), now, null);
    assertEquals(400, missing.statusCode(), RawApi.text(missing));
    assertTrue(RawApi.text(missing).contains("type="), RawApi.text(missing));
    // A read-only type cannot smuggle a put past the replay guard either.
    byte[] body = putBody("smuggled", "type#3");
    for (int i = 0; i < 3; i++) {
      HttpResponse<byte[]> smuggled = sendPut(body, now, "listTopics");
      assertEquals(400, smuggled.statusCode(), RawApi.text(smuggled));
    }
    assertEquals(before, api.readAll(tap, 0).size());
  }
}
