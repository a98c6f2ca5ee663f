package io.talos.bench.storage;

import io.talos.server.storage.BlockToAppend;
import io.talos.server.storage.Durability;
import io.talos.server.storage.LogConfig;
import io.talos.server.storage.PartitionLog;
import io.talos.server.storage.PartitionLogs;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One writer appending one block of {@code blockBytes} per call to a {@link PartitionLog} on the
 * local file system: {@code window=0} is the baseline, each call waiting for its flush ({@link
 * PartitionLog#appendPuts}); {@code window=N} pipelines ({@link PartitionLog#appendPutsAsync}),
 * waiting for the oldest append only when N are not yet acknowledged. Time per append, so the
 * pipelined rows show what the writer saves by not waiting for each flush (with SYNC: an fsync).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
@Fork(1)
@State(Scope.Benchmark)
public class PipelinedAppendBenchmark {
  @Param({"FLUSH", "SYNC"})
  public Durability durability;

  @Param({"1024"})
  public int blockBytes;

  @Param({"0", "64"})
  public int window;

  private java.nio.file.Path dir;
  private FileSystem fs;
  private PartitionLog log;
  private List<PartitionLog.Put> put;
  private final ArrayDeque<CompletableFuture<PartitionLog.PutResult[]>> inFlight = new ArrayDeque<>();

  @Setup(Level.Trial)
  public void setUpTrial() throws IOException {
    dir = Files.createTempDirectory("talos-pipelined-bench-");
    fs = PartitionLogs.fileSystemFor(URI.create("file:///"), new Configuration());
    byte[] payload = new byte[blockBytes];
    ThreadLocalRandom.current().nextBytes(payload);
    put = List.of(new PartitionLog.Put(List.of(new BlockToAppend(10, 0, blockBytes, 1_700_000_000_000L, payload)),
        PartitionLog.NO_PRODUCER, -1));
  }

  @Setup(Level.Iteration)
  public void openLog() throws IOException {
    LogConfig config = LogConfig.builder().durability(durability).build();
    log = PartitionLog.open(fs, new Path(dir.resolve("p-" + System.nanoTime()).toUri()), config, Clock.systemUTC());
  }

  @TearDown(Level.Iteration)
  public void deleteLog() throws IOException {
    while (!inFlight.isEmpty()) inFlight.poll().join();
    log.deleteAll();
  }

  @TearDown(Level.Trial)
  public void tearDownTrial() throws IOException {
    fs.close();
    try (Stream<java.nio.file.Path> s = Files.walk(dir)) {
      s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  @Benchmark
  public long append() throws IOException {
    if (window == 0) return log.appendPuts(put, 1_700_000_000_000L)[0].firstOffset();
    if (inFlight.size() >= window) inFlight.poll().join();
    CompletableFuture<PartitionLog.PutResult[]> f = log.appendPutsAsync(put, 1_700_000_000_000L);
    inFlight.add(f);
    return inFlight.size();
  }
}
