package io.talos.bench.thrift;

import io.talos.server.frontend.EncodedReply;
import io.talos.server.frontend.ExactSizeEncoder;
import io.talos.thrift.GetMessageResponse;
import io.talos.thrift.MessageBlock;
import io.talos.thrift.MessageCompressionType;
import io.talos.thrift.MessageService;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
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
 * A getMessage reply from stored blocks to the bytes handed to the socket, as the server makes it.
 *
 * <ul>
 *   <li>{@code arrayThenSlices} (the baseline, the server before): the reply encoded into one
 *       exact-size array (allocated, zeroed, every block copied in), then written in 128 KiB heap
 *       slices, each of which the JDK copies into its cached direct buffer before the system call
 *       (modelled by the copy into {@code direct}).</li>
 *   <li>{@code gatheredThenStaged} (the server now): the reply gathered (framing bytes, views of the
 *       blocks), then copied part after part into one 64 KiB direct buffer, written from there.</li>
 * </ul>
 *
 * <p>Both end with every byte of the reply in a direct buffer once, as the socket write needs it;
 * the difference is the reply array, its zeroing and the copy into it. Blocks are slices of larger
 * read buffers, as the log hands them out; {@code blockBytes} is the producer's batch (the load
 * benchmark's is 128 KiB), {@code replyBytes} what one get returns.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
@Fork(1)
@State(Scope.Benchmark)
public class GetReplyWriteBenchmark {
  @Param({"131072"})
  public int blockBytes;

  @Param({"1048576", "8388608"})
  public int replyBytes;

  private static final TMessage REPLY_HEADER = new TMessage("getMessage", TMessageType.REPLY, 1);
  private static final int JDK_SLICE_BYTES = 128 * 1024;
  private static final int STAGE_BYTES = 64 * 1024;

  private MessageService.getMessage_result result;
  private ByteBuffer jdkDirect;
  private ByteBuffer staging;

  @Setup
  public void setUp() {
    List<MessageBlock> blocks = new ArrayList<>();
    long offset = 0;
    for (int total = 0; total + blockBytes <= replyBytes; total += blockBytes) {
      byte[] readBuffer = new byte[blockBytes + 64];
      ThreadLocalRandom.current().nextBytes(readBuffer);
      MessageBlock b = new MessageBlock(offset, 100, MessageCompressionType.NONE, ByteBuffer.allocate(0));
      b.messageBlock = ByteBuffer.wrap(readBuffer, 40, blockBytes).slice();
      b.setAppendTimestamp(1_700_000_000_001L);
      blocks.add(b);
      offset += 100;
    }
    result = new MessageService.getMessage_result()
        .setSuccess(new GetMessageResponse(blocks, (int) offset, "talos-consumer-1700000000000-abcdef#42"));
    jdkDirect = ByteBuffer.allocateDirect(JDK_SLICE_BYTES);
    staging = ByteBuffer.allocateDirect(STAGE_BYTES);
  }

  @Benchmark
  public long arrayThenSlices() {
    byte[] reply = ExactSizeEncoder.encode(REPLY_HEADER, result, null);
    long sum = 0;
    for (int at = 0; at < reply.length; at += JDK_SLICE_BYTES) {
      int n = Math.min(JDK_SLICE_BYTES, reply.length - at);
      jdkDirect.clear();
      jdkDirect.put(reply, at, n);
      sum += jdkDirect.get(n - 1);
    }
    return sum;
  }

  @Benchmark
  public long gatheredThenStaged() {
    EncodedReply reply = ExactSizeEncoder.encodeGathered(REPLY_HEADER, result);
    EncodedReply.Reader reader = reply.reader();
    long sum = 0;
    while (true) {
      staging.clear();
      int n = reader.copyTo(staging);
      if (n == 0) break;
      sum += staging.get(n - 1);
    }
    return sum;
  }
}
