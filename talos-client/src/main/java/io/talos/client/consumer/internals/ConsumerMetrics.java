package io.talos.client.consumer.internals;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

/**
 * A consumer's metrics in its own Dropwizard {@link MetricRegistry}; names are listed in
 * docs/clients.md and are part of the consumer's contract. Per-partition lag gauges are added
 * when the consumer takes a partition and removed when it gives it up. Thread-safe.
 */
public final class ConsumerMetrics {
  public static final String RECORDS_CONSUMED = "records-consumed";
  public static final String COMMITS = "commits";
  public static final String COMMIT_FAILURES = "commit-failures";
  public static final String FETCH_ERRORS = "fetch-errors";
  public static final String PROCESSING_ERRORS = "processing-errors";
  public static final String OFFSET_RESETS = "offset-resets";
  public static final String REBALANCES = "rebalances";
  public static final String PARTITIONS_ASSIGNED = "partitions-assigned";
  public static final String LAG = "lag";

  private final MetricRegistry registry = new MetricRegistry();
  final Meter recordsConsumed = registry.meter(RECORDS_CONSUMED);
  final Meter commits = registry.meter(COMMITS);
  final Meter commitFailures = registry.meter(COMMIT_FAILURES);
  final Meter fetchErrors = registry.meter(FETCH_ERRORS);
  final Meter processingErrors = registry.meter(PROCESSING_ERRORS);
  final Meter offsetResets = registry.meter(OFFSET_RESETS);
  public final Meter rebalances = registry.meter(REBALANCES);

  public ConsumerMetrics(IntSupplier assigned, LongSupplier totalLag) {
    registry.register(PARTITIONS_ASSIGNED, (Gauge<Integer>) assigned::getAsInt);
    registry.register(LAG, (Gauge<Long>) totalLag::getAsLong);
  }

  /** The name of a partition's lag gauge: {@code partition.<p>.lag}. */
  public static String partitionLag(int partition) {
    return "partition." + partition + ".lag";
  }

  public void addPartition(PartitionReader reader) {
    String name = partitionLag(reader.partition());
    registry.remove(name);
    registry.register(name, (Gauge<Long>) reader::lag);
  }

  public void removePartition(int partition) {
    registry.remove(partitionLag(partition));
  }

  public MetricRegistry registry() {
    return registry;
  }
}
