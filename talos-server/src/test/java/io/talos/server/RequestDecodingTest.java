package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.thrift.ChangeTopicAttributeRequest;
import io.talos.thrift.ConsumeUnit;
import io.talos.thrift.ConsumerService;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.GetPartitionsOffsetRequest;
import io.talos.thrift.LockPartitionRequest;
import io.talos.thrift.MessageBlock;
import io.talos.thrift.MessageCompressionType;
import io.talos.thrift.MessageService;
import io.talos.thrift.PutMessageRequest;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicAttribute;
import io.talos.thrift.TopicService;
import io.talos.thrift.TopicTalosResourceName;
import io.talos.thrift.UnlockPartitionRequest;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.thrift.TApplicationException;
import org.apache.thrift.protocol.TCompactProtocol;
import org.apache.thrift.protocol.TField;
import org.apache.thrift.protocol.TList;
import org.apache.thrift.protocol.TMessage;
import org.apache.thrift.protocol.TMessageType;
import org.apache.thrift.protocol.TStruct;
import org.apache.thrift.protocol.TType;
import org.apache.thrift.transport.TMemoryBuffer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Request decoding, argument limits and error answers over real HTTP: what a body declares cannot
 * make the server allocate or recurse beyond its limits, every argument is checked against a
 * declared limit with a message naming field, value and limit, and every error on the API is a
 * Thrift answer (JSON on /ops), including the errors Jetty answers itself.
 */
class RequestDecodingTest {
  @TempDir
  static Path dataDir;

  static TalosServer server;
  static RawApi api;
  static TopicTalosResourceName topic;

  @BeforeAll
  static void start() throws Exception {
    server = TestServers.start(dataDir, ServerConfig.REQUEST_PARTITION_LIST_MAX_ENTRIES, "8",
        ServerConfig.REQUEST_MAP_MAX_ENTRIES, "4", ServerConfig.REQUEST_PUT_BLOCKS_MAX_COUNT, "2",
        ServerConfig.REQUEST_STRING_MAX_CHARS, "100", ServerConfig.REQUEST_MAX_BYTES, "65536");
    api = new RawApi(server.endpoint(), server.adminCredential().secretKeyId(), server.adminCredential().secretKey());
    topic = api.createTopic("decode", 2);
    api.put(new TopicAndPartition("decode", topic, 0), List.of("golden"));
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  /** The TApplicationException a non-200 API answer carries; fails unless it is a Thrift answer. */
  static TApplicationException thriftError(HttpResponse<byte[]> r) throws Exception {
    assertEquals("application/x-thrift", r.headers().firstValue("Content-Type").orElse(null), RawApi.text(r));
    return applicationException(r.body());
  }

  static TApplicationException applicationException(byte[] body) throws Exception {
    TCompactProtocol in = new TCompactProtocol(new org.apache.thrift.transport.TMemoryInputTransport(body));
    TMessage m = in.readMessageBegin();
    assertEquals(TMessageType.EXCEPTION, m.type);
    return TApplicationException.readFrom(in);
  }

  /** A putMessage call whose request declares a list of {@code declared} message blocks and ends. */
  static byte[] putDeclaringBlocks(int declared) throws Exception {
    TMemoryBuffer buffer = new TMemoryBuffer(64);
    TCompactProtocol out = new TCompactProtocol(buffer);
    out.writeMessageBegin(new TMessage("putMessage", TMessageType.CALL, 1));
    out.writeStructBegin(new TStruct("args"));
    out.writeFieldBegin(new TField("request", TType.STRUCT, (short) 1));
    out.writeStructBegin(new TStruct("PutMessageRequest"));
    out.writeFieldBegin(new TField("messageBlocks", TType.LIST, (short) 2));
    out.writeListBegin(new TList(TType.STRUCT, declared));
    out.writeFieldStop();
    out.writeFieldStop();
    out.writeFieldStop();
    return java.util.Arrays.copyOf(buffer.getArray(), buffer.length());
  }

  @Test
  void hugeDeclaredListsAreRefusedBeforeMemoryIsSpent() throws Exception {
    byte[] body = putDeclaringBlocks(100_000_000);
    assertTrue(body.length < 40, "a body of " + body.length + " bytes");
    HttpResponse<byte[]> r = api.post("/v1/api/message", "putMessage", body);
    assertEquals(400, r.statusCode());
    TApplicationException e = thriftError(r);
    assertEquals(TApplicationException.PROTOCOL_ERROR, e.getType());
    assertTrue(e.getMessage().contains("list declares 100000000 elements; at most 65536 (server.request.container.max.length)"),
        e.getMessage());

    // Under the configured limit but more than the body could hold.
    TApplicationException small = thriftError(api.post("/v1/api/message", "putMessage", putDeclaringBlocks(60_000)));
    assertTrue(small.getMessage().contains("list declares 60000 elements but only"), small.getMessage());
  }

  @Test
  void hugeDeclaredStringsAreRefused() throws Exception {
    // describeTopic whose topic name declares 30 MB (within the message-size check of the stock protocol).
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    b.writeBytes(new byte[] {(byte) 0x82, 0x21, 0x01, 0x0d});
    b.writeBytes("describeTopic".getBytes(StandardCharsets.UTF_8));
    b.writeBytes(new byte[] {0x1c, 0x18, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0x0f, 'x', 0, 0});
    HttpResponse<byte[]> r = api.post("/v1/api/topic", "describeTopic", b.toByteArray());
    assertEquals(400, r.statusCode());
    assertTrue(thriftError(r).getMessage().contains("string declares 31457280 bytes but only"), RawApi.text(r));
  }

  @Test
  void deepNestingIsRefusedWithoutRecursingIntoIt() throws Exception {
    // Unknown struct fields nested 32,000 deep: the generated readers skip them recursively.
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    byte[] header = RawApi.call("listTopics", new TopicService.listTopics_args());
    b.write(header, 0, header.length - 1); // without the args struct's stop
    for (int i = 0; i < 32_000; i++) b.write(0x1c); // field +1, type struct
    for (int i = 0; i < 32_001; i++) b.write(0);
    HttpResponse<byte[]> structs = api.post("/v1/api/topic", "listTopics", b.toByteArray());
    assertEquals(400, structs.statusCode());
    TApplicationException e = thriftError(structs);
    assertTrue(e.getMessage().contains("nest deeper than 16 levels (server.request.nesting.max.depth)"), e.getMessage());

    // Lists of lists.
    b.reset();
    b.write(header, 0, header.length - 1);
    b.write(0x19); // field +1, type list
    for (int i = 0; i < 50_000; i++) b.write(0x19); // one element of type list
    HttpResponse<byte[]> lists = api.post("/v1/api/topic", "listTopics", b.toByteArray());
    assertEquals(400, lists.statusCode());
    assertTrue(thriftError(lists).getMessage().contains("server.request.nesting.max.depth"));

    // The server is fine afterwards.
    assertEquals(200, api.post("/v1/api/topic", "listTopics", header).statusCode());
  }

  @Test
  void bytesAfterTheCallAreRefused() throws Exception {
    byte[] call = RawApi.call("listTopics", new TopicService.listTopics_args());
    byte[] trailing = java.util.Arrays.copyOf(call, call.length + 3);
    HttpResponse<byte[]> r = api.post("/v1/api/topic", "listTopics", trailing);
    assertEquals(400, r.statusCode());
    TApplicationException e = thriftError(r);
    assertTrue(e.getMessage().contains("3 bytes follow the listTopics call"), e.getMessage());
  }

  static GalaxyTalosException consumerError(String method, org.apache.thrift.TBase<?, ?> args,
      org.apache.thrift.TBase<?, ?> result) throws Exception {
    api.call("consumer", method, args, result);
    @SuppressWarnings({"rawtypes", "unchecked"})
    Object e = ((org.apache.thrift.TBase) result).getFieldValue(((org.apache.thrift.TBase) result).fieldForId(1));
    assertNotNull(e, method + " accepted it");
    return (GalaxyTalosException) e;
  }

  @Test
  void negativePartitionIdsAreInvalidParams() throws Exception {
    ConsumeUnit unit = new ConsumeUnit("group", topic, List.of(0, -1), "worker");
    GalaxyTalosException e = consumerError("unlockPartition", new ConsumerService.unlockPartition_args(
        new UnlockPartitionRequest(unit)), new ConsumerService.unlockPartition_result());
    assertEquals(ErrorCode.INVALID_REQUEST_PARAMS, e.getErrorCode());
    assertEquals("request.consumeUnit.partitionIdList[1] is -1; partition ids are 0 or more", e.getErrMsg());
  }

  @Test
  void partitionListsBeyondTheLimitAreInvalidParams() throws Exception {
    List<Integer> nine = new ArrayList<>();
    for (int i = 0; i < 9; i++) nine.add(i % 2);
    GalaxyTalosException lock = consumerError("lockPartition", new ConsumerService.lockPartition_args(
        new LockPartitionRequest(new ConsumeUnit("group", topic, nine, "worker"))), new ConsumerService.lockPartition_result());
    assertEquals(ErrorCode.INVALID_REQUEST_PARAMS, lock.getErrorCode());
    assertEquals("request.consumeUnit.partitionIdList has 9 entries; at most 8 (request.partition.list.max.entries)",
        lock.getErrMsg());

    List<TopicAndPartition> taps = new ArrayList<>(Collections.nCopies(9, new TopicAndPartition("decode", topic, 0)));
    MessageService.getPartitionsOffset_result r = api.call("message", "getPartitionsOffset",
        new MessageService.getPartitionsOffset_args(new GetPartitionsOffsetRequest(taps)),
        new MessageService.getPartitionsOffset_result());
    assertEquals("request.topicAndPartitionList has 9 entries; at most 8 (request.partition.list.max.entries)",
        r.getE().getErrMsg());
    // A value inside a list element is named by its index.
    List<TopicAndPartition> negative = new ArrayList<>(taps.subList(0, 3));
    negative.set(2, new TopicAndPartition("decode", topic, -1));
    r = api.call("message", "getPartitionsOffset", new MessageService.getPartitionsOffset_args(
        new GetPartitionsOffsetRequest(negative)), new MessageService.getPartitionsOffset_result());
    assertEquals("request.topicAndPartitionList[2].partitionId is -1; partition ids are 0 or more", r.getE().getErrMsg());
    // At the limit it is served.
    assertEquals(8, api.call("message", "getPartitionsOffset", new MessageService.getPartitionsOffset_args(
        new GetPartitionsOffsetRequest(taps.subList(0, 8))), new MessageService.getPartitionsOffset_result())
        .getSuccess().getOffsetInfoListSize());
  }

  @Test
  void topicAttributeMapsAndStringsBeyondTheLimitsAreInvalidParams() throws Exception {
    Map<String, String> five = new LinkedHashMap<>();
    for (int i = 0; i < 5; i++) five.put("k" + i, "v");
    TopicService.changeTopicAttribute_result r = api.call("topic", "changeTopicAttribute",
        new TopicService.changeTopicAttribute_args(new ChangeTopicAttributeRequest(topic, new TopicAttribute().setAttributes(five))),
        new TopicService.changeTopicAttribute_result());
    assertEquals(ErrorCode.INVALID_REQUEST_PARAMS, r.getE().getErrorCode());
    assertEquals("request.topicAttribute.attributes has 5 entries; at most 4 (request.map.max.entries)", r.getE().getErrMsg());

    Map<String, String> longValue = new HashMap<>(Map.of("k", "v".repeat(101)));
    r = api.call("topic", "changeTopicAttribute", new TopicService.changeTopicAttribute_args(
        new ChangeTopicAttributeRequest(topic, new TopicAttribute().setAttributes(longValue))), new TopicService.changeTopicAttribute_result());
    assertEquals("request.topicAttribute.attributes[k] has 101 characters; at most 100 (request.string.max.chars)", r.getE().getErrMsg());
    r = api.call("topic", "changeTopicAttribute", new TopicService.changeTopicAttribute_args(new ChangeTopicAttributeRequest(
        topic, new TopicAttribute().setAttributes(Map.of("k".repeat(101), "v")))), new TopicService.changeTopicAttribute_result());
    assertEquals("request.topicAttribute.attributes key has 101 characters; at most 100 (request.string.max.chars)",
        r.getE().getErrMsg());

    TopicService.describeTopic_result d = api.call("topic", "describeTopic", new TopicService.describeTopic_args(
        new io.talos.thrift.DescribeTopicRequest("decode")), new TopicService.describeTopic_result());
    assertFalse(d.getSuccess().getTopicAttribute().isSetAttributes(), "a refused change changed the topic");
  }

  @Test
  void namesAndBlockCountsBeyondTheLimitsAreInvalidParamsAndNothingIsStored() throws Exception {
    TopicAndPartition tap = new TopicAndPartition("decode", topic, 1);
    MessageBlock block = new MessageBlock(0, 1, MessageCompressionType.NONE, ByteBuffer.wrap(RawApi.noneBlock(new byte[] {1})));
    MessageService.putMessage_result longId = api.call("message", "putMessage", new MessageService.putMessage_args(
        new PutMessageRequest(tap, List.of(block), 1, "s".repeat(257))), new MessageService.putMessage_result());
    assertEquals("request.sequenceId has 257 characters; at most 256 (request.name.max.chars)", longId.getE().getErrMsg());
    MessageService.putMessage_result blocks = api.call("message", "putMessage", new MessageService.putMessage_args(
        new PutMessageRequest(tap, List.of(block, block, block), 3, "p#1")), new MessageService.putMessage_result());
    assertEquals("request.messageBlocks has 3 entries; at most 2 (request.put.blocks.max.count)", blocks.getE().getErrMsg());
    assertTrue(api.readAll(tap, 0).isEmpty(), "a refused put stored messages");
    assertEquals(Map.of(0L, "golden"), api.readAll(new TopicAndPartition("decode", topic, 0), 0));
  }

  @Test
  void apiErrorsAreThriftAnswers() throws Exception {
    HttpResponse<byte[]> get = api.send("GET", "/v1/api/topic", "listTopics", new byte[0],
        java.time.Instant.now().getEpochSecond(), server.adminCredential().secretKey(), null, null);
    assertEquals(405, get.statusCode());
    assertEquals(TApplicationException.UNKNOWN_METHOD, thriftError(get).getType());
    HttpResponse<byte[]> missing = api.post("/v1/api/nothing", "listTopics", new byte[] {1});
    assertEquals(404, missing.statusCode());
    assertTrue(thriftError(missing).getMessage().contains("no such API path /v1/api/nothing"));
    HttpResponse<byte[]> big = api.post("/v1/api/message", "putMessage", new byte[70_000]);
    assertEquals(413, big.statusCode());
    assertTrue(thriftError(big).getMessage().contains("server.request.max.bytes"));
    HttpResponse<byte[]> garbage = api.post("/v1/api/message", "putMessage", "not thrift".getBytes(StandardCharsets.UTF_8));
    assertEquals(400, garbage.statusCode());
    assertTrue(thriftError(garbage).getMessage().contains("corrupt Thrift compact body"));
  }

  /** One raw HTTP/1.1 exchange: status line, headers (lower-case names), body. */
  record Raw(int status, Map<String, String> headers, byte[] body) {}

  static Raw raw(String head) throws Exception {
    try (Socket s = new Socket("127.0.0.1", server.port())) {
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      out.write(head.getBytes(StandardCharsets.ISO_8859_1));
      out.flush();
      InputStream in = s.getInputStream();
      byte[] all = in.readAllBytes();
      String text = new String(all, StandardCharsets.ISO_8859_1);
      int end = text.indexOf("\r\n\r\n");
      String[] lines = text.substring(0, end).split("\r\n");
      Map<String, String> headers = new HashMap<>();
      for (int i = 1; i < lines.length; i++) {
        int c = lines[i].indexOf(':');
        headers.put(lines[i].substring(0, c).trim().toLowerCase(Locale.ROOT), lines[i].substring(c + 1).trim());
      }
      byte[] body = java.util.Arrays.copyOfRange(all, end + 4, all.length);
      return new Raw(Integer.parseInt(lines[0].split(" ")[1]), headers, body);
    }
  }

  static void assertThriftError(Raw r, int status) throws Exception {
    assertEquals(status, r.status(), new String(r.body(), StandardCharsets.UTF_8));
    assertEquals("application/x-thrift", r.headers().get("content-type"), r.headers().toString());
    assertTrue(applicationException(r.body()).getMessage().contains(String.valueOf(status)));
  }

  @Test
  void errorsJettyAnswersItselfAreThriftAnswersOnTheApi() throws Exception {
    long before = server.metrics().meter("http.status.414").getCount();
    assertThriftError(raw("GET /v1/api/topic?x=" + "a".repeat(20_000) + " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"), 414);
    assertEquals(before + 1, server.metrics().meter("http.status.414").getCount(), "Jetty-level errors are counted");
    assertThriftError(raw("POST /v1/api/topic HTTP/1.1\r\nHost: t\r\nX-Big: " + "b".repeat(20_000)
        + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"), 431);
    assertThriftError(raw("POST /v1/api/%zz HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"), 400);
    assertThriftError(raw("POST /v1/api/topic HTTP/1.1\r\nHost: t\r\nContent-Length: nope\r\nConnection: close\r\n\r\n"), 400);
  }

  @Test
  void opsAnswersJsonAndHead() throws Exception {
    Raw head = raw("HEAD /ops/health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    assertEquals(200, head.status());
    assertEquals(0, head.body().length);
    for (String path : List.of("/ops", "/ops/nothing")) {
      Raw missing = raw("GET " + path + " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
      assertEquals(404, missing.status(), path);
      assertEquals("application/json", missing.headers().get("content-type"), path);
      assertTrue(new String(missing.body(), StandardCharsets.UTF_8).contains("\"error\""), path);
    }
    Raw post = raw("POST /ops/health HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    assertEquals(405, post.status());
    assertEquals("application/json", post.headers().get("content-type"));
    Raw tooLong = raw("GET /ops/health?x=" + "a".repeat(20_000) + " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    assertEquals(414, tooLong.status());
  }
}
