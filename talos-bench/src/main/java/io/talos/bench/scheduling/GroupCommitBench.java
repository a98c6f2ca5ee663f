package io.talos.bench.scheduling;

import com.codahale.metrics.Snapshot;
import io.talos.client.TalosClient;
import io.talos.client.TalosClientConfig;
import io.talos.client.producer.SimpleProducer;
import io.talos.server.ServerConfig;
import io.talos.server.TalosServer;
import io.talos.server.scheduling.PoolMetrics;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Group commit, measured over HTTP: many synchronous producers of single 100-byte messages on a
 * few partitions, against an in-process server with group commit off
 * ({@code scheduling.batch.max.count=1}, the baseline) and on (the default 64), for each
 * durability policy, in one run. Prints puts/s, the pool's batch sizes and the put latency.
 *
 * <p>Usage: {@code GroupCommitBench [seconds=6] [threads=32] [partitions=2]}
 */
public final class GroupCommitBench {
  private GroupCommitBench() {}

  public static void main(String[] args) throws Exception {
    int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 6;
    int threads = args.length > 1 ? Integer.parseInt(args[1]) : 32;
    int partitions = args.length > 2 ? Integer.parseInt(args[2]) : 2;
    System.out.printf("| durability | batch.max.count | puts/s | batch mean | batch max | put p50 ms | put p99 ms |%n");
    System.out.printf("|---|---:|---:|---:|---:|---:|---:|%n");
    for (String durability : List.of("flush", "sync")) {
      for (String batch : List.of("1", "64")) {
        run(durability, batch, seconds, threads, partitions);
      }
    }
  }

  private static void run(String durability, String batch, int seconds, int threads, int partitions) throws Exception {
    Path dir = Files.createTempDirectory("talos-groupcommit");
    Properties p = new Properties();
    p.setProperty(ServerConfig.PORT, "0");
    p.setProperty(ServerConfig.DATA_DIR, dir.toString());
    p.setProperty(ServerConfig.STORAGE_DURABILITY, durability);
    p.setProperty(ServerConfig.SCHEDULING_BATCH_MAX_COUNT, batch);
    try (TalosServer server = TalosServer.start(new ServerConfig(p));
        TalosClient client = TalosClient.create(TalosClientConfig.builder().endpoint(server.endpoint().toString())
            .credentialFile(dir.resolve("admin-credential.properties")).build())) {
      client.admin().createTopic("groupcommit", partitions);
      AtomicLong acks = new AtomicLong();
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      List<Future<Object>> done = new java.util.ArrayList<>();
      byte[] message = new byte[100];
      for (int t = 0; t < threads; t++) {
        int partition = t % partitions;
        done.add(pool.submit(() -> {
          SimpleProducer producer = client.producer("groupcommit", partition);
          while (System.nanoTime() < end) {
            producer.put(List.of(message));
            acks.incrementAndGet();
          }
          return null;
        }));
      }
      for (Future<Object> f : done) f.get();
      pool.shutdown();
      Snapshot batches = server.metrics().histogram(PoolMetrics.BATCH_SIZE).getSnapshot();
      Snapshot latency = server.metrics().timer("requests.message.putMessage").getSnapshot();
      System.out.printf("| %s | %s | %.0f | %.2f | %d | %.2f | %.2f |%n", durability, batch, acks.get() / (double) seconds,
          batches.getMean(), batches.getMax(), latency.getMedian() / 1e6, latency.get99thPercentile() / 1e6);
    }
  }
}
