package io.talos.bench.forward;

import io.talos.client.TalosClientConfig;
import io.talos.client.internals.TalosRpc;
import io.talos.client.producer.SimpleProducer;
import io.talos.common.TopicNames;
import io.talos.server.ServerConfig;
import io.talos.server.TalosServer;
import io.talos.server.auth.AdminCredentials;
import io.talos.server.cluster.NodeInfo;
import io.talos.server.cluster.NodeState;
import io.talos.server.cluster.PartitionRouting;
import io.talos.server.metadata.Credential;
import io.talos.server.metadata.MvStoreMetadataStore;
import io.talos.server.metadata.TopicRecord;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * Cost of forwarding, in one run on one machine: three nodes in this JVM on one storage root,
 * every partition owned by node {@code owner}. Closed-loop producers put 1 KiB batches (one
 * 1 KiB message per put) (1) to the owner, (2) to a node that forwards with the merged send
 * ({@code cluster.peer.client.merge=true}), (3) to a node that forwards one frame per request
 * (merge=false). The three are run in turn, {@code rounds} times, so that load from other
 * processes on the machine falls on all of them alike; the report gives puts/s, client-side
 * latency and the ratios against the owner.
 *
 * <p>The nodes' routing answers version 0, so our SDK keeps sending to the node it is pointed at
 * (no direct routing): that is what is measured.
 *
 * <p>Usage: {@code ForwardingBench [secondsPerCell=5] [threads=16] [partitions=4] [rounds=3]}
 */
public final class ForwardingBench {
  private static final String TOPIC = "forwarding";
  private static final Credential SHARED = new Credential("TKFORWARDBENCH01", "forwarding-bench-shared-secret",
      AdminCredentials.ADMIN_OWNER, true);

  private ForwardingBench() {}

  /** Every partition on one owner, whose NodeInfo is known once it has started; version 0 (see the class doc). */
  private static final class OwnerRef implements PartitionRouting {
    final String id;
    volatile NodeInfo owner;

    OwnerRef(String id) {
      this.id = id;
    }

    @Override
    public Route route(String topicName, int partitionId) {
      return new Route(owner.id().equals(id) ? Route.Kind.LOCAL : Route.Kind.PEER, owner);
    }

    @Override
    public long version() {
      return 0;
    }

    @Override
    public NodeInfo localNode() {
      return new NodeInfo(id, "http://127.0.0.1:0", "127.0.0.1", 0, NodeState.ACTIVE, 1);
    }
  }

  public static void main(String[] args) throws Exception {
    int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
    int threads = args.length > 1 ? Integer.parseInt(args[1]) : 16;
    int partitions = args.length > 2 ? Integer.parseInt(args[2]) : 4;
    int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 3;
    Path root = Files.createTempDirectory("talos-forwarding");
    TopicRecord topic = new TopicRecord(TOPIC, TopicNames.resourceName(AdminCredentials.ADMIN_OWNER, TOPIC,
        "0123456789abcdef"), AdminCredentials.ADMIN_OWNER, partitions, 86_400, Map.of(), System.currentTimeMillis(), 0);
    OwnerRef rOwner = new OwnerRef("owner");
    OwnerRef rMerged = new OwnerRef("merged");
    OwnerRef rSingle = new OwnerRef("single");
    try (TalosServer owner = start(root, "owner", topic, rOwner, true);
        TalosServer merged = start(root, "merged", topic, rMerged, true);
        TalosServer single = start(root, "single", topic, rSingle, false)) {
      NodeInfo ownerNode = new NodeInfo("owner", owner.endpoint().toString(), "127.0.0.1", owner.peerPort(),
          NodeState.ACTIVE, 1);
      for (OwnerRef r : List.of(rOwner, rMerged, rSingle)) r.owner = ownerNode;
      List<String> names = List.of("to the owner", "via a non-owner, merged send", "via a non-owner, one frame per request");
      List<TalosServer> targets = List.of(owner, merged, single);
      Histogram[] latency = new Histogram[3];
      long[] puts = new long[3];
      for (int i = 0; i < 3; i++) latency[i] = new Histogram(3);
      // Warm-up: one short cell each.
      for (int i = 0; i < 3; i++) cell(targets.get(i), topic, 1, threads, partitions);
      for (int round = 0; round < rounds; round++) {
        for (int i = 0; i < 3; i++) {
          Cell c = cell(targets.get(i), topic, seconds, threads, partitions);
          latency[i].add(c.latency);
          puts[i] += c.puts;
        }
      }
      double frames = merged.metrics().meter("forward.peer.frames.sent").getCount();
      double perFrame = merged.metrics().histogram("forward.peer.frame.requests").getSnapshot().getMean();
      System.out.printf("%d threads, %d partitions, 1 KiB per put, %d rounds x %d s per cell, %d cores%n",
          threads, partitions, rounds, seconds, Runtime.getRuntime().availableProcessors());
      System.out.printf("| path | puts/s | mean ms | p50 ms | p99 ms | puts/s vs owner | mean latency vs owner |%n");
      System.out.printf("|---|---:|---:|---:|---:|---:|---:|%n");
      double base = puts[0] / (double) (rounds * seconds);
      for (int i = 0; i < 3; i++) {
        double rate = puts[i] / (double) (rounds * seconds);
        System.out.printf("| %s | %.0f | %.2f | %.2f | %.2f | %.2f | %.2f |%n", names.get(i), rate,
            latency[i].getMean() / 1e6, latency[i].getValueAtPercentile(50) / 1e6,
            latency[i].getValueAtPercentile(99) / 1e6, rate / base, latency[i].getMean() / latency[0].getMean());
      }
      System.out.printf("merged send: %.0f frames, %.2f requests per frame on average%n", frames, perFrame);
    }
  }

  private record Cell(long puts, Histogram latency) {}

  private static Cell cell(TalosServer target, TopicRecord topic, int seconds, int threads, int partitions)
      throws Exception {
    ConcurrentHistogram latency = new ConcurrentHistogram(3);
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<Future<Long>> done = new ArrayList<>();
    byte[] message = new byte[1024];
    try (TalosRpc rpc = new TalosRpc(TalosClientConfig.builder().endpoint(target.endpoint().toString())
        .credentials(SHARED.secretKeyId(), SHARED.secretKey()).build())) {
      for (int t = 0; t < threads; t++) {
        int partition = t % partitions;
        done.add(pool.submit(() -> {
          SimpleProducer producer = new SimpleProducer(rpc, TOPIC, topic.resourceName(), partition);
          long n = 0;
          while (System.nanoTime() < end) {
            long start = System.nanoTime();
            producer.put(List.of(message));
            latency.recordValue(System.nanoTime() - start);
            n++;
          }
          return n;
        }));
      }
      long total = 0;
      for (Future<Long> f : done) total += f.get();
      return new Cell(total, latency);
    } finally {
      pool.shutdown();
    }
  }

  private static TalosServer start(Path root, String node, TopicRecord topic, PartitionRouting routing, boolean merge)
      throws Exception {
    Path dir = root.resolve(node);
    MvStoreMetadataStore store = MvStoreMetadataStore.open(dir.resolve("metadata"));
    try {
      store.createTopic(topic);
      store.putCredentialIfAbsent(SHARED);
    } finally {
      store.close();
    }
    Properties p = new Properties();
    p.setProperty(ServerConfig.PORT, "0");
    p.setProperty(ServerConfig.OPS_PORT, "-1");
    p.setProperty(ServerConfig.DATA_DIR, dir.toString());
    p.setProperty(ServerConfig.STORAGE_ROOT_URI, root.resolve("shared").toUri().toString());
    p.setProperty(ServerConfig.CLUSTER_PEER_PORT, "0");
    p.setProperty(ServerConfig.CLUSTER_PEER_HOST, "127.0.0.1");
    p.setProperty(ServerConfig.CLUSTER_PEER_SECRET, "forwarding-bench-cluster-secret");
    p.setProperty(ServerConfig.CLUSTER_PEER_CLIENT_MERGE, Boolean.toString(merge));
    return TalosServer.start(new ServerConfig(p), routing);
  }
}
