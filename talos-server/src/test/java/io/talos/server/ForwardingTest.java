package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.codahale.metrics.MetricRegistry;
import io.talos.common.TopicNames;
import io.talos.common.errors.ErrorCodes;
import io.talos.server.auth.AdminCredentials;
import io.talos.server.cluster.NodeInfo;
import io.talos.server.cluster.NodeState;
import io.talos.server.forward.ClusterSecret;
import io.talos.server.forward.ForwardedRequest;
import io.talos.server.forward.PeerClient;
import io.talos.server.forward.PeerException;
import io.talos.server.forward.PeerFrames;
import io.talos.server.metadata.MvStoreMetadataStore;
import io.talos.server.metadata.TopicRecord;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.MessageBlock;
import io.talos.thrift.MessageCompressionType;
import io.talos.thrift.MessageService;
import io.talos.thrift.PutMessageRequest;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicTalosResourceName;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three nodes in one JVM on one shared storage root, each with its own metadata store seeded with
 * the same topic, and a fixed routing: partitions 0 and 1 are a's, 2 is b's, 3 is owned by a node
 * that is down, 4 by a node that accepts connections but never answers, 5 by nobody. Requests sent
 * to a node that does not own the partition are forwarded over the peer port and served by the
 * owner's task pool; what cannot be forwarded is answered with a retriable error, never a hang.
 */
class ForwardingTest {
  static final String SECRET = "forwarding-test-cluster-secret";
  @TempDir
  static Path tmp;
  static TalosServer a;
  static TalosServer b;
  static TalosServer c;
  static ServerSocket silent;
  static FixedRouting ra;
  static FixedRouting rb;
  static FixedRouting rc;
  static final String TOPIC = "fwd";
  static final io.talos.server.metadata.Credential SHARED = new io.talos.server.metadata.Credential(
      "TKSHAREDFORWARDING1", "shared-forwarding-test-secret-key", AdminCredentials.ADMIN_OWNER, true);
  static TopicRecord topic;

  @BeforeAll
  static void start() throws Exception {
    topic = new TopicRecord(TOPIC, TopicNames.resourceName(AdminCredentials.ADMIN_OWNER, TOPIC, "0123456789abcdef"),
        AdminCredentials.ADMIN_OWNER, 8, 86_400, Map.of(), System.currentTimeMillis(), 0);
    ra = new FixedRouting("a");
    rb = new FixedRouting("b");
    rc = new FixedRouting("c");
    a = start("a", ra);
    b = start("b", rb);
    c = start("c", rc);
    silent = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
    int downPort;
    try (ServerSocket s = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
      downPort = s.getLocalPort(); // closed again: nothing listens there
    }
    NodeInfo na = FixedRouting.node("a", a);
    NodeInfo nb = FixedRouting.node("b", b);
    NodeInfo down = new NodeInfo("down", "http://127.0.0.1:1", "127.0.0.1", downPort, NodeState.ACTIVE, 1);
    NodeInfo mute = new NodeInfo("mute", "http://127.0.0.1:1", "127.0.0.1", silent.getLocalPort(), NodeState.ACTIVE, 1);
    for (FixedRouting r : List.of(ra, rb, rc)) {
      r.own(0, na);
      r.own(1, na);
      r.own(2, nb);
      r.own(3, down);
      r.own(4, mute);
      r.own(6, na);
    }
    // c alone believes a owns partition 2 (a stale map): what a forwards from c it must refuse.
    rc.own(2, na);
  }

  private static TalosServer start(String node, FixedRouting routing) throws Exception {
    Path dir = tmp.resolve(node);
    MvStoreMetadataStore store = MvStoreMetadataStore.open(dir.resolve("metadata"));
    try {
      store.createTopic(topic);
      // What a shared metadata store gives a real cluster: every node knows every credential.
      store.putCredentialIfAbsent(SHARED);
    } finally {
      store.close();
    }
    return TalosServer.start(new ServerConfig(TestServers.props(dir,
        ServerConfig.STORAGE_ROOT_URI, tmp.resolve("shared").toUri().toString(),
        ServerConfig.CLUSTER_PEER_PORT, "0", ServerConfig.CLUSTER_PEER_HOST, "127.0.0.1",
        ServerConfig.CLUSTER_PEER_SECRET, SECRET,
        ServerConfig.CLUSTER_PEER_CONNECT_TIMEOUT_MS, "1500",
        ServerConfig.CLUSTER_PEER_REQUEST_TIMEOUT_MS, "6000")), routing);
  }

  @AfterAll
  static void stop() throws IOException {
    for (AutoCloseable s : new AutoCloseable[] {a, b, c, silent}) {
      try {
        if (s != null) s.close();
      } catch (Exception e) {
        // next
      }
    }
  }

  static TopicAndPartition tap(int partition) {
    return new TopicAndPartition(TOPIC, new TopicTalosResourceName(topic.resourceName()), partition);
  }

  static long count(TalosServer s, String meter) {
    return s.metrics().meter(meter).getCount();
  }

  @Test
  void putsAndGetsThroughANonOwnerAreServedByTheOwner() throws Exception {
    RawApi viaB = RestartTest.api(b);
    long servedBefore = count(a, "forward.served");
    long sentBefore = count(b, "forward.sent");
    SortedMap<Long, String> acknowledged = new TreeMap<>();
    for (int i = 0; i < 5; i++) acknowledged.put(viaB.put(tap(0), List.of("m" + i)), "m" + i);
    assertEquals(List.of(0L, 1L, 2L, 3L, 4L), List.copyOf(acknowledged.keySet()));
    assertEquals(5, count(a, "forward.served") - servedBefore, "a served every forwarded put");
    assertEquals(5, count(b, "forward.sent") - sentBefore);
    assertEquals(acknowledged, RestartTest.api(a).readAll(tap(0), 0), "the owner stored them");
    assertEquals(acknowledged, viaB.readAll(tap(0), 0), "and reads through b are forwarded too");
    // The owner served a forwarded request through its own task pool path (its timer).
    assertTrue(a.metrics().timer("forwarded.message.putMessage").getCount() >= 5);
    // Put at the owner: served locally, nothing forwarded.
    long sentByA = count(a, "forward.sent");
    assertEquals(5, RestartTest.api(a).put(tap(0), List.of("local")));
    assertEquals(sentByA, count(a, "forward.sent"));
  }

  @Test
  void aForwardedRequestIsNeverForwardedAgain() throws Exception {
    // c thinks a owns partition 2; a routes it to b, yet must refuse instead of forwarding again.
    long refusedBefore = count(a, "forward.refused.not.owner");
    long sentByABefore = count(a, "forward.sent");
    GalaxyTalosException e = assertThrows(GalaxyTalosException.class, () -> RestartTest.api(c).put(tap(2), List.of("x")));
    assertEquals(ErrorCode.PARTITION_NOT_SERVING, e.getErrorCode(), e.getErrMsg());
    assertTrue(e.getErrMsg().contains("never forwarded again"), e.getErrMsg());
    assertEquals(1, count(a, "forward.refused.not.owner") - refusedBefore);
    assertEquals(sentByABefore, count(a, "forward.sent"), "a forwarded nothing");
    // b, the real owner, serves it directly.
    assertEquals(0, RestartTest.api(b).put(tap(2), List.of("y")));
  }

  @Test
  void aPartitionNobodyServesIsRefusedAtOnce() {
    GalaxyTalosException e = assertThrows(GalaxyTalosException.class, () -> RestartTest.api(b).put(tap(5), List.of("x")));
    assertEquals(ErrorCode.PARTITION_NOT_SERVING, e.getErrorCode());
    assertTrue(ErrorCodes.isRetriable(e.getErrorCode()));
  }

  @Test
  void anOwnerThatIsDownOrMuteGivesRetriableErrorsQuickly() {
    assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
      GalaxyTalosException down = assertThrows(GalaxyTalosException.class,
          () -> RestartTest.api(b).put(tap(3), List.of("x")));
      assertEquals(ErrorCode.PARTITION_NOT_SERVING, down.getErrorCode(), down.getErrMsg());
      assertTrue(down.getErrMsg().contains("unreachable"), down.getErrMsg());
      // Accepts TCP, never says HELLO: the connect timeout (1.5 s, well before the request timeout) answers, nothing was sent.
      GalaxyTalosException mute = assertThrows(GalaxyTalosException.class,
          () -> RestartTest.api(b).put(tap(4), List.of("x")));
      assertEquals(ErrorCode.PARTITION_NOT_SERVING, mute.getErrorCode(), mute.getErrMsg());
      // Other peers are not held up by the dead ones.
      RestartTest.api(b).put(tap(1), List.of("still served"));
    });
  }

  @Test
  void thePeerPortRefusesAWrongSecret() throws Exception {
    long refusedBefore = count(a, "forward.peer.connections.refused");
    NodeInfo na = FixedRouting.node("a", a);
    try (PeerClient client = new PeerClient(na, "intruder", new ClusterSecret("not-the-cluster-secret!"),
        new PeerClient.Settings(1, 1, 10, true, 2000, 1 << 20), new MetricRegistry())) {
      ExecutionException e = assertThrows(ExecutionException.class, () -> client.send(putRequest(0, "intruder"), 5000)
          .get(10, TimeUnit.SECONDS));
      assertInstanceOf(PeerException.class, e.getCause());
      assertEquals(PeerException.Reason.UNAVAILABLE, ((PeerException) e.getCause()).reason(), e.getCause().getMessage());
    }
    assertEquals(1, count(a, "forward.peer.connections.refused") - refusedBefore);
    // The right secret with the same client code is served.
    try (PeerClient client = new PeerClient(na, "test", new ClusterSecret(SECRET),
        new PeerClient.Settings(1, 1, 10, true, 2000, 1 << 20), new MetricRegistry())) {
      byte[] reply = client.send(putRequest(1, "friend"), 5000).get(10, TimeUnit.SECONDS);
      MessageService.putMessage_result r = RawApi.reply(reply, new MessageService.putMessage_result());
      assertTrue(r.isSetSuccess(), String.valueOf(r));
    }
  }

  @Test
  void thePeerPortClosesOversizedFramesBeforeReadingThem() throws Exception {
    int port = a.peerPort();
    // Before the handshake: anything longer than a PROOF closes the connection.
    try (Socket s = new Socket("127.0.0.1", port)) {
      s.setSoTimeout(5000);
      DataInputStream in = new DataInputStream(s.getInputStream());
      assertEquals(1 + PeerFrames.CHALLENGE_BYTES, in.readInt());
      in.skipNBytes(1 + PeerFrames.CHALLENGE_BYTES);
      DataOutputStream out = new DataOutputStream(s.getOutputStream());
      out.writeInt(PeerFrames.HANDSHAKE_MAX_FRAME_BYTES + 1);
      out.write(new byte[64]);
      out.flush();
      assertEquals(-1, in.read(), "closed");
    }
    // After a good handshake: a length prefix over cluster.peer.max.frame.bytes closes it too.
    try (Socket s = new Socket("127.0.0.1", port)) {
      s.setSoTimeout(5000);
      DataInputStream in = new DataInputStream(s.getInputStream());
      in.readInt();
      assertEquals(PeerFrames.HELLO, in.readByte());
      byte[] challenge = in.readNBytes(PeerFrames.CHALLENGE_BYTES);
      byte[] id = "raw".getBytes(StandardCharsets.UTF_8);
      DataOutputStream out = new DataOutputStream(s.getOutputStream());
      out.writeInt(1 + 2 + id.length + 32);
      out.writeByte(PeerFrames.PROOF);
      out.writeShort(id.length);
      out.write(id);
      out.write(new ClusterSecret(SECRET).proof(challenge, "raw"));
      out.flush();
      assertEquals(1, in.readInt());
      assertEquals(PeerFrames.WELCOME, in.readByte());
      out.writeInt(a.config().getInt(ServerConfig.CLUSTER_PEER_MAX_FRAME_BYTES) + 1);
      out.write(new byte[64]);
      out.flush();
      assertEquals(-1, in.read(), "closed");
    }
  }

  @Test
  void theOfficialSdkPointedAtANonOwnerWorksThroughForwarding() throws Exception {
    java.util.Properties props = new java.util.Properties();
    props.setProperty("galaxy.talos.service.endpoint", c.endpoint().toString());
    com.xiaomi.infra.galaxy.rpc.thrift.Credential credential = new com.xiaomi.infra.galaxy.rpc.thrift.Credential()
        .setType(com.xiaomi.infra.galaxy.rpc.thrift.UserType.APP_SECRET)
        .setSecretKeyId(c.adminCredential().secretKeyId()).setSecretKey(c.adminCredential().secretKey());
    com.xiaomi.infra.galaxy.talos.thrift.TopicAndPartition tp = new com.xiaomi.infra.galaxy.talos.thrift.TopicAndPartition(
        TOPIC, new com.xiaomi.infra.galaxy.talos.thrift.TopicTalosResourceName(topic.resourceName()), 1);
    long servedBefore = count(a, "forward.served");
    com.xiaomi.infra.galaxy.talos.producer.SimpleProducer producer = new com.xiaomi.infra.galaxy.talos.producer.SimpleProducer(
        new com.xiaomi.infra.galaxy.talos.producer.TalosProducerConfig(props), tp, credential);
    List<com.xiaomi.infra.galaxy.talos.thrift.Message> batch = new java.util.ArrayList<>();
    for (int i = 0; i < 20; i++) {
      batch.add(new com.xiaomi.infra.galaxy.talos.thrift.Message(ByteBuffer.wrap(("sdk-" + i).getBytes(StandardCharsets.UTF_8))));
    }
    producer.putMessageList(batch);
    com.xiaomi.infra.galaxy.talos.consumer.SimpleConsumer consumer = new com.xiaomi.infra.galaxy.talos.consumer.SimpleConsumer(
        new com.xiaomi.infra.galaxy.talos.consumer.TalosConsumerConfig(props), tp, credential);
    List<String> got = new java.util.ArrayList<>();
    for (var m : consumer.fetchMessage(0, 100)) {
      got.add(new String(m.getMessage().getMessage(), StandardCharsets.UTF_8));
    }
    assertTrue(got.containsAll(batch.stream().map(m -> new String(m.getMessage(), StandardCharsets.UTF_8)).toList()),
        got.toString());
    assertTrue(count(a, "forward.served") - servedBefore >= 2, "the put and the fetch were served by the owner a");
  }

  @Test
  void getScheduleInfoAnswersThePartitionMapWithItsVersion() throws Exception {
    io.talos.thrift.ClusterService.getScheduleInfo_result r = RestartTest.api(c).call("cluster", "getScheduleInfo",
        new io.talos.thrift.ClusterService.getScheduleInfo_args(new io.talos.thrift.GetScheduleInfoRequest(TOPIC)),
        new io.talos.thrift.ClusterService.getScheduleInfo_result());
    assertTrue(r.isSetSuccess(), String.valueOf(r));
    assertEquals(rc.version(), r.getSuccess().getVersion());
    TreeMap<Integer, String> owners = new TreeMap<>();
    for (io.talos.thrift.PartitionOwner o : r.getSuccess().getOwners()) owners.put(o.getPartitionId(), o.getNodeId());
    assertEquals(Map.of(0, "a", 1, "a", 2, "a", 3, "down", 4, "mute"), owners.headMap(6), "5 is served by nobody");
    assertTrue(owners.containsKey(6) && !owners.containsKey(7), owners.toString());
    assertEquals(a.endpoint().toString(), r.getSuccess().getOwners().get(0).getApiUrl());
    io.talos.thrift.ClusterService.getScheduleInfo_result unknown = RestartTest.api(c).call("cluster", "getScheduleInfo",
        new io.talos.thrift.ClusterService.getScheduleInfo_args(new io.talos.thrift.GetScheduleInfoRequest("nope")),
        new io.talos.thrift.ClusterService.getScheduleInfo_result());
    assertEquals(ErrorCode.TOPIC_NOT_EXIST, unknown.getE().getErrorCode());
  }

  @Test
  void ourSdkRoutesStraightToTheOwnerAndRefreshesOnPartitionNotServing() throws Exception {
    io.talos.client.internals.TalosRpc rpc = new io.talos.client.internals.TalosRpc(io.talos.client.TalosClientConfig
        .builder().endpoint(c.endpoint().toString()).credentials(SHARED.secretKeyId(), SHARED.secretKey()).build());
    try {
      io.talos.client.producer.SimpleProducer producer = new io.talos.client.producer.SimpleProducer(rpc, TOPIC,
          topic.resourceName(), 6);
      long sentByC = count(c, "forward.sent");
      long servedByA = count(a, "forward.served");
      long putsAtA = a.metrics().timer("requests.message.putMessage").getCount();
      producer.put(List.of("direct-1".getBytes(StandardCharsets.UTF_8)));
      producer.put(List.of("direct-2".getBytes(StandardCharsets.UTF_8)));
      assertEquals(sentByC, count(c, "forward.sent"), "c forwarded nothing: the client went to a itself");
      assertEquals(servedByA, count(a, "forward.served"));
      assertEquals(2, a.metrics().timer("requests.message.putMessage").getCount() - putsAtA, "a served both directly");

      // Partition 6 moves to b; a learns it first and stops serving it.
      NodeInfo nb = FixedRouting.node("b", b);
      ra.unassign(6);
      rb.own(6, nb);
      rc.own(6, nb);
      io.talos.client.TalosException stale = assertThrows(io.talos.client.TalosException.class,
          () -> producer.put(List.of("stale".getBytes(StandardCharsets.UTF_8))));
      assertEquals(ErrorCode.PARTITION_NOT_SERVING, stale.errorCode(), stale.getMessage());
      long putsAtB = b.metrics().timer("requests.message.putMessage").getCount();
      producer.put(List.of("direct-3".getBytes(StandardCharsets.UTF_8)));
      assertEquals(1, b.metrics().timer("requests.message.putMessage").getCount() - putsAtB,
          "after PARTITION_NOT_SERVING the client fetched the new map and went to b directly");
      assertEquals(sentByC, count(c, "forward.sent"));
      assertEquals(List.of("direct-1", "direct-2", "direct-3"), List.copyOf(RestartTest.api(b).readAll(tap(6), 0).values()));
    } finally {
      rpc.close();
    }
  }

  /** A putMessage of one message to {@code partition}, as a forwarding node would send it. */
  static ForwardedRequest putRequest(int partition, String text) throws Exception {
    byte[] payload = RawApi.noneBlock(text.getBytes(StandardCharsets.UTF_8));
    MessageBlock block = new MessageBlock(0, 1, MessageCompressionType.NONE, ByteBuffer.wrap(payload));
    byte[] body = RawApi.call("putMessage", new MessageService.putMessage_args(
        new PutMessageRequest(tap(partition), List.of(block), 1, "fwd#" + System.nanoTime())));
    return new ForwardedRequest("key", AdminCredentials.ADMIN_OWNER, true, true, null, 0, "message", "putMessage",
        body, body.length);
  }
}
