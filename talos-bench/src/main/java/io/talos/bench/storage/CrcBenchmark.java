package io.talos.bench.storage;

import io.talos.server.storage.BlockToAppend;
import io.talos.server.storage.CorruptRecordException;
import io.talos.server.storage.RecordFormat;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The record checksum: CRC32C (what {@link RecordFormat} stores) beside CRC32 (the baseline, the
 * older polynomial), and what the log does per record with it: {@link RecordFormat#encode} (header
 * + copy + CRC) on append and {@link RecordFormat#verifyCrc} on read. Time per record of
 * {@code bytes} payload bytes.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
@Fork(1)
@State(Scope.Benchmark)
public class CrcBenchmark {
  @Param({"100", "4096", "131072"})
  public int bytes;

  private byte[] payload;
  private BlockToAppend block;
  private byte[] record;
  private byte[] scratch;

  @Setup
  public void setUp() {
    payload = new byte[bytes];
    ThreadLocalRandom.current().nextBytes(payload);
    block = new BlockToAppend(10, 0, bytes, 1_700_000_000_000L, payload);
    record = new byte[RecordFormat.recordLength(bytes)];
    RecordFormat.encode(record, 0, 0, 1_700_000_000_000L, block);
    scratch = new byte[record.length];
  }

  @Benchmark
  public long crc32c() {
    CRC32C c = new CRC32C();
    c.update(payload, 0, payload.length);
    return c.getValue();
  }

  @Benchmark
  public long crc32Baseline() {
    CRC32 c = new CRC32();
    c.update(payload, 0, payload.length);
    return c.getValue();
  }

  @Benchmark
  public int encodeRecord() {
    return RecordFormat.encode(scratch, 0, 12345, 1_700_000_000_000L, block);
  }

  @Benchmark
  public byte[] verifyRecord() throws CorruptRecordException {
    RecordFormat.verifyCrc(record, 0, record.length);
    return record;
  }
}
