package io.talos.server.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.codahale.metrics.Histogram;
import com.codahale.metrics.Snapshot;
import com.codahale.metrics.Timer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class BridgedMetricRegistryTest {
  private static final int N = 3 * BridgedMetricRegistry.SAMPLES + 17;

  /**
   * The percentiles are those of the last {@link BridgedMetricRegistry#SAMPLES} updates: with
   * Dropwizard's default reservoir, updates within one second weigh the same and it keeps a random
   * choice of them, so the oldest kept value would not be the (N - SAMPLES + 1)th.
   */
  @Test
  void shouldKeepTheLastSamplesOfEveryTimer() {
    BridgedMetricRegistry registry = new BridgedMetricRegistry();
    for (String name : new String[] {"pool.service", "requests.message.putMessage"}) {
      Timer timer = registry.timer(name);
      for (long i = 1; i <= N; i++) timer.update(i, TimeUnit.NANOSECONDS);
      Snapshot s = timer.getSnapshot();
      assertEquals(BridgedMetricRegistry.SAMPLES, s.size(), name);
      assertEquals(N - BridgedMetricRegistry.SAMPLES + 1, s.getMin(), name);
      assertEquals(N, s.getMax(), name);
      assertEquals(N, timer.getCount(), name);
    }
  }

  @Test
  void shouldKeepTheLastSamplesOfEveryHistogram() {
    BridgedMetricRegistry registry = new BridgedMetricRegistry();
    Histogram histogram = registry.histogram("pool.batch.size");
    for (long i = 1; i <= N; i++) histogram.update(i);
    Snapshot s = histogram.getSnapshot();
    assertEquals(BridgedMetricRegistry.SAMPLES, s.size());
    assertEquals(N - BridgedMetricRegistry.SAMPLES + 1, s.getMin());
    assertEquals(N, s.getMax());
  }

  @Test
  void shouldRecordRequestTimersInPrometheusAsWell() {
    BridgedMetricRegistry registry = new BridgedMetricRegistry();
    PrometheusRegistry prometheus = new PrometheusRegistry();
    registry.registerNative(prometheus);
    Timer put = registry.timer("requests.message.putMessage");
    put.update(3, TimeUnit.MILLISECONDS);
    put.update(4, TimeUnit.MILLISECONDS);
    registry.timer("requests.message.getMessage").update(1, TimeUnit.MILLISECONDS);

    MetricSnapshots snapshots = prometheus.scrape();
    assertEquals(2.0, counter(snapshots, "talos_put_requests"));
    assertEquals(1.0, counter(snapshots, "talos_get_requests"));
    HistogramSnapshot durations = (HistogramSnapshot) find(snapshots, "talos_request_duration_seconds");
    long putCount = durations.getDataPoints().stream()
        .filter(p -> "putMessage".equals(p.getLabels().get("method")))
        .mapToLong(HistogramSnapshot.HistogramDataPointSnapshot::getCount).sum();
    assertEquals(2, putCount);
  }

  private static double counter(MetricSnapshots snapshots, String name) {
    return ((CounterSnapshot) find(snapshots, name)).getDataPoints().get(0).getValue();
  }

  private static MetricSnapshot find(MetricSnapshots snapshots, String name) {
    return snapshots.stream().filter(m -> m.getMetadata().getName().equals(name)).findFirst()
        .orElseThrow(() -> new AssertionError("no metric " + name));
  }
}
