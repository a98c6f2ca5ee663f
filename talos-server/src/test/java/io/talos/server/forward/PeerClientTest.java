package io.talos.server.forward;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.codahale.metrics.MetricRegistry;
import io.talos.server.cluster.NodeInfo;
import io.talos.server.cluster.NodeState;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * A client pool against a real peer port whose calls answer when the test says: merged frames,
 * an owner that never answers (NO_ANSWER at the timeout), a connection that breaks with requests
 * in flight (NO_ANSWER at once), and the pending limit (OVERLOADED, nothing sent).
 */
class PeerClientTest {
  private static final ClusterSecret SECRET = new ClusterSecret("peer-client-test-secret");

  private static NodeInfo node(PeerServer server) {
    return new NodeInfo("owner", "http://127.0.0.1:0", "127.0.0.1", server.port(), NodeState.ACTIVE, 1);
  }

  private static ForwardedRequest request(String body) {
    byte[] b = body.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    return new ForwardedRequest("k", "o", false, true, null, 0, "message", "putMessage", b, b.length);
  }

  private static PeerException failure(CompletableFuture<byte[]> f) {
    ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(20, TimeUnit.SECONDS));
    return assertInstanceOf(PeerException.class, e.getCause());
  }

  @Test
  void theMergedSendPacksEverythingQueuedIntoOneFrame() throws Exception {
    MetricRegistry serverMetrics = new MetricRegistry();
    try (PeerServer server = new PeerServer("127.0.0.1", 0, 1, 1 << 20, 2000, SECRET,
        (r, reply) -> reply.accept(r.body()), serverMetrics)) {
      MetricRegistry metrics = new MetricRegistry();
      PeerClient client = new PeerClient(node(server), "a", SECRET, new PeerClient.Settings(1, 1, 100, true, 5000, 1 << 20),
          metrics, false);
      try {
        List<CompletableFuture<byte[]>> futures = new ArrayList<>();
        for (int i = 0; i < 20; i++) futures.add(client.send(request("r" + i), 10_000));
        assertEquals(20, client.runOnce(0), "one round takes everything queued");
        for (int i = 0; i < 20; i++) assertArrayEquals(("r" + i).getBytes(), futures.get(i).get(20, TimeUnit.SECONDS));
        assertEquals(1, metrics.meter("forward.peer.frames.sent").getCount(), "20 requests in one frame");
        assertEquals(1, serverMetrics.meter("forward.peer.frames.received").getCount());
        assertEquals(0, client.runOnce(0), "nothing left");
      } finally {
        client.close();
      }
    }
  }

  /**
   * Closing the pool (a stopping node past its drain timeout, a peer that left) fails a request
   * already written NO_ANSWER (the owner may still serve it) and only one never written UNAVAILABLE
   * (nothing was done, safe to retry).
   */
  @Test
  void closeFailsASentRequestNoAnswerAndAnUnsentOneUnavailable() throws Exception {
    ConcurrentLinkedQueue<Consumer<byte[]>> held = new ConcurrentLinkedQueue<>();
    try (PeerServer server = new PeerServer("127.0.0.1", 0, 1, 1 << 20, 2000, SECRET, (r, reply) -> held.add(reply),
        new MetricRegistry())) {
      PeerClient client = new PeerClient(node(server), "a", SECRET, new PeerClient.Settings(1, 1, 100, true, 5000, 1 << 20),
          new MetricRegistry(), false);
      try {
        CompletableFuture<byte[]> sent = client.send(request("sent"), 60_000);
        assertEquals(1, client.runOnce(0));
        while (held.isEmpty()) Thread.sleep(10); // it reached the owner
        CompletableFuture<byte[]> queued = client.send(request("queued"), 60_000); // no send round: never written
        client.close();
        PeerException sentFailure = failure(sent);
        assertEquals(PeerException.Reason.NO_ANSWER, sentFailure.reason(), sentFailure.getMessage());
        assertTrue(sentFailure.getMessage().contains("may or may not have been served"), sentFailure.getMessage());
        assertEquals(PeerException.Reason.UNAVAILABLE, failure(queued).reason());
      } finally {
        client.close();
      }
    }
  }

  @Test
  void noAnswerFailsAtTheTimeoutAndABrokenConnectionAtOnce() throws Exception {
    ConcurrentLinkedQueue<Consumer<byte[]>> held = new ConcurrentLinkedQueue<>();
    PeerServer server = new PeerServer("127.0.0.1", 0, 1, 1 << 20, 2000, SECRET, (r, reply) -> held.add(reply),
        new MetricRegistry());
    try (PeerClient client = new PeerClient(node(server), "a", SECRET,
        new PeerClient.Settings(1, 1, 2, true, 5000, 1 << 20), new MetricRegistry())) {
      PeerException timedOut = failure(client.send(request("late"), 300));
      assertEquals(PeerException.Reason.NO_ANSWER, timedOut.reason(), timedOut.getMessage());

      CompletableFuture<byte[]> first = client.send(request("one"), 60_000);
      CompletableFuture<byte[]> second = client.send(request("two"), 60_000);
      PeerException overloaded = failure(client.send(request("three"), 60_000));
      assertEquals(PeerException.Reason.OVERLOADED, overloaded.reason(), overloaded.getMessage());

      while (held.size() < 3) Thread.sleep(10); // both reached the owner (plus the late one)
      server.close(); // the owner goes away with two requests in flight
      assertEquals(PeerException.Reason.NO_ANSWER, failure(first).reason());
      assertEquals(PeerException.Reason.NO_ANSWER, failure(second).reason());
      // And a new request to the closed port: never sent.
      assertEquals(PeerException.Reason.UNAVAILABLE, failure(client.send(request("four"), 60_000)).reason());
    } finally {
      server.close();
    }
  }
}
