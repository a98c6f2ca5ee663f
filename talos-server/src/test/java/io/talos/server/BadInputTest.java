package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.thrift.CreateTopicRequest;
import io.talos.thrift.AddSubResourceNameRequest;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.GetMessageRequest;
import io.talos.thrift.GetPartitionOffsetRequest;
import io.talos.thrift.MessageBlock;
import io.talos.thrift.MessageCompressionType;
import io.talos.thrift.MessageService;
import io.talos.thrift.OffsetInfo;
import io.talos.thrift.PutMessageRequest;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicAttribute;
import io.talos.thrift.TopicService;
import io.talos.thrift.TopicTalosResourceName;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every kind of bad input gets the right HTTP status or wire error with a message saying what is
 * wrong, and nothing stored is lost or changed by a refused request.
 */
class BadInputTest {
  @TempDir
  static Path dataDir;

  static TalosServer server;
  static RawApi api;
  static TopicTalosResourceName topic;

  @BeforeAll
  static void start() throws Exception {
    // Input validation, not rate limits: a 10 MiB put would otherwise leave partition 0 in quota debt.
    server = TestServers.start(dataDir, ServerConfig.REQUEST_MAX_BYTES, String.valueOf(12 * 1024 * 1024),
        ServerConfig.QUOTA_PARTITION_PUT_BYTES_PER_SEC, "0", ServerConfig.QUOTA_PARTITION_GET_BYTES_PER_SEC, "0");
    api = new RawApi(server.endpoint(), server.adminCredential().secretKeyId(), server.adminCredential().secretKey());
    topic = createTopic("bad-input", 2).getTopicInfo().getTopicTalosResourceName();
    putOk(0, "first", "second");
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  static io.talos.thrift.CreateTopicResponse createTopic(String name, int partitions) throws Exception {
    TopicService.createTopic_result r = topicCall("createTopic", new TopicService.createTopic_args(
        new CreateTopicRequest(name, new TopicAttribute().setPartitionNumber(partitions))), new TopicService.createTopic_result());
    if (r.isSetE()) throw r.getE();
    return r.getSuccess();
  }

  static <R extends org.apache.thrift.TBase<?, ?>> R topicCall(String method, org.apache.thrift.TBase<?, ?> args, R result) throws Exception {
    HttpResponse<byte[]> response = api.post("/v1/api/topic", method, RawApi.call(method, args));
    assertEquals(200, response.statusCode(), RawApi.text(response));
    return RawApi.reply(response.body(), result);
  }

  static MessageService.putMessage_result put(PutMessageRequest request) throws Exception {
    HttpResponse<byte[]> response = api.post("/v1/api/message", "putMessage",
        RawApi.call("putMessage", new MessageService.putMessage_args(request)));
    assertEquals(200, response.statusCode(), RawApi.text(response));
    return RawApi.reply(response.body(), new MessageService.putMessage_result());
  }

  static PutMessageRequest putRequest(int partition, MessageCompressionType type, int count, byte[] payload) {
    MessageBlock block = new MessageBlock(0, count, type, ByteBuffer.wrap(payload));
    return new PutMessageRequest(new TopicAndPartition("bad-input", topic, partition), List.of(block), count, "test#1");
  }

  static void putOk(int partition, String... messages) throws Exception {
    byte[][] bytes = Arrays.stream(messages).map(m -> m.getBytes(StandardCharsets.UTF_8)).toArray(byte[][]::new);
    MessageService.putMessage_result r = put(putRequest(partition, MessageCompressionType.NONE, messages.length, RawApi.noneBlock(bytes)));
    assertTrue(!r.isSetE(), () -> "put failed: " + r.getE());
  }

  static OffsetInfo offsets(int partition) throws Exception {
    HttpResponse<byte[]> response = api.post("/v1/api/message", "getPartitionOffset", RawApi.call("getPartitionOffset",
        new MessageService.getPartitionOffset_args(new GetPartitionOffsetRequest(new TopicAndPartition("bad-input", topic, partition)))));
    return RawApi.reply(response.body(), new MessageService.getPartitionOffset_result()).getSuccess().getOffsetInfo();
  }

  static GalaxyTalosException putError(PutMessageRequest request) throws Exception {
    long before = offsets(request.getTopicAndPartition().getPartitionId()).getEndOffset();
    MessageService.putMessage_result r = put(request);
    assertNotNull(r.getE(), "expected an error");
    assertEquals(before, offsets(request.getTopicAndPartition().getPartitionId()).getEndOffset(), "a refused put changed the partition");
    return r.getE();
  }

  @Test
  void invalidTopicNamesAreRefused() throws Exception {
    for (String name : List.of("", "_x", "-x", "x_", "has space", "a/b", "x".repeat(81), "ünïcode")) {
      TopicService.createTopic_result r = topicCall("createTopic", new TopicService.createTopic_args(
          new CreateTopicRequest(name, new TopicAttribute().setPartitionNumber(1))), new TopicService.createTopic_result());
      assertNotNull(r.getE(), "accepted topic name '" + name + "'");
      assertEquals(ErrorCode.INVALID_TOPIC_NAME, r.getE().getErrorCode(), name);
      assertTrue(r.getE().getErrMsg().contains("topic name"), r.getE().getErrMsg());
    }
  }

  @Test
  void partitionCountsOutOfRangeAreRefused() throws Exception {
    for (int count : new int[] {0, -1, 1025}) {
      TopicService.createTopic_result r = topicCall("createTopic", new TopicService.createTopic_args(
          new CreateTopicRequest("counts", new TopicAttribute().setPartitionNumber(count))), new TopicService.createTopic_result());
      assertEquals(ErrorCode.INVALID_TOPIC_PARAMS, r.getE().getErrorCode());
      assertTrue(r.getE().getErrMsg().contains("allowed: 1..1024"), r.getE().getErrMsg());
    }
  }

  @Test
  void unknownTopicAndPartitionAreRefused() throws Exception {
    PutMessageRequest unknownTopic = putRequest(0, MessageCompressionType.NONE, 1, RawApi.noneBlock(new byte[] {1}));
    unknownTopic.setTopicAndPartition(new TopicAndPartition("nope", new TopicTalosResourceName("admin#nope#x"), 0));
    assertEquals(ErrorCode.TOPIC_NOT_EXIST, put(unknownTopic).getE().getErrorCode());

    PutMessageRequest staleIncarnation = putRequest(0, MessageCompressionType.NONE, 1, RawApi.noneBlock(new byte[] {1}));
    staleIncarnation.setTopicAndPartition(new TopicAndPartition("bad-input", new TopicTalosResourceName("admin#bad-input#old"), 0));
    assertEquals(ErrorCode.TOPIC_NOT_EXIST, put(staleIncarnation).getE().getErrorCode());

    GalaxyTalosException e = put(putRequest(2, MessageCompressionType.NONE, 1, RawApi.noneBlock(new byte[] {1}))).getE();
    assertEquals(ErrorCode.PARTITION_NOT_EXIST, e.getErrorCode());
    assertTrue(e.getErrMsg().contains("partitions are 0..1"), e.getErrMsg());
  }

  @Test
  void emptyOversizeAndMalformedMessagesAreRefusedAndNothingIsLost() throws Exception {
    GalaxyTalosException empty = putError(putRequest(0, MessageCompressionType.NONE, 2,
        RawApi.noneBlock("ok".getBytes(StandardCharsets.UTF_8), new byte[0])));
    assertEquals(ErrorCode.INVALID_REQUEST_PARAMS, empty.getErrorCode());
    assertTrue(empty.getErrMsg().contains("message 1 has 0 bytes"), empty.getErrMsg());

    GalaxyTalosException huge = putError(putRequest(0, MessageCompressionType.NONE, 1,
        RawApi.noneBlock(new byte[10 * 1024 * 1024 + 1])));
    assertEquals(ErrorCode.INVALID_REQUEST_PARAMS, huge.getErrorCode());
    assertTrue(huge.getErrMsg().contains("a message has 1 to 10485760 bytes"), huge.getErrMsg());

    assertEquals(ErrorCode.INVALID_REQUEST_PARAMS, putError(putRequest(0, MessageCompressionType.NONE, 3,
        RawApi.noneBlock(new byte[] {1}, new byte[] {2}))).getErrorCode());
    assertEquals(ErrorCode.INVALID_REQUEST_PARAMS, putError(putRequest(0, MessageCompressionType.SNAPPY, 1,
        "not snappy at all".getBytes(StandardCharsets.UTF_8))).getErrorCode());
    assertEquals(ErrorCode.INVALID_REQUEST_PARAMS, putError(putRequest(0, MessageCompressionType.NONE, 1,
        new byte[0])).getErrorCode());
    PutMessageRequest miscounted = putRequest(0, MessageCompressionType.NONE, 1, RawApi.noneBlock(new byte[] {1}));
    miscounted.setMessageNumber(5);
    assertTrue(putError(miscounted).getErrMsg().contains("messageNumber 5 differs"));

    // A message of exactly 10 MiB is fine, and the earlier messages are intact.
    putOk(1, "x".repeat(10 * 1024 * 1024));
    HttpResponse<byte[]> response = api.post("/v1/api/message", "getMessage", RawApi.call("getMessage",
        new MessageService.getMessage_args(new GetMessageRequest(new TopicAndPartition("bad-input", topic, 0), 0, "g#1"))));
    MessageService.getMessage_result got = RawApi.reply(response.body(), new MessageService.getMessage_result());
    assertEquals(2, got.getSuccess().getMessageNumber());
    assertTrue(new String(got.getSuccess().getMessageBlocks().get(0).getMessageBlock(), StandardCharsets.UTF_8).contains("second"));
  }

  @Test
  void offsetsOutOfRangeAndInvalidOffsetsAreRefused() throws Exception {
    for (long offset : new long[] {3, 1000}) {
      HttpResponse<byte[]> response = api.post("/v1/api/message", "getMessage", RawApi.call("getMessage",
          new MessageService.getMessage_args(new GetMessageRequest(new TopicAndPartition("bad-input", topic, 0), offset, "g#1"))));
      GalaxyTalosException e = RawApi.reply(response.body(), new MessageService.getMessage_result()).getE();
      assertEquals(ErrorCode.MESSAGE_OFFSET_OUT_OF_RANGE, e.getErrorCode());
      assertTrue(e.getErrMsg().contains("the partition holds [0, 1] and the next offset is 2"), e.getErrMsg());
    }
    HttpResponse<byte[]> response = api.post("/v1/api/message", "getMessage", RawApi.call("getMessage",
        new MessageService.getMessage_args(new GetMessageRequest(new TopicAndPartition("bad-input", topic, 0), -3, "g#1"))));
    assertEquals(ErrorCode.INVALID_REQUEST_PARAMS, RawApi.reply(response.body(), new MessageService.getMessage_result()).getE().getErrorCode());
    // Caught up is not an error.
    response = api.post("/v1/api/message", "getMessage", RawApi.call("getMessage",
        new MessageService.getMessage_args(new GetMessageRequest(new TopicAndPartition("bad-input", topic, 0), 2, "g#1"))));
    assertEquals(0, RawApi.reply(response.body(), new MessageService.getMessage_result()).getSuccess().getMessageBlocksSize());
  }

  @Test
  void corruptThriftBodiesGet400() throws Exception {
    HttpResponse<byte[]> garbage = api.post("/v1/api/message", "putMessage", "definitely not thrift".getBytes(StandardCharsets.UTF_8));
    assertEquals(400, garbage.statusCode());
    assertTrue(RawApi.text(garbage).contains("corrupt Thrift compact body"), RawApi.text(garbage));

    byte[] valid = RawApi.call("putMessage", new MessageService.putMessage_args(
        putRequest(0, MessageCompressionType.NONE, 1, RawApi.noneBlock(new byte[] {1}))));
    HttpResponse<byte[]> truncated = api.post("/v1/api/message", "putMessage", Arrays.copyOf(valid, valid.length / 2));
    assertEquals(400, truncated.statusCode());

    HttpResponse<byte[]> unknownMethod = api.post("/v1/api/message", "dropEverything",
        RawApi.call("dropEverything", new MessageService.putMessage_args()));
    assertEquals(400, unknownMethod.statusCode());
    assertTrue(RawApi.text(unknownMethod).contains("unknown method 'dropEverything'"));

    HttpResponse<byte[]> wrongService = api.post("/v1/api/topic", "putMessage", valid);
    assertEquals(400, wrongService.statusCode());
    assertEquals(2, offsets(0).getEndOffset() + 1, "nothing was appended");
  }

  @Test
  void wrongMethodOrPathGets405Or404() throws Exception {
    byte[] body = RawApi.call("listTopics", new TopicService.listTopics_args());
    HttpResponse<byte[]> get = api.send("GET", "/v1/api/topic", "listTopics", new byte[0], Instant.now().getEpochSecond(),
        server.adminCredential().secretKey(), null, null);
    assertEquals(405, get.statusCode());
    assertEquals("POST", get.headers().firstValue("Allow").orElse(null));
    assertEquals(404, api.post("/v1/api/nothing", "listTopics", body).statusCode());
    assertEquals(404, api.post("/elsewhere", "listTopics", body).statusCode());
    assertEquals(200, api.post("/v1/api/topic", "listTopics", body).statusCode());
  }

  @Test
  void badSignaturesGet401AndSkewedClocks412() throws Exception {
    byte[] body = RawApi.call("listTopics", new TopicService.listTopics_args());
    long now = Instant.now().getEpochSecond();
    HttpResponse<byte[]> wrongSecret = api.send("POST", "/v1/api/topic", "listTopics", body, now, "wrong", null, null);
    assertEquals(401, wrongSecret.statusCode());
    HttpResponse<byte[]> unsigned = api.send("POST", "/v1/api/topic", "listTopics", body, now, null, null, null);
    assertEquals(401, unsigned.statusCode());
    assertTrue(RawApi.text(unsigned).contains("missing Authorization header"));
    HttpResponse<byte[]> tampered = api.send("POST", "/v1/api/topic", "listTopics", body, now,
        server.adminCredential().secretKey(), "other body".getBytes(StandardCharsets.UTF_8), null);
    assertEquals(401, tampered.statusCode());
    assertTrue(RawApi.text(tampered).contains("does not match the request body"));

    HttpResponse<byte[]> skewed = api.send("POST", "/v1/api/topic", "listTopics", body, now - 3600,
        server.adminCredential().secretKey(), null, null);
    assertEquals(412, skewed.statusCode());
    long serverTime = Long.parseLong(skewed.headers().firstValue("X-Xiaomi-Timestamp").orElseThrow());
    assertTrue(Math.abs(serverTime - now) < 60);
  }

  @Test
  void malformedSignedPartsGet401Or412NeverA500() throws Exception {
    byte[] body = RawApi.call("listTopics", new TopicService.listTopics_args());
    long now = Instant.now().getEpochSecond();
    // Sent by hand: no signer would sign a non-numeric Expires.
    HttpResponse<byte[]> expires = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
            server.endpoint().resolve("/v1/api/topic?type=listTopics&Expires=soon"))
        .POST(java.net.http.HttpRequest.BodyPublishers.ofByteArray(body))
        .header("Content-Type", "application/x-thrift-compact")
        .header("X-Xiaomi-Timestamp", Long.toString(now))
        .header("X-Xiaomi-Content-MD5", io.talos.common.auth.GalaxySigner.contentMd5Hex(body, 0, body.length))
        .header("Authorization", "Galaxy-V3 " + server.adminCredential().secretKeyId() + ":bm90LWEtc2lnbmF0dXJl")
        .build(), HttpResponse.BodyHandlers.ofByteArray());
    assertEquals(401, expires.statusCode(), RawApi.text(expires));
    assertTrue(RawApi.text(expires).contains("Expires=soon is not a number"), RawApi.text(expires));
    // A timestamp that would wrap around when turned into milliseconds is refused, not let through.
    long wrapping = (Long.MAX_VALUE / 1000) + 18_446_744_073_709_552L / 1000;
    for (long ts : new long[] {wrapping, Long.MAX_VALUE / 1000, -now}) {
      HttpResponse<byte[]> r = api.send("POST", "/v1/api/topic", "listTopics", body, ts,
          server.adminCredential().secretKey(), null, null);
      assertEquals(412, r.statusCode(), "timestamp " + ts + ": " + RawApi.text(r));
    }
  }

  @Test
  void oversizeRequestsGet413() throws Exception {
    HttpResponse<byte[]> big = api.post("/v1/api/message", "putMessage", new byte[13 * 1024 * 1024]);
    assertEquals(413, big.statusCode());
    assertTrue(RawApi.text(big).contains("server.request.max.bytes"));
  }

  @Test
  void unsupportedCallsArePlainlyNotAvailableAndLegacyClientsGetSdkCodes() throws Exception {
    TopicService.addSubResourceName_args args = new TopicService.addSubResourceName_args(
        new AddSubResourceNameRequest(topic, "org", "team"));
    HttpResponse<byte[]> ours = api.post("/v1/api/topic", "addSubResourceName", RawApi.call("addSubResourceName", args));
    GalaxyTalosException e = RawApi.reply(ours.body(), new TopicService.addSubResourceName_result()).getE();
    assertEquals(ErrorCode.NOT_SUPPORTED, e.getErrorCode());
    assertTrue(e.getErrMsg().contains("not available"), e.getErrMsg());
    HttpResponse<byte[]> legacy = api.send("POST", "/v1/api/topic", "addSubResourceName",
        // another body: the same signed state-changing call twice would be refused as a replay
        RawApi.call("addSubResourceName", new TopicService.addSubResourceName_args(
            new AddSubResourceNameRequest(topic, "org2", "team"))), Instant.now().getEpochSecond(),
        server.adminCredential().secretKey(), null, "Java-SDK/2.0.2 Java/17");
    assertEquals(ErrorCode.OPERATION_FAILED,
        RawApi.reply(legacy.body(), new TopicService.addSubResourceName_result()).getE().getErrorCode());
  }

  @Test
  void opsEndpointAnswersHealthAndMetrics() throws Exception {
    java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
    HttpResponse<String> health = http.send(java.net.http.HttpRequest.newBuilder(server.endpoint().resolve("/ops/health")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, health.statusCode());
    assertTrue(health.body().contains("\"ok\""));
    HttpResponse<String> metrics = http.send(java.net.http.HttpRequest.newBuilder(server.endpoint().resolve("/ops/metrics")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertTrue(metrics.body().contains("requests.message.putMessage"), metrics.body());
  }
}
