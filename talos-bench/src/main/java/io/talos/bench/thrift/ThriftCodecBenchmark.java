package io.talos.bench.thrift;

import io.talos.client.codec.CompressionType;
import io.talos.client.codec.MessageBlockEncoder;
import io.talos.server.frontend.ExactSizeEncoder;
import io.talos.thrift.GetMessageResponse;
import io.talos.thrift.MessageService;
import io.talos.thrift.MessageBlock;
import io.talos.thrift.PutMessageRequest;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicTalosResourceName;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.thrift.TDeserializer;
import org.apache.thrift.TException;
import org.apache.thrift.TSerializer;
import org.apache.thrift.protocol.TCompactProtocol;
import org.apache.thrift.protocol.TMessage;
import org.apache.thrift.protocol.TMessageType;
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
 * Thrift compact encoding and decoding of the two hot messages, {@code PutMessageRequest} (what a
 * producer sends) and {@code GetMessageResponse} (what a consumer receives), each carrying one
 * uncompressed block of {@code messages} messages of {@code messageBytes} bytes. The message block
 * is opaque bytes to Thrift, so the cost is the envelope plus one copy of the block.
 * {@code encodeGetReplyExact} is the server's encoding of every reply but getMessage's ({@code
 * ExactSizeEncoder}: counted, then written once into an exact-size array); its baseline is {@code
 * encodeGetResponse} ({@code TSerializer}: a growing buffer, then a trimmed copy). A getMessage
 * reply is gathered instead: see {@code GetReplyWriteBenchmark}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
@Fork(1)
@State(Scope.Benchmark)
public class ThriftCodecBenchmark {
  @Param({"1", "100"})
  public int messages;

  @Param({"100", "1024"})
  public int messageBytes;

  private PutMessageRequest put;
  private GetMessageResponse get;
  private byte[] putBytes;
  private byte[] getBytes;
  private TSerializer serializer;
  private TDeserializer deserializer;
  private MessageService.getMessage_result getResult;
  private static final TMessage REPLY_HEADER = new TMessage("getMessage", TMessageType.REPLY, 1);

  @Setup
  public void setUp() throws TException {
    List<byte[]> payloads = new ArrayList<>();
    for (int i = 0; i < messages; i++) {
      byte[] p = new byte[messageBytes];
      ThreadLocalRandom.current().nextBytes(p);
      payloads.add(p);
    }
    MessageBlock block = MessageBlockEncoder.encode(payloads, CompressionType.NONE, 1_700_000_000_000L);
    TopicAndPartition tp = new TopicAndPartition("orders", new TopicTalosResourceName("12345#orders#a1b2c3"), 3);
    put = new PutMessageRequest(tp, List.of(block), messages, "talos-producer-1700000000000-abcdef#42")
        .setTimeoutTimestamp(1_700_000_010_000L);
    MessageBlock stored = new MessageBlock(block);
    stored.setStartMessageOffset(123_456_789L);
    stored.setAppendTimestamp(1_700_000_000_001L);
    get = new GetMessageResponse(List.of(stored), messages, "talos-consumer-1700000000000-abcdef#42");
    getResult = new MessageService.getMessage_result().setSuccess(get);
    serializer = new TSerializer(new TCompactProtocol.Factory());
    deserializer = new TDeserializer(new TCompactProtocol.Factory());
    putBytes = serializer.serialize(put);
    getBytes = serializer.serialize(get);
  }

  @Benchmark
  public byte[] encodePut() throws TException {
    return serializer.serialize(put);
  }

  @Benchmark
  public PutMessageRequest decodePut() throws TException {
    PutMessageRequest r = new PutMessageRequest();
    deserializer.deserialize(r, putBytes);
    return r;
  }

  @Benchmark
  public byte[] encodeGetResponse() throws TException {
    return serializer.serialize(get);
  }

  /** As the server encodes a reply other than getMessage's: counted first, then one exact-size array. */
  @Benchmark
  public byte[] encodeGetReplyExact() {
    return ExactSizeEncoder.encode(REPLY_HEADER, getResult, null);
  }

  @Benchmark
  public GetMessageResponse decodeGetResponse() throws TException {
    GetMessageResponse r = new GetMessageResponse();
    deserializer.deserialize(r, getBytes);
    return r;
  }
}
