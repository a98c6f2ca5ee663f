package io.talos.server.forward;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.codahale.metrics.MetricRegistry;
import io.talos.server.cluster.NodeInfo;
import io.talos.server.cluster.NodeState;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The pools per peer against real peer ports: a pool is made on first use, and closed, with its
 * waiting requests failed (NO_ANSWER once sent), when the membership no longer lists its node.
 */
class PeerClientsTest {
  private static final ClusterSecret SECRET = new ClusterSecret("peer-clients-test-secret");

  private static ForwardedRequest request(String body) {
    byte[] b = body.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    return new ForwardedRequest("k", "o", false, true, null, 0, "message", "putMessage", b, b.length);
  }

  @Test
  void shouldCloseThePoolsOfNodesThatLeftTheMembership() throws Exception {
    java.util.concurrent.ConcurrentLinkedQueue<Consumer<byte[]>> held = new java.util.concurrent.ConcurrentLinkedQueue<>();
    try (PeerServer stays = new PeerServer("127.0.0.1", 0, 1, 1 << 20, 2000, SECRET,
            (r, reply) -> reply.accept(r.body()), new MetricRegistry());
        PeerServer leaves = new PeerServer("127.0.0.1", 0, 1, 1 << 20, 2000, SECRET,
            (r, reply) -> held.add(reply), new MetricRegistry());
        PeerClients clients = new PeerClients("a", SECRET, new PeerClient.Settings(1, 1, 100, true, 5000, 1 << 20),
            new MetricRegistry())) {
      NodeInfo b = new NodeInfo("b", "http://127.0.0.1:0", "127.0.0.1", stays.port(), NodeState.ACTIVE, 1);
      NodeInfo c = new NodeInfo("c", "http://127.0.0.1:0", "127.0.0.1", leaves.port(), NodeState.ACTIVE, 1);
      assertEquals("ok", new String(clients.forward(b, request("ok"), 10_000).get(10, TimeUnit.SECONDS)));
      CompletableFuture<byte[]> waiting = clients.forward(c, request("never answered"), 60_000);
      while (held.isEmpty()) Thread.sleep(10); // it reached c
      assertEquals(Set.of("b", "c"), clients.peers());

      assertEquals(0, clients.retainMembers(Set.of("a", "b", "c")), "nobody left");
      assertEquals(1, clients.retainMembers(Set.of("a", "b")), "c left: its pool is closed");
      assertEquals(Set.of("b"), clients.peers());
      ExecutionException e = assertThrows(ExecutionException.class, () -> waiting.get(10, TimeUnit.SECONDS));
      // It was sent: c may have served it, so the caller is not told "nothing was done".
      assertEquals(PeerException.Reason.NO_ANSWER, assertInstanceOf(PeerException.class, e.getCause()).reason());
      // b's pool was kept and still works; c coming back gets a new pool.
      assertEquals("again", new String(clients.forward(b, request("again"), 10_000).get(10, TimeUnit.SECONDS)));
      clients.forward(c, request("back"), 60_000);
      assertEquals(List.of("b", "c"), List.copyOf(clients.peers()));
    }
  }
}
