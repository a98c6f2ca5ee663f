package io.talos.bench.service;

import io.talos.client.codec.CompressionType;
import io.talos.client.codec.MessageBlockEncoder;
import io.talos.server.service.MessageBlockValidator;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.MessageBlock;
import io.talos.thrift.MessageCompressionType;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
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
 * The put path's check of an uncompressed block's message framing ({@link MessageBlockValidator}),
 * on a block of {@code messages} SDK messages of {@code messageBytes} bytes. {@code validateInPlace}:
 * the payload read where it lies in the request body, as the server does now. Baseline {@code
 * validateCopyAndStream}: the payload copied out of the decoded struct (the generated getter) and
 * walked through {@code DataInputStream}/{@code ByteArrayInputStream}, as the server did before.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
@Fork(1)
@State(Scope.Thread)
public class BlockValidationBenchmark {
  @Param({"1", "100", "1000"})
  public int messages;

  @Param({"100", "1024"})
  public int messageBytes;

  private MessageBlockValidator validator;
  private MessageBlock block;
  private byte[] body;
  private int offset;
  private int length;

  @Setup
  public void setUp() {
    List<byte[]> payloads = new ArrayList<>();
    for (int i = 0; i < messages; i++) {
      byte[] p = new byte[messageBytes];
      ThreadLocalRandom.current().nextBytes(p);
      payloads.add(p);
    }
    MessageBlock encoded = MessageBlockEncoder.encode(payloads, CompressionType.NONE, 1_700_000_000_000L);
    byte[] payload = encoded.getMessageBlock();
    // As decoded from a request: a slice of a larger body.
    body = new byte[payload.length + 200];
    offset = 150;
    length = payload.length;
    System.arraycopy(payload, 0, body, offset, length);
    block = new MessageBlock(encoded);
    block.messageBlock = ByteBuffer.wrap(body, offset, length);
    validator = new MessageBlockValidator(MessageBlockValidator.Mode.FULL, 10 * 1024 * 1024, 21L * 1024 * 1024);
  }

  @Benchmark
  public int validateInPlace() throws GalaxyTalosException {
    validator.validate(0, messages, MessageCompressionType.NONE, body, offset, length);
    return length;
  }

  @Benchmark
  public int validateCopyAndStream() throws IOException {
    byte[] payload = new byte[length];
    System.arraycopy(body, offset, payload, 0, length); // the getter's copy (it made two)
    int seen = 0;
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(payload))) {
      for (; seen < messages; seen++) {
        int first = in.readUnsignedByte();
        if (first == 'V') {
          in.readUnsignedShort();
          in.readUnsignedByte();
          in.skipNBytes(8 + 2);
          in.skipNBytes(in.readShort());
        } else {
          int b1 = in.readUnsignedByte();
          int b2 = in.readUnsignedByte();
          int b3 = in.readUnsignedByte();
          in.skipNBytes((first << 24) | (b1 << 16) | (b2 << 8) | b3);
        }
        in.skipNBytes(in.readInt());
      }
      if (in.read() != -1) throw new IOException("trailing bytes");
    }
    return seen;
  }
}
