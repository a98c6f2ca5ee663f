package io.talos.bench.storage;

import io.talos.server.storage.BlockToAppend;
import io.talos.server.storage.Durability;
import io.talos.server.storage.LogConfig;
import io.talos.server.storage.PartitionLog;
import io.talos.server.storage.PartitionLogs;
import java.io.File;
import java.net.URI;
import java.nio.file.Files;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.MiniDFSCluster;

/**
 * Put throughput of {@code partitions} {@link PartitionLog}s written concurrently, one writer
 * thread per partition, on the local file system and on a MiniDFSCluster (1 NameNode + 1 DataNode
 * in this JVM, replication 1), in the same run, in two modes:
 *
 * <ul>
 *   <li>{@code sequential}: {@link PartitionLog#append}, each put waits for its own hflush before
 *       the writer writes the next (how the server appends one group after the other);
 *   <li>{@code pipelined}: {@link PartitionLog#appendAsync} with up to {@code window} puts in
 *       flight per partition: the writer writes the next group while the previous flush is in
 *       flight, each put acknowledged when the flush covering it returned.
 * </ul>
 *
 * <pre>
 * java -cp ... io.talos.bench.storage.ConcurrentAppendBenchmark [partitions=16] [puts=4000]
 *     [blockBytes=1024] [window=32] [durability=flush|sync] [rounds=2]
 * </pre>
 *
 * {@code puts} per partition. Prints put/s per backend and mode and the hdfs/local ratios.
 */
public final class ConcurrentAppendBenchmark {
  private ConcurrentAppendBenchmark() {}

  public static void main(String[] args) throws Exception {
    int partitions = intArg(args, "partitions", 16);
    int puts = intArg(args, "puts", 4000);
    int blockBytes = intArg(args, "blockBytes", 1024);
    int window = intArg(args, "window", 32);
    int rounds = intArg(args, "rounds", 2);
    Durability durability = Durability.valueOf(strArg(args, "durability", "flush").toUpperCase(Locale.ROOT));
    LogConfig config = LogConfig.builder().durability(durability).segmentBytes(64L * 1024 * 1024).build();

    File base = Files.createTempDirectory("talos-concurrent-append-bench").toFile();
    Configuration conf = new Configuration();
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, new File(base, "dfs").getPath());
    conf.setInt("dfs.replication", 1);
    conf.setBoolean("dfs.namenode.http.enabled", false);
    MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf).numDataNodes(1).build();
    try {
      cluster.waitActive();
      System.out.printf("partitions=%d puts=%d/partition blockBytes=%d window=%d durability=%s rounds=%d%n",
          partitions, puts, blockBytes, window, durability, rounds);
      double[][] last = new double[2][2]; // [mode][local, hdfs]
      for (int round = 1; round <= rounds; round++) {
        for (int mode = 0; mode < 2; mode++) {
          String name = mode == 0 ? "sequential" : "pipelined";
          int w = mode == 0 ? 1 : window;
          double local;
          try (FileSystem fs = PartitionLogs.fileSystemFor(URI.create("file:///"), new Configuration())) {
            local = run(fs, new Path(new File(base, "local-" + round + "-" + name).toURI()), config, partitions,
                puts, blockBytes, mode == 1, w);
          }
          double hdfs;
          try (FileSystem fs = FileSystem.newInstance(cluster.getURI(), conf)) {
            hdfs = run(fs, new Path("/bench-" + round + "-" + name), config, partitions, puts, blockBytes, mode == 1, w);
          }
          last[mode][0] = local;
          last[mode][1] = hdfs;
          System.out.printf(Locale.ROOT, "round %d %-10s local %9.0f put/s  hdfs %9.0f put/s  hdfs/local %.2f%n",
              round, name, local, hdfs, hdfs / local);
        }
      }
      System.out.printf(Locale.ROOT, "last round: hdfs/local sequential %.2f, pipelined %.2f; pipelined/sequential"
          + " local %.2f, hdfs %.2f%n", last[0][1] / last[0][0], last[1][1] / last[1][0], last[1][0] / last[0][0],
          last[1][1] / last[0][1]);
    } finally {
      cluster.shutdown(true);
    }
  }

  /** Puts per second over all partitions. */
  static double run(FileSystem fs, Path dir, LogConfig config, int partitions, int puts, int blockBytes,
      boolean pipelined, int window) throws Exception {
    byte[] payload = new byte[blockBytes];
    new Random(1).nextBytes(payload);
    List<PartitionLog> logs = new ArrayList<>();
    for (int p = 0; p < partitions; p++) {
      logs.add(PartitionLog.open(fs, new Path(dir, Integer.toString(p)), config, Clock.systemUTC()));
    }
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<Thread> writers = new ArrayList<>();
    for (PartitionLog log : logs) {
      writers.add(new Thread(() -> {
        try {
          List<BlockToAppend> block = List.of(new BlockToAppend(10, 0, blockBytes, -1, payload));
          if (!pipelined) {
            for (int i = 0; i < puts; i++) log.append(block, System.currentTimeMillis());
            return;
          }
          Semaphore inFlight = new Semaphore(window);
          CompletableFuture<?> lastPut = CompletableFuture.completedFuture(null);
          for (int i = 0; i < puts; i++) {
            inFlight.acquire();
            lastPut = log.appendAsync(block, System.currentTimeMillis()).whenComplete((o, e) -> {
              if (e != null) failure.compareAndSet(null, e);
              inFlight.release();
            });
          }
          lastPut.join(); // acknowledged in order: the last one after all others
        } catch (Exception e) {
          failure.compareAndSet(null, e);
        }
      }));
    }
    long start = System.nanoTime();
    writers.forEach(Thread::start);
    for (Thread t : writers) t.join();
    long elapsed = System.nanoTime() - start;
    for (PartitionLog log : logs) log.close();
    if (failure.get() != null) throw new IllegalStateException("a put failed", failure.get());
    return (double) partitions * puts / (elapsed / 1e9);
  }

  private static int intArg(String[] args, String key, int def) {
    String v = strArg(args, key, null);
    return v == null ? def : Integer.parseInt(v);
  }

  private static String strArg(String[] args, String key, String def) {
    for (String a : args) {
      if (a.startsWith(key + "=")) return a.substring(key.length() + 1);
    }
    return def;
  }
}
