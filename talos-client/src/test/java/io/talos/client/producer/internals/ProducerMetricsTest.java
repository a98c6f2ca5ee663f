package io.talos.client.producer.internals;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.codahale.metrics.Snapshot;
import io.talos.client.producer.KeyHashPartitioner;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ProducerMetricsTest {
  private static final int N = 2 * ProducerMetrics.SAMPLES + 5;

  /**
   * Percentiles of the last {@link ProducerMetrics#SAMPLES} updates. Dropwizard's default
   * reservoir keeps a random choice of the updates of one second, whose oldest kept value would
   * not be the (N - SAMPLES + 1)th.
   */
  @Test
  void shouldKeepTheLastSamplesOfItsHistogramsAndTimer() {
    BufferMemory memory = new BufferMemory(1 << 20);
    ProducerMetrics metrics = new ProducerMetrics(memory,
        new RecordAccumulator(10, 1 << 16, 0, new KeyHashPartitioner(), () -> 1), () -> 1);
    for (long i = 1; i <= N; i++) {
      metrics.batchRecords.update(i);
      metrics.batchBytes.update(i);
      metrics.batchCompressedBytes.update(i);
      metrics.requestLatency.update(i, TimeUnit.NANOSECONDS);
    }
    for (Snapshot s : new Snapshot[] {metrics.batchRecords.getSnapshot(), metrics.batchBytes.getSnapshot(),
        metrics.batchCompressedBytes.getSnapshot(), metrics.requestLatency.getSnapshot()}) {
      assertEquals(ProducerMetrics.SAMPLES, s.size());
      assertEquals(N - ProducerMetrics.SAMPLES + 1, s.getMin());
      assertEquals(N, s.getMax());
    }
    assertEquals(N, metrics.requestLatency.getCount());
    assertEquals(metrics.batchRecords, metrics.registry().getHistograms().get(ProducerMetrics.BATCH_RECORDS));
  }
}
