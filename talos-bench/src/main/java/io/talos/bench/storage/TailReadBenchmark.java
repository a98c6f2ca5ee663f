package io.talos.bench.storage;

import io.talos.server.storage.BlockToAppend;
import io.talos.server.storage.LogConfig;
import io.talos.server.storage.PartitionLog;
import io.talos.server.storage.PartitionLogs;
import io.talos.server.storage.StoredBlock;
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
 * {@link PartitionLog#read} as a consumer at the tail does it, on the local file system: a log of
 * 1,000 blocks of {@code blockBytes}, each appended alone (one batch, as puts arriving one at a
 * time are), read from the offset {@code behind} blocks before the end up to the end. With the
 * default index interval (4 KiB) the sparse index places a read up to that many bytes before the
 * offset. Run with {@code -prof gc}: the bytes per read are the read buffer and the blocks.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(1)
@State(Scope.Benchmark)
public class TailReadBenchmark {
  private static final int BLOCKS = 1_000;

  @Param({"1024"})
  public int blockBytes;

  /** 1: the newest block (a consumer that keeps up); 100: a consumer 100 blocks behind. */
  @Param({"1", "100"})
  public int behind;

  private java.nio.file.Path dir;
  private FileSystem fs;
  private PartitionLog log;
  private long from;

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    dir = Files.createTempDirectory("talos-tail-read-bench-");
    fs = PartitionLogs.fileSystemFor(URI.create("file:///"), new Configuration());
    log = PartitionLog.open(fs, new Path(dir.resolve("p").toUri()), LogConfig.builder().build(), Clock.systemUTC());
    for (int i = 0; i < BLOCKS; i++) {
      byte[] payload = new byte[blockBytes];
      ThreadLocalRandom.current().nextBytes(payload);
      log.append(List.of(new BlockToAppend(1, 0, blockBytes, 1_700_000_000_000L, payload)), 1_700_000_000_000L);
    }
    from = log.endOffset() - behind;
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    log.close();
    fs.close();
    try (Stream<java.nio.file.Path> s = Files.walk(dir)) {
      s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  @Benchmark
  public List<StoredBlock> read() throws Exception {
    return log.read(from, Integer.MAX_VALUE, 1 << 20);
  }
}
