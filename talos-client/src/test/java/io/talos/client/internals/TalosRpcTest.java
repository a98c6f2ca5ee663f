package io.talos.client.internals;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.client.FakeTalosServer;
import io.talos.client.FakeTalosServer.Canned;
import io.talos.client.TalosClientConfig;
import io.talos.client.TalosException;
import io.talos.thrift.DescribeTopicRequest;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.ListTopicsResponse;
import io.talos.thrift.TopicService;
import java.net.ConnectException;
import java.net.ServerSocket;
import java.util.List;
import java.util.Map;
import org.apache.thrift.TBase;
import org.apache.thrift.protocol.TCompactProtocol;
import org.apache.thrift.protocol.TField;
import org.apache.thrift.protocol.TMessage;
import org.apache.thrift.protocol.TMessageType;
import org.apache.thrift.protocol.TStruct;
import org.apache.thrift.protocol.TType;
import org.apache.thrift.transport.TMemoryBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class TalosRpcTest {
  private static final String THRIFT = "application/x-thrift";

  private FakeTalosServer server;
  private TalosRpc rpc;

  @BeforeEach
  void start() throws Exception {
    server = new FakeTalosServer();
    rpc = new TalosRpc(server.config().build());
  }

  @AfterEach
  void stop() {
    rpc.close();
    server.close();
  }

  @Test
  void shouldPostOneSignedCompactThriftCallPerRequest() {
    ListTopicsResponse response = rpc.topic(TopicService.Client::listTopics);
    assertTrue(response.getTopicInfos().isEmpty());

    FakeTalosServer.Received request = server.requests().get(0);
    assertEquals("/v1/api/topic", request.path());
    assertTrue(request.query().matches("id=[0-9a-f]{8}&type=listTopics"), request.query());
    assertEquals("application/x-thrift-compact", request.header("Content-Type"));
    assertTrue(request.header("User-Agent").startsWith("talos-java-client/"));
    assertTrue(request.header("Authorization").startsWith("Galaxy-V3 " + FakeTalosServer.KEY_ID));
  }

  @Test
  void shouldUseAFreshRequestIdEachCall() {
    rpc.topic(TopicService.Client::listTopics);
    rpc.topic(TopicService.Client::listTopics);
    assertFalse(server.requests().get(0).query().equals(server.requests().get(1).query()));
  }

  @Test
  void shouldTurnServerErrorsIntoTalosExceptionsWithTheirCode() {
    TalosException e = assertThrows(TalosException.class,
        () -> rpc.topic(c -> c.describeTopic(new DescribeTopicRequest("missing"))));
    assertEquals(ErrorCode.TOPIC_NOT_EXIST, e.errorCode());
    assertEquals(0, e.httpStatus());
    assertFalse(e.isRetriable());
    assertTrue(e.getMessage().startsWith("TOPIC_NOT_EXIST(5): "), e.getMessage());
    assertTrue(e.getMessage().contains("missing"), e.getMessage());
  }

  @Test
  void shouldMarkRetriableCodesRetriable() throws Exception {
    server.enqueue(new Canned(200, THRIFT, reply("listTopics", new TopicService.listTopics_result()
        .setE(new GalaxyTalosException().setErrorCode(ErrorCode.PARTITION_NOT_SERVING)
            .setErrMsg("moving").setDetails("to node 2"))), Map.of()));
    TalosException e = assertThrows(TalosException.class,
        () -> rpc.topic(TopicService.Client::listTopics));
    assertEquals(ErrorCode.PARTITION_NOT_SERVING, e.errorCode());
    assertTrue(e.isRetriable());
    assertTrue(e.getMessage().contains("moving (to node 2)"), e.getMessage());
  }

  @Test
  void shouldReportUnknownCodeNumbersAsUnknown() throws Exception {
    TMemoryBuffer buffer = new TMemoryBuffer(64);
    TCompactProtocol p = new TCompactProtocol(buffer);
    p.writeMessageBegin(new TMessage("listTopics", TMessageType.REPLY, 1));
    p.writeStructBegin(new TStruct("listTopics_result"));
    p.writeFieldBegin(new TField("e", TType.STRUCT, (short) 1));
    p.writeStructBegin(new TStruct("GalaxyTalosException"));
    p.writeFieldBegin(new TField("errorCode", TType.I32, (short) 1));
    p.writeI32(99);
    p.writeFieldEnd();
    p.writeFieldBegin(new TField("errMsg", TType.STRING, (short) 2));
    p.writeString("a code from the future");
    p.writeFieldEnd();
    p.writeFieldStop();
    p.writeStructEnd();
    p.writeFieldEnd();
    p.writeFieldStop();
    p.writeStructEnd();
    p.writeMessageEnd();
    server.enqueue(new Canned(200, THRIFT, java.util.Arrays.copyOf(buffer.getArray(),
        buffer.length()), Map.of()));

    TalosException e = assertThrows(TalosException.class,
        () -> rpc.topic(TopicService.Client::listTopics));
    assertEquals(ErrorCode.UNKNOWN, e.errorCode());
    assertTrue(e.getMessage().contains("a code from the future"), e.getMessage());
  }

  @Test
  void shouldReadThriftRepliesWhateverTheirStatus() throws Exception {
    server.enqueue(new Canned(500, THRIFT, reply("listTopics", new TopicService.listTopics_result()
        .setE(new GalaxyTalosException().setErrorCode(ErrorCode.INTERNAL_SERVER_ERROR)
            .setErrMsg("disk on fire"))), Map.of()));
    TalosException e = assertThrows(TalosException.class,
        () -> rpc.topic(TopicService.Client::listTopics));
    assertEquals(ErrorCode.INTERNAL_SERVER_ERROR, e.errorCode());
    assertEquals(0, e.httpStatus());
  }

  @Test
  void shouldReportABadSignatureAsHttp401WithTheServersExplanation() {
    try (TalosRpc wrongSecret = new TalosRpc(server.config()
        .credentials(FakeTalosServer.KEY_ID, "not-the-secret").build())) {
      TalosException e = assertThrows(TalosException.class,
          () -> wrongSecret.topic(TopicService.Client::listTopics));
      assertEquals(401, e.httpStatus());
      assertNull(e.errorCode());
      assertFalse(e.isRetriable());
      assertTrue(e.getMessage().startsWith("HTTP 401 Unauthorized: "), e.getMessage());
      assertTrue(e.getMessage().contains("signature mismatch"), e.getMessage());
    }
  }

  @Test
  void shouldMapOtherStatusesWithTheirRetriability() {
    for (int status : List.of(400, 404, 405, 413, 500, 503)) {
      server.enqueue(Canned.text(status, "because " + status));
      TalosException e = assertThrows(TalosException.class,
          () -> rpc.topic(TopicService.Client::listTopics));
      assertEquals(status, e.httpStatus());
      assertEquals(status >= 500, e.isRetriable(), "status " + status);
      assertTrue(e.getMessage().contains("because " + status), e.getMessage());
    }
  }

  @Test
  void shouldAdjustTheClockAndRetryOnceOnClockSkew() {
    long localMs = 1_600_000_000_000L;
    try (TalosRpc skewed = new TalosRpc(server.config().build(), () -> localMs)) {
      server.enqueue(new Canned(412, "text/plain", "clock skew".getBytes(),
          Map.of("X-Xiaomi-Timestamp", "1700000000")));

      skewed.topic(TopicService.Client::listTopics);

      assertEquals(2, server.requests().size());
      assertEquals("1600000000", server.requests().get(0).header("X-Xiaomi-Timestamp"));
      assertEquals("1700000000", server.requests().get(1).header("X-Xiaomi-Timestamp"));
      assertEquals(100_000_000_000L, skewed.clockOffsetMs());
      assertEquals(1_700_000_000_000L, skewed.nowMs());
    }
  }

  @Test
  void shouldGiveUpAfterOneClockSkewRetry() {
    for (int i = 0; i < 2; i++) {
      server.enqueue(new Canned(412, "text/plain", "still skewed".getBytes(),
          Map.of("X-Xiaomi-Timestamp", "1700000000")));
    }
    TalosException e = assertThrows(TalosException.class,
        () -> rpc.topic(TopicService.Client::listTopics));
    assertEquals(412, e.httpStatus());
    assertEquals(2, server.requests().size());
  }

  @Test
  void shouldNotRetryClockSkewWithoutAServerTime() {
    server.enqueue(Canned.text(412, "skewed, no time given"));
    TalosException e = assertThrows(TalosException.class,
        () -> rpc.topic(TopicService.Client::listTopics));
    assertEquals(412, e.httpStatus());
    assertEquals(1, server.requests().size());
    assertEquals(0, rpc.clockOffsetMs());
  }

  @Test
  void shouldReportRefusedConnectionsAsRetriable() throws Exception {
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    try (TalosRpc nowhere = new TalosRpc(server.config().endpoint("http://127.0.0.1:" + port)
        .build())) {
      TalosException e = assertThrows(TalosException.class,
          () -> nowhere.topic(TopicService.Client::listTopics));
      assertTrue(e.isRetriable());
      assertEquals(0, e.httpStatus());
      assertNull(e.errorCode());
      assertInstanceOf(ConnectException.class, e.getCause());
      assertTrue(e.getMessage().startsWith("cannot connect to http://127.0.0.1:" + port),
          e.getMessage());
    }
  }

  @Test
  void shouldReportTimeoutsAsRetriableNamingTheSetting() {
    server.delayResponses(1500);
    try (TalosRpc impatient = new TalosRpc(server.config().requestTimeoutMs(200).build())) {
      TalosException e = assertThrows(TalosException.class,
          () -> impatient.topic(TopicService.Client::listTopics));
      assertTrue(e.isRetriable());
      assertTrue(e.getMessage().contains(TalosClientConfig.REQUEST_TIMEOUT_MS + "=200"),
          e.getMessage());
    }
  }

  @Test
  void shouldReportAnEmptyReplyAsUnreadable() {
    server.enqueue(new Canned(200, THRIFT, new byte[0], Map.of()));
    TalosException e = assertThrows(TalosException.class,
        () -> rpc.topic(TopicService.Client::listTopics));
    assertFalse(e.isRetriable());
    assertTrue(e.getMessage().startsWith("unreadable reply"), e.getMessage());
  }

  @Test
  void shouldRefuseCallsAfterClose() {
    rpc.close();
    assertThrows(IllegalStateException.class, () -> rpc.topic(TopicService.Client::listTopics));
  }

  private static byte[] reply(String method, TBase<?, ?> result) throws Exception {
    TMemoryBuffer buffer = new TMemoryBuffer(64);
    TCompactProtocol p = new TCompactProtocol(buffer);
    p.writeMessageBegin(new TMessage(method, TMessageType.REPLY, 1));
    result.write(p);
    p.writeMessageEnd();
    return java.util.Arrays.copyOf(buffer.getArray(), buffer.length());
  }
}
