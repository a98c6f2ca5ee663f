package io.talos.bench.producer;

import io.talos.client.codec.CompressionType;
import io.talos.client.codec.MessageBlockEncoder;
import io.talos.client.producer.BufferExhaustedException;
import io.talos.client.producer.RoundRobinPartitioner;
import io.talos.client.producer.internals.BufferMemory;
import io.talos.client.producer.internals.ProducerBatch;
import io.talos.client.producer.internals.RecordAccumulator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The producer's record path without the network: one thread does what {@code send} does per
 * record after validation ({@link RecordAccumulator#append}, which serializes the record into
 * its batch's buffer, reserving memory with {@link BufferMemory#reserve} first only when the
 * buffer has no room for it) while another does what the I/O threads do per batch (drain up to
 * {@code max.in.flight.requests} ready batches, complete their records, release their memory,
 * {@link RecordAccumulator#completed}), and a third sleeps in {@link RecordAccumulator#awaitWork}
 * between looks at the queues as the sender thread does (so that the wake-ups the other two give
 * are consumed and cost what they cost in the producer). The {@code append} score is records per microsecond the
 * sending thread gets through while the other thread takes batches away, so it includes the
 * two meeting on the accumulator's and the buffer's locks. Producer defaults otherwise: 1000
 * records or 1 MiB a batch, 32 MiB of buffer, records spread over {@code partitions}.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 3)
@Fork(1)
@State(Scope.Group)
public class RecordAccumulatorBenchmark {
  private static final int MAX_IN_FLIGHT = 16;

  @Param({"16"})
  public int partitions;

  @Param({"100"})
  public int bytes;

  private BufferMemory memory;
  private RecordAccumulator accumulator;
  private byte[] payload;
  private int serialized;
  private int next;

  @Setup(Level.Iteration)
  public void setUp() {
    memory = new BufferMemory(32L * 1024 * 1024);
    accumulator = new RecordAccumulator(1000, 1024 * 1024, 0, CompressionType.NONE, memory,
        new RoundRobinPartitioner(), () -> partitions);
    payload = new byte[bytes];
    serialized = MessageBlockEncoder.serializedSize(bytes, null);
  }

  @Benchmark
  @Group("path")
  @GroupThreads(1)
  public Object append() throws InterruptedException {
    int partition = next;
    next = partition + 1 == partitions ? 0 : partition + 1;
    // as send does: into room the batch's buffer has reserved already, else reserve and append
    ProducerBatch batch = accumulator.append(partition, payload, null, 0, serialized, 0,
        new CompletableFuture<>(), null, 0);
    if (batch != null) return batch;
    try {
      // bounded, so that the sending thread cannot hang when the draining one stops first
      memory.reserve(serialized, 10);
    } catch (BufferExhaustedException e) {
      return e;
    }
    return accumulator.append(partition, payload, null, 0, serialized, serialized,
        new CompletableFuture<>(), null, 0);
  }

  @Benchmark
  @Group("path")
  @GroupThreads(1)
  public int drainAndComplete() {
    List<ProducerBatch> ready = accumulator.drain(0, MAX_IN_FLIGHT, MAX_IN_FLIGHT);
    int records = 0;
    for (ProducerBatch b : ready) {
      memory.release(b.heldBytes());
      for (ProducerBatch.Entry e : b.entries()) e.future().complete(null);
      records += b.recordCount();
      accumulator.completed(b);
      b.done().complete(null);
    }
    return records;
  }

  @Benchmark
  @Group("path")
  @GroupThreads(1)
  public long sender() throws InterruptedException {
    accumulator.awaitWork(5); // linger.ms, the producer's default
    return accumulator.nextReadyMs(0);
  }
}
