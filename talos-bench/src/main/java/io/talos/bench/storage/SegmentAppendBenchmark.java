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
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
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
 * {@link PartitionLog#append} on the local file system (RawLocalFileSystem, as the server's
 * {@code file://} storage) in a temp directory: {@code blocks} blocks of {@code blockBytes} per
 * call, then the flush ({@code FLUSH}: to the OS) or fsync ({@code SYNC}) the durability asks
 * for. FLUSH is the baseline of SYNC; the log is recreated every iteration so that it does not fill
 * the disk. Time per append call.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
@Fork(1)
@State(Scope.Benchmark)
public class SegmentAppendBenchmark {
  @Param({"FLUSH", "SYNC"})
  public Durability durability;

  @Param({"1024", "131072"})
  public int blockBytes;

  @Param({"1", "16"})
  public int blocks;

  private java.nio.file.Path dir;
  private FileSystem fs;
  private PartitionLog log;
  private List<BlockToAppend> batch;

  @Setup(Level.Trial)
  public void setUpTrial() throws IOException {
    dir = Files.createTempDirectory("talos-segment-bench-");
    fs = PartitionLogs.fileSystemFor(URI.create("file:///"), new Configuration());
    batch = new ArrayList<>();
    for (int i = 0; i < blocks; i++) {
      byte[] payload = new byte[blockBytes];
      ThreadLocalRandom.current().nextBytes(payload);
      batch.add(new BlockToAppend(Math.max(1, blockBytes / 100), 0, blockBytes, 1_700_000_000_000L, payload));
    }
  }

  @Setup(Level.Iteration)
  public void openLog() throws IOException {
    LogConfig config = LogConfig.builder().durability(durability).build();
    log = PartitionLog.open(fs, new Path(dir.resolve("p-" + System.nanoTime()).toUri()), config, Clock.systemUTC());
  }

  @TearDown(Level.Iteration)
  public void deleteLog() throws IOException {
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
    return log.append(batch, 1_700_000_000_000L);
  }
}
