package io.talos.server.forward;

import com.codahale.metrics.MetricRegistry;
import io.talos.server.cluster.NodeInfo;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The forwarding side of this node: one {@link PeerClient} per peer, made on first use,
 * replaced when the peer's peer endpoint changes (a restarted node on a new port), and closed
 * (connections and I/O threads) when the peer leaves the membership ({@link #retainMembers}).
 *
 * <p>Thread-safe.
 */
public final class PeerClients implements AutoCloseable {
  private final String localNodeId;
  private final ClusterSecret secret;
  private final PeerClient.Settings settings;
  private final MetricRegistry metrics;
  private final Map<String, PeerClient> clients = new ConcurrentHashMap<>();
  private volatile boolean closed;

  public PeerClients(String localNodeId, ClusterSecret secret, PeerClient.Settings settings, MetricRegistry metrics) {
    this.localNodeId = localNodeId;
    this.secret = secret;
    this.settings = settings;
    this.metrics = metrics;
  }

  /** Sends {@code request} to {@code owner}: see {@link PeerClient#send}. */
  public CompletableFuture<byte[]> forward(NodeInfo owner, ForwardedRequest request, long timeoutMs) {
    if (closed) {
      return CompletableFuture.failedFuture(new PeerException(PeerException.Reason.UNAVAILABLE,
          "this node is shutting down"));
    }
    PeerClient client = clients.compute(owner.id(), (id, existing) -> {
      if (existing != null && existing.peer().peerHost().equals(owner.peerHost())
          && existing.peer().peerPort() == owner.peerPort()) {
        return existing;
      }
      if (existing != null) existing.close();
      return new PeerClient(owner, localNodeId, secret, settings, metrics);
    });
    metrics.meter("forward.sent").mark();
    return client.send(request, timeoutMs);
  }

  /**
   * Closes the pool of every peer not in {@code memberIds} (a node that left the cluster): its
   * requests still waiting fail (retriable): UNAVAILABLE if not sent yet, NO_ANSWER if sent (the
   * node may have served them). A later forward to such a node (it came
   * back) makes a new pool.
   *
   * @return how many pools were closed
   */
  public int retainMembers(Set<String> memberIds) {
    int closedPools = 0;
    for (String id : List.copyOf(clients.keySet())) {
      if (memberIds.contains(id)) continue;
      PeerClient removed = clients.remove(id);
      if (removed != null) {
        removed.close();
        closedPools++;
      }
    }
    return closedPools;
  }

  /** Peers with a client pool now, sorted. */
  public java.util.SortedSet<String> peers() {
    return new java.util.TreeSet<>(clients.keySet());
  }

  @Override
  public void close() {
    closed = true;
    clients.values().forEach(PeerClient::close);
    clients.clear();
  }
}
