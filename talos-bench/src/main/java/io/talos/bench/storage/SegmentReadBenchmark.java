package io.talos.bench.storage;

import io.talos.server.storage.BlockToAppend;
import io.talos.server.storage.LogConfig;
import io.talos.server.storage.PartitionLog;
import io.talos.server.storage.PartitionLogs;
import io.talos.server.storage.ReadBufferPool;
import io.talos.server.storage.ReadLease;
import io.talos.server.storage.StoredBlock;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
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
 * A getMessage read of a consumer that is behind (the read-back of the load benchmark), from the
 * segment file to bytes in a direct buffer that the socket write takes, on the local file system
 * (the file stays in the page cache: the benchmark measures the copies, not the disk).
 *
 * <ul>
 *   <li>{@code heapThenStaged} (the baseline, the server before): {@link PartitionLog#read} into
 *       heap arrays (a new zeroed one per refill, filled through the JDK's temporary direct
 *       buffer), then every block copied into a 64 KiB direct staging buffer as the reply write
 *       does for heap parts.</li>
 *   <li>{@code pooledDirect} (the server now): the read under a {@link ReadLease}, into pooled
 *       1 MiB direct buffers that the file channel fills itself; the reply write sends them as
 *       they are (nothing to copy here), and the lease goes back to the pool.</li>
 * </ul>
 *
 * A log of 48 MiB of {@code blockBytes} blocks (the load benchmark's producer batch is 128 KiB);
 * each read takes {@code replyBytes} from a random block. Run with {@code -prof gc}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(1)
@State(Scope.Benchmark)
public class SegmentReadBenchmark {
  private static final long LOG_BYTES = 48L * 1024 * 1024;
  private static final int STAGE_BYTES = 64 * 1024;

  @Param({"131072"})
  public int blockBytes;

  @Param({"2097152"})
  public int replyBytes;

  private java.nio.file.Path dir;
  private FileSystem fs;
  private PartitionLog log;
  private final ReadBufferPool pool = new ReadBufferPool(16L * ReadBufferPool.BUFFER_BYTES);
  private final ByteBuffer staging = ByteBuffer.allocateDirect(STAGE_BYTES);
  private long lastStart;

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    dir = Files.createTempDirectory("talos-segment-read-bench-");
    fs = PartitionLogs.fileSystemFor(URI.create("file:///"), new Configuration());
    log = PartitionLog.open(fs, new Path(dir.resolve("p").toUri()), LogConfig.builder().build(), Clock.systemUTC());
    List<BlockToAppend> batch = new ArrayList<>();
    for (long written = 0; written < LOG_BYTES; written += blockBytes) {
      byte[] payload = new byte[blockBytes];
      ThreadLocalRandom.current().nextBytes(payload);
      batch.add(new BlockToAppend(100, 0, blockBytes, 1_700_000_000_000L, payload));
      if (batch.size() == 8) {
        log.append(batch, 1_700_000_000_000L);
        batch.clear();
      }
    }
    if (!batch.isEmpty()) log.append(batch, 1_700_000_000_000L);
    lastStart = log.endOffset() - 100L * (replyBytes / blockBytes + 1);
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    log.close();
    fs.close();
    try (Stream<java.nio.file.Path> s = Files.walk(dir)) {
      s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  private long randomOffset() {
    return ThreadLocalRandom.current().nextLong(lastStart);
  }

  @Benchmark
  public long heapThenStaged() throws Exception {
    long sent = 0;
    for (StoredBlock b : log.read(randomOffset(), Integer.MAX_VALUE, replyBytes)) {
      ByteBuffer payload = b.payloadBuffer();
      while (payload.hasRemaining()) {
        staging.clear();
        int n = Math.min(staging.remaining(), payload.remaining());
        staging.put(payload.slice(payload.position(), n));
        payload.position(payload.position() + n);
        sent += n;
      }
    }
    return sent;
  }

  @Benchmark
  public long pooledDirect() throws Exception {
    ReadLease lease = new ReadLease(pool);
    try {
      long sent = 0;
      for (StoredBlock b : log.read(randomOffset(), Integer.MAX_VALUE, replyBytes, lease)) {
        sent += b.payloadLength(); // written to the socket from where it lies
      }
      return sent;
    } finally {
      lease.release();
    }
  }
}
