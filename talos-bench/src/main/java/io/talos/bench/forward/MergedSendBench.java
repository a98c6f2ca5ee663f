package io.talos.bench.forward;

import com.codahale.metrics.MetricRegistry;
import io.talos.server.cluster.NodeInfo;
import io.talos.server.cluster.NodeState;
import io.talos.server.forward.ClusterSecret;
import io.talos.server.forward.ForwardedRequest;
import io.talos.server.forward.PeerClient;
import io.talos.server.forward.PeerServer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * The peer transport alone, merged send vs one frame per request: a {@link PeerServer} whose
 * calls answer at once (the request's own bytes as the reply), and a {@link PeerClient} with
 * {@code merge} on or off, driven by closed-loop threads sending 1 KiB requests. Storage and HTTP
 * are left out so that only the forwarding hop is measured. The two modes run in turn,
 * {@code rounds} times, in one process.
 *
 * <p>Usage: {@code MergedSendBench [secondsPerCell=5] [threads=64] [rounds=3]}
 */
public final class MergedSendBench {
  private MergedSendBench() {}

  public static void main(String[] args) throws Exception {
    int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
    int threads = args.length > 1 ? Integer.parseInt(args[1]) : 64;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
    ClusterSecret secret = new ClusterSecret("merged-send-bench-secret");
    MetricRegistry serverMetrics = new MetricRegistry();
    try (PeerServer server = new PeerServer("127.0.0.1", 0, 1, 64 << 20, 2000, secret,
        (request, reply) -> reply.accept(request.body()), serverMetrics)) {
      NodeInfo peer = new NodeInfo("owner", "http://127.0.0.1:0", "127.0.0.1", server.port(), NodeState.ACTIVE, 1);
      Histogram[] latency = {new Histogram(3), new Histogram(3)};
      long[] ops = new long[2];
      double[] perFrame = new double[2];
      for (int round = -1; round < rounds; round++) { // round -1: warm-up
        for (int m = 0; m < 2; m++) {
          MetricRegistry metrics = new MetricRegistry();
          try (PeerClient client = new PeerClient(peer, "sender", secret,
              new PeerClient.Settings(1, 2, 100_000, m == 0, 2000, 64 << 20), metrics)) {
            ConcurrentHistogram h = new ConcurrentHistogram(3);
            long n = run(client, round < 0 ? 1 : seconds, threads, h);
            if (round >= 0) {
              ops[m] += n;
              latency[m].add(h);
              perFrame[m] = metrics.histogram("forward.peer.frame.requests").getSnapshot().getMean();
            }
          }
        }
      }
      System.out.printf("%d threads, 1 KiB requests, %d rounds x %d s per cell, %d cores%n", threads, rounds, seconds,
          Runtime.getRuntime().availableProcessors());
      System.out.printf("| send | requests/s | mean ms | p50 ms | p99 ms | requests per frame |%n");
      System.out.printf("|---|---:|---:|---:|---:|---:|%n");
      String[] names = {"merged send", "one frame per request"};
      for (int m = 0; m < 2; m++) {
        System.out.printf("| %s | %.0f | %.3f | %.3f | %.3f | %.1f |%n", names[m], ops[m] / (double) (rounds * seconds),
            latency[m].getMean() / 1e6, latency[m].getValueAtPercentile(50) / 1e6,
            latency[m].getValueAtPercentile(99) / 1e6, perFrame[m]);
      }
      System.out.printf("merged vs one frame per request: throughput x%.2f, mean latency x%.2f%n",
          ops[0] / (double) ops[1], latency[0].getMean() / latency[1].getMean());
    }
  }

  private static long run(PeerClient client, int seconds, int threads, ConcurrentHistogram latency) throws Exception {
    byte[] body = new byte[1024];
    ForwardedRequest request = new ForwardedRequest("key", "owner", false, true, null, 0, "message", "putMessage",
        body, body.length);
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<Long>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        done.add(pool.submit(() -> {
          long n = 0;
          while (System.nanoTime() < end) {
            long start = System.nanoTime();
            client.send(request, 10_000).get();
            latency.recordValue(System.nanoTime() - start);
            n++;
          }
          return n;
        }));
      }
      long total = 0;
      for (Future<Long> f : done) total += f.get();
      return total;
    } finally {
      pool.shutdown();
    }
  }
}
