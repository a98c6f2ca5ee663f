package io.talos.client.producer.internals;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.Histogram;
import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.SlidingWindowReservoir;
import com.codahale.metrics.Timer;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

/**
 * A producer's metrics, in its own Dropwizard {@link MetricRegistry} (a {@code MetricSet}: an
 * application registers it under a prefix of its choice in its own registry). Names are listed
 * in docs/clients.md; they are part of the producer's contract. Thread-safe.
 *
 * <p>The histograms and the timer keep their last {@value #SAMPLES} updates in a fixed array:
 * Dropwizard's default reservoir allocates a sample and a skip-list node at most updates and keeps
 * them until later ones displace them, so at thousands of batches a second they outlive the
 * application's young collections and lengthen them.
 */
public final class ProducerMetrics {
  public static final String RECORDS_SENT = "records-sent";
  public static final String BYTES_SENT = "bytes-sent";
  public static final String RECORDS_FAILED = "records-failed";
  public static final String BATCH_RECORDS = "batch-records";
  public static final String BATCH_BYTES = "batch-bytes";
  public static final String BATCH_COMPRESSED_BYTES = "batch-compressed-bytes";
  public static final String REQUEST_LATENCY = "request-latency";
  public static final String RETRIES = "retries";
  public static final String BUFFER_USED_BYTES = "buffer-used-bytes";
  public static final String BUFFER_TOTAL_BYTES = "buffer-total-bytes";
  public static final String BUFFER_WAITING_THREADS = "buffer-waiting-threads";
  public static final String BATCHES_QUEUED = "batches-queued";
  public static final String PARTITION_COUNT = "partition-count";
  /** Updates a histogram or the timer keeps for its percentiles: its last this many. */
  public static final int SAMPLES = 1028;

  private final MetricRegistry registry = new MetricRegistry();
  final Meter recordsSent = registry.meter(RECORDS_SENT);
  final Meter bytesSent = registry.meter(BYTES_SENT);
  final Meter recordsFailed = registry.meter(RECORDS_FAILED);
  final Histogram batchRecords = histogram(BATCH_RECORDS);
  final Histogram batchBytes = histogram(BATCH_BYTES);
  final Histogram batchCompressedBytes = histogram(BATCH_COMPRESSED_BYTES);
  final Timer requestLatency = registry.timer(REQUEST_LATENCY,
      () -> new Timer(new SlidingWindowReservoir(SAMPLES)));
  final Meter retries = registry.meter(RETRIES);

  public ProducerMetrics(BufferMemory memory, RecordAccumulator accumulator,
      IntSupplier partitionCount) {
    gaugeLong(BUFFER_USED_BYTES, memory::usedBytes);
    gaugeLong(BUFFER_TOTAL_BYTES, memory::totalBytes);
    gaugeInt(BUFFER_WAITING_THREADS, memory::waitingThreads);
    gaugeInt(BATCHES_QUEUED, accumulator::batchCount);
    gaugeInt(PARTITION_COUNT, partitionCount::getAsInt);
  }

  private Histogram histogram(String name) {
    return registry.histogram(name, () -> new Histogram(new SlidingWindowReservoir(SAMPLES)));
  }

  public MetricRegistry registry() {
    return registry;
  }

  private void gaugeLong(String name, LongSupplier value) {
    registry.register(name, (Gauge<Long>) value::getAsLong);
  }

  private void gaugeInt(String name, IntSupplier value) {
    registry.register(name, (Gauge<Integer>) value::getAsInt);
  }
}
