package io.talos.bench.storage;

import io.talos.server.storage.BlockToAppend;
import io.talos.server.storage.Durability;
import io.talos.server.storage.LogConfig;
import io.talos.server.storage.PartitionLog;
import io.talos.server.storage.PartitionLogs;
import io.talos.server.storage.StoredBlock;
import io.talos.server.storage.TailCache;
import java.io.File;
import java.net.URI;
import java.nio.file.Files;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.MiniDFSCluster;

/**
 * Put and get throughput and latency of one {@link PartitionLog} on the local file system
 * (baseline) and on a MiniDFSCluster (1 NameNode + 1 DataNode in this JVM, replication 1), in the
 * same run with the same workload. Puts: {@code puts} appends of one block of {@code blockBytes},
 * one after the other, each acknowledged after hflush (or hsync with {@code sync}). Gets: the whole
 * log read back from offset 0 in reads of up to {@code readMessages} messages, with the tail cache
 * off (every read goes to the file system: positioned reads through the sparse index), then a
 * consumer at the tail (one read after each append) with a 64 MiB tail cache.
 *
 * <pre>
 * java -cp ... io.talos.bench.storage.StorageBackendBenchmark [puts=20000] [blockBytes=1024]
 *     [readMessages=100] [durability=flush|sync] [rounds=2]
 * </pre>
 *
 * Prints one line per backend and round, and the hdfs/local ratios of the last round.
 */
public final class StorageBackendBenchmark {
  record Result(String backend, double putsPerSec, double putMBps, double putP50Us, double putP99Us,
      double putP999Us, double getMBps, double getP50Us, double getP99Us, double tailP50Us, double tailP99Us) {}

  private StorageBackendBenchmark() {}

  public static void main(String[] args) throws Exception {
    int puts = intArg(args, "puts", 20_000);
    int blockBytes = intArg(args, "blockBytes", 1024);
    int readMessages = intArg(args, "readMessages", 100);
    int rounds = intArg(args, "rounds", 2);
    int partitions = intArg(args, "partitions", 1);
    int window = intArg(args, "window", 0);
    Durability durability = Durability.valueOf(strArg(args, "durability", "flush").toUpperCase(Locale.ROOT));
    LogConfig config = LogConfig.builder().durability(durability).segmentBytes(64L * 1024 * 1024).build();

    File base = Files.createTempDirectory("talos-storage-bench").toFile();
    Configuration conf = new Configuration();
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, new File(base, "dfs").getPath());
    conf.setInt("dfs.replication", 1);
    conf.setBoolean("dfs.namenode.http.enabled", false);
    MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf).numDataNodes(1).build();
    try {
      cluster.waitActive();
      System.out.printf("puts=%d blockBytes=%d readMessages=%d durability=%s rounds=%d partitions=%d window=%d%n",
          puts, blockBytes, readMessages, durability, rounds, partitions, window);
      if (partitions > 1) {
        concurrentPuts(cluster, conf, base, config, puts, blockBytes, partitions, window, rounds);
        return;
      }
      Result local = null;
      Result hdfs = null;
      for (int round = 1; round <= rounds; round++) {
        try (FileSystem fs = PartitionLogs.fileSystemFor(URI.create("file:///"), new Configuration())) {
          local = run("local", fs, new Path(new File(base, "local-" + round).toURI()), config, puts, blockBytes,
              readMessages);
        }
        try (FileSystem fs = FileSystem.newInstance(cluster.getURI(), conf)) {
          hdfs = run("hdfs", fs, new Path("/bench-" + round), config, puts, blockBytes, readMessages);
        }
        print(round, local);
        print(round, hdfs);
      }
      System.out.printf(Locale.ROOT, "ratio hdfs/local (last round): put throughput %.2f, put p50 %.2f, put p99 %.2f,"
          + " get throughput %.2f, get p50 %.2f, get p99 %.2f, tail get p50 %.2f, tail get p99 %.2f%n",
          hdfs.putsPerSec() / local.putsPerSec(), hdfs.putP50Us() / local.putP50Us(),
          hdfs.putP99Us() / local.putP99Us(), hdfs.getMBps() / local.getMBps(), hdfs.getP50Us() / local.getP50Us(),
          hdfs.getP99Us() / local.getP99Us(), hdfs.tailP50Us() / local.tailP50Us(),
          hdfs.tailP99Us() / local.tailP99Us());
    } finally {
      cluster.shutdown(true);
    }
  }

  static Result run(String name, FileSystem fs, Path dir, LogConfig config, int puts, int blockBytes,
      int readMessages) throws Exception {
    Random rnd = new Random(1);
    byte[] payload = new byte[blockBytes];
    rnd.nextBytes(payload);
    long[] putNs = new long[puts];
    long bytes = 0;
    long start;
    long putElapsedNs;
    try (PartitionLog log = PartitionLog.open(fs, dir, config, Clock.systemUTC())) {
      start = System.nanoTime();
      for (int i = 0; i < puts; i++) {
        long t = System.nanoTime();
        log.append(List.of(new BlockToAppend(10, 0, blockBytes, -1, payload)), System.currentTimeMillis());
        putNs[i] = System.nanoTime() - t;
        bytes += blockBytes;
      }
      putElapsedNs = System.nanoTime() - start;
    }

    // cold reads through the index: the log reopened, no cache
    List<Long> getNs = new ArrayList<>();
    long readBytes = 0;
    long getElapsedNs;
    try (PartitionLog log = PartitionLog.open(fs, dir, config, Clock.systemUTC())) {
      long offset = 0;
      start = System.nanoTime();
      while (offset < log.endOffset()) {
        long t = System.nanoTime();
        List<StoredBlock> got = log.read(offset, readMessages, 8 * 1024 * 1024);
        getNs.add(System.nanoTime() - t);
        for (StoredBlock b : got) readBytes += b.payloadLength();
        offset = got.get(got.size() - 1).nextOffset();
      }
      getElapsedNs = System.nanoTime() - start;
    }

    // a consumer at the tail: one read after each append, served by the tail cache
    int tailPuts = Math.min(puts, 5000);
    long[] tailNs = new long[tailPuts];
    try (PartitionLog log = PartitionLog.open(fs, new Path(dir.getParent(), dir.getName() + "-tail"), config, Clock.systemUTC(),
        new TailCache(64L * 1024 * 1024))) {
      for (int i = 0; i < tailPuts; i++) {
        long offset = log.endOffset();
        log.append(List.of(new BlockToAppend(10, 0, blockBytes, -1, payload)), System.currentTimeMillis());
        long t = System.nanoTime();
        log.read(offset, readMessages, 8 * 1024 * 1024);
        tailNs[i] = System.nanoTime() - t;
      }
    }
    long[] gets = getNs.stream().mapToLong(Long::longValue).toArray();
    return new Result(name, puts / (putElapsedNs / 1e9), bytes / 1e6 / (putElapsedNs / 1e9),
        pct(putNs, 0.5), pct(putNs, 0.99), pct(putNs, 0.999), readBytes / 1e6 / (getElapsedNs / 1e9),
        pct(gets, 0.5), pct(gets, 0.99), pct(tailNs, 0.5), pct(tailNs, 0.99));
  }

  /**
   * The put phase only, {@code partitions} logs written at once, one writer thread per log, {@code
   * puts} appends in all (split evenly); local and hdfs alternate per round.
   */
  private static void concurrentPuts(MiniDFSCluster cluster, Configuration conf, File base, LogConfig config,
      int puts, int blockBytes, int partitions, int window, int rounds) throws Exception {
    double local = 0;
    double hdfs = 0;
    for (int round = 1; round <= rounds; round++) {
      try (FileSystem fs = PartitionLogs.fileSystemFor(URI.create("file:///"), new Configuration())) {
        local = concurrentRun(fs, new Path(new File(base, "plocal-" + round).toURI()), config, puts, blockBytes,
            partitions, window);
      }
      try (FileSystem fs = FileSystem.newInstance(cluster.getURI(), conf)) {
        hdfs = concurrentRun(fs, new Path("/pbench-" + round), config, puts, blockBytes, partitions, window);
      }
      System.out.printf(Locale.ROOT, "round %d partitions=%d window=%d put local %8.0f/s hdfs %8.0f/s ratio %.3f%n",
          round, partitions, window, local, hdfs, hdfs / local);
    }
  }

  /** Appends per second over all partitions, from the first append to the last acknowledgement. */
  private static double concurrentRun(FileSystem fs, Path root, LogConfig config, int puts, int blockBytes,
      int partitions, int window) throws Exception {
    byte[] payload = new byte[blockBytes];
    new Random(1).nextBytes(payload);
    List<PartitionLog> logs = new ArrayList<>();
    for (int p = 0; p < partitions; p++) logs.add(PartitionLog.open(fs, new Path(root, "p" + p), config, Clock.systemUTC()));
    int perPartition = puts / partitions;
    java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
    List<Thread> writers = new ArrayList<>();
    java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic.AtomicReference<>();
    for (PartitionLog log : logs) {
      Thread t = new Thread(() -> {
        try {
          go.await();
          writeAll(log, payload, perPartition, window);
        } catch (Throwable e) {
          failure.compareAndSet(null, e);
        }
      }, "bench-writer-" + writers.size());
      writers.add(t);
      t.start();
    }
    long start = System.nanoTime();
    go.countDown();
    for (Thread t : writers) t.join();
    long elapsedNs = System.nanoTime() - start;
    for (PartitionLog log : logs) {
      if (log.endOffset() != perPartition * 10L && failure.get() == null) {
        failure.set(new IllegalStateException(log.dir() + " ends at " + log.endOffset()));
      }
      log.close();
    }
    if (failure.get() != null) throw new IllegalStateException("a writer failed", failure.get());
    return partitions * (double) perPartition / (elapsedNs / 1e9);
  }

  /**
   * One writer: with {@code window} 0 each append waits for its flush ({@link PartitionLog#append});
   * else appends are pipelined ({@link PartitionLog#appendPutsAsync}) with at most {@code window}
   * not yet acknowledged, and the writer waits only when the window is full.
   */
  private static void writeAll(PartitionLog log, byte[] payload, int count, int window) throws Exception {
    List<PartitionLog.Put> put = List.of(new PartitionLog.Put(
        List.of(new BlockToAppend(10, 0, payload.length, -1, payload)), PartitionLog.NO_PRODUCER, -1));
    if (window == 0) {
      for (int i = 0; i < count; i++) log.appendPuts(put, System.currentTimeMillis());
      return;
    }
    java.util.concurrent.Semaphore inFlight = new java.util.concurrent.Semaphore(window);
    java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic.AtomicReference<>();
    long expected = log.endOffset();
    for (int i = 0; i < count && failure.get() == null; i++) {
      inFlight.acquire();
      long first = expected;
      expected += 10;
      log.appendPutsAsync(put, System.currentTimeMillis()).whenComplete((r, e) -> {
        if (e != null) failure.compareAndSet(null, e);
        else if (r[0].firstOffset() != first) {
          failure.compareAndSet(null, new IllegalStateException("acknowledged at " + r[0].firstOffset()
              + ", expected " + first));
        }
        inFlight.release();
      });
    }
    inFlight.acquire(window);
    if (failure.get() != null) throw new IllegalStateException("an append failed", failure.get());
  }

  private static double pct(long[] ns, double q) {
    long[] sorted = ns.clone();
    Arrays.sort(sorted);
    return sorted[(int) Math.min(sorted.length - 1, Math.floor(q * sorted.length))] / 1000.0;
  }

  private static void print(int round, Result r) {
    System.out.printf(Locale.ROOT, "round %d %-5s put %8.0f/s %6.1f MB/s p50 %7.1f us p99 %7.1f us p999 %8.1f us |"
        + " get %7.1f MB/s p50 %7.1f us p99 %7.1f us | tail get p50 %6.1f us p99 %6.1f us%n", round, r.backend(),
        r.putsPerSec(), r.putMBps(), r.putP50Us(), r.putP99Us(), r.putP999Us(), r.getMBps(), r.getP50Us(),
        r.getP99Us(), r.tailP50Us(), r.tailP99Us());
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
