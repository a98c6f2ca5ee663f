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
 * {@link PartitionLog#append} of 128 KiB blocks on the local file system with {@code
 * durability=flush}, the page cache left to the kernel ({@code windowBytes=0}, the baseline) or
 * with the drop-behind keeping {@code windowBytes} of the file cached (the server's default, 32
 * MiB). Unlike {@link SegmentAppendBenchmark} the log is kept for the whole trial, as a server keeps
 * its data: each trial writes several GB (about 8 GB at 1 GB/s), so that the baseline runs into the
 * cost of fresh page-cache pages that a long-running server meets, and the disk needs that much
 * room. Time per 128 KiB append.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 1, time = 2)
@Measurement(iterations = 6, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class PageCacheDropBehindBenchmark {
  @Param({"0", "33554432"})
  public long windowBytes;

  private java.nio.file.Path dir;
  private FileSystem fs;
  private PartitionLog log;
  private List<BlockToAppend> batch;

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    dir = Files.createTempDirectory(java.nio.file.Path.of(System.getProperty("java.io.tmpdir")), "talos-dropbehind-bench-");
    fs = PartitionLogs.fileSystemFor(URI.create("file:///"), new Configuration(), windowBytes, false);
    byte[] payload = new byte[128 * 1024];
    ThreadLocalRandom.current().nextBytes(payload);
    batch = List.of(new BlockToAppend(128, 0, payload.length, 1_700_000_000_000L, payload));
    LogConfig config = LogConfig.builder().durability(Durability.FLUSH).build();
    log = PartitionLog.open(fs, new Path(dir.resolve("p").toUri()), config, Clock.systemUTC());
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    log.deleteAll();
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
