package io.talos.bench.codec;

import io.talos.client.codec.CompressionType;
import io.talos.client.codec.MessageBlockDecoder;
import io.talos.client.codec.MessageBlockEncoder;
import io.talos.client.consumer.ConsumedMessage;
import io.talos.thrift.MessageBlock;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
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
 * The client's message-block codec ({@link MessageBlockEncoder} / {@link MessageBlockDecoder}) per
 * compression type: a block of {@code messages} messages of {@code messageBytes} each, encoded
 * (serialize + compress) and decoded (decompress + parse). NONE is the baseline of SNAPPY and GZIP.
 * Payloads are JSON-like text with random numbers, compressible about as much as real events.
 * Time per block; divide by {@code messages} for a message.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
@Fork(1)
@State(Scope.Benchmark)
public class MessageBlockCodecBenchmark {
  @Param({"NONE", "SNAPPY", "GZIP"})
  public CompressionType compression;

  @Param({"100", "1024"})
  public int messageBytes;

  @Param({"100"})
  public int messages;

  private List<byte[]> payloads;
  private MessageBlock encoded;

  @Setup
  public void setUp() {
    payloads = new ArrayList<>(messages);
    Random random = new Random(42);
    for (int i = 0; i < messages; i++) payloads.add(jsonLike(random, messageBytes));
    encoded = MessageBlockEncoder.encode(payloads, compression, 1_700_000_000_000L);
    encoded.setStartMessageOffset(1000);
  }

  static byte[] jsonLike(Random random, int size) {
    StringBuilder sb = new StringBuilder(size + 64);
    while (sb.length() < size) {
      sb.append("{\"user\":").append(random.nextInt(1_000_000)).append(",\"event\":\"click\",\"ts\":")
          .append(1_700_000_000_000L + random.nextInt(1_000_000)).append('}');
    }
    return sb.substring(0, size).getBytes(StandardCharsets.UTF_8);
  }

  @Benchmark
  public MessageBlock encode() {
    return MessageBlockEncoder.encode(payloads, compression, 1_700_000_000_000L);
  }

  @Benchmark
  public List<ConsumedMessage> decode() {
    return MessageBlockDecoder.decode(encoded);
  }
}
