package io.talos.server.ops;

import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Snapshot;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.prometheus.metrics.model.snapshots.PrometheusNaming;
import io.prometheus.metrics.model.snapshots.Quantile;
import io.prometheus.metrics.model.snapshots.Quantiles;
import io.prometheus.metrics.model.snapshots.SummarySnapshot;
import io.talos.server.metadata.MetadataStore;
import io.talos.server.metadata.TopicRecord;
import io.talos.server.storage.PartitionLogs;
import io.talos.server.storage.PartitionOffsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;

/**
 * The server's metrics in the Prometheus model ({@code io.prometheus:prometheus-metrics-*}),
 * scraped at {@code GET /metrics} ({@link MetricsHandler}). Three sources:
 * <ul>
 *   <li>JVM metrics ({@link JvmMetrics}: memory, GC, threads, classes, process);
 *   <li>the Dropwizard registry the server's components record into, bridged at scrape time:
 *       request timers {@code requests.<service>.<method>} become the histogram
 *       {@code talos_request_duration_seconds{service,method}} and the counters
 *       {@code talos_put_requests_total} / {@code talos_get_requests_total} (see {@link
 *       BridgedMetricRegistry}, which records them natively as they happen); the meters
 *       {@code http.status.<code>} become {@code talos_http_errors_total{code}} (every error answer,
 *       404 and 500 included) and {@code errors.<ErrorCode>} become
 *       {@code talos_api_errors_total{code}}; every other gauge, counter, meter, timer and histogram
 *       becomes {@code talos_<name with dots as underscores>} (a gauge, a {@code _total} counter or a
 *       summary, durations in seconds);
 *   <li>per-partition put/get counters ({@link PartitionMeters}, labels {@code topic},
 *       {@code partition}) and consumer lag ({@code talos_group_lag_messages{group,topic,partition}},
 *       read from the metadata store at scrape time), each at most {@code ops.metrics.labels.max}
 *       label sets; {@code talos_metrics_labels_dropped} says how many were left out.
 * </ul>
 * No exposition format is written here: {@link MetricsHandler} uses the library's writers.
 *
 * <p>Thread-safe.
 */
public final class PrometheusMetrics {
  private final PrometheusRegistry registry = new PrometheusRegistry();

  /**
   * @param metrics the server's Dropwizard registry (its request timers feed the native histograms)
   * @param labelsMax ops.metrics.labels.max: most label sets of each per-partition or per-group family
   */
  public PrometheusMetrics(BridgedMetricRegistry metrics, PartitionMeters meters, MetadataStore store,
      PartitionLogs logs, int labelsMax) {
    JvmMetrics.builder().register(registry);
    metrics.registerNative(registry);
    registry.register(new DropwizardBridge(metrics));
    registry.register(new PartitionCollector(meters, store, logs, labelsMax));
  }

  public PrometheusRegistry registry() {
    return registry;
  }

  /** Converts what the Dropwizard registry holds, at scrape time. */
  private static final class DropwizardBridge implements MultiCollector {
    private final MetricRegistry metrics;

    DropwizardBridge(MetricRegistry metrics) {
      this.metrics = metrics;
    }

    @Override
    public MetricSnapshots collect() {
      List<MetricSnapshot> out = new ArrayList<>();
      Map<String, Long> httpErrors = new TreeMap<>();
      Map<String, Long> apiErrors = new TreeMap<>();
      metrics.getMeters().forEach((name, m) -> {
        if (name.startsWith("http.status.")) {
          httpErrors.merge(name.substring("http.status.".length()), m.getCount(), Long::sum);
        } else if (name.startsWith("errors.")) {
          apiErrors.merge(name.substring("errors.".length()), m.getCount(), Long::sum);
        } else {
          out.add(counter(name(name), "Dropwizard meter " + name + " (events)", m.getCount()));
        }
      });
      out.add(labeledCounter("talos_http_errors", "HTTP error answers (status >= 400) by status code, 404 and 500 included",
          "code", httpErrors));
      out.add(labeledCounter("talos_api_errors", "Talos error codes answered to API calls, by code", "code", apiErrors));
      metrics.getGauges().forEach((name, g) -> {
        Object v;
        try {
          v = g.getValue();
        } catch (RuntimeException e) {
          return; // a gauge that cannot be read now is left out of this scrape
        }
        if (v instanceof Number n) {
          out.add(GaugeSnapshot.builder().name(name(name)).help("Dropwizard gauge " + name)
              .dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().value(n.doubleValue()).build()).build());
        } else if (v instanceof Boolean b) {
          out.add(GaugeSnapshot.builder().name(name(name)).help("Dropwizard gauge " + name + " (1 = true)")
              .dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().value(b ? 1 : 0).build()).build());
        }
      });
      metrics.getCounters().forEach((name, c) -> out.add(GaugeSnapshot.builder().name(name(name))
          .help("Dropwizard counter " + name).dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder()
              .value(c.getCount()).build()).build()));
      metrics.getTimers().forEach((name, t) -> {
        if (name.startsWith(BridgedMetricRegistry.REQUEST_TIMER_PREFIX)) return; // native histogram
        out.add(summary(name(name) + "_seconds", "Dropwizard timer " + name + " (seconds)", t.getCount(),
            t.getSnapshot(), 1e-9));
      });
      metrics.getHistograms().forEach((name, h) -> out.add(summary(name(name), "Dropwizard histogram " + name,
          h.getCount(), h.getSnapshot(), 1)));
      return new MetricSnapshots(out);
    }
  }

  /** Per-partition traffic and per-group lag, each family capped at labelsMax label sets. */
  private static final class PartitionCollector implements MultiCollector {
    private final PartitionMeters meters;
    private final MetadataStore store;
    private final PartitionLogs logs;
    private final int labelsMax;

    PartitionCollector(PartitionMeters meters, MetadataStore store, PartitionLogs logs, int labelsMax) {
      this.meters = meters;
      this.store = store;
      this.logs = logs;
      this.labelsMax = labelsMax;
    }

    @Override
    public MetricSnapshots collect() {
      CounterSnapshot.Builder putMessages = CounterSnapshot.builder().name("talos_partition_put_messages")
          .help("Messages appended to the partition");
      CounterSnapshot.Builder putBytes = CounterSnapshot.builder().name("talos_partition_put_bytes")
          .help("Payload bytes appended to the partition");
      CounterSnapshot.Builder getMessages = CounterSnapshot.builder().name("talos_partition_get_messages")
          .help("Messages read from the partition");
      CounterSnapshot.Builder getBytes = CounterSnapshot.builder().name("talos_partition_get_bytes")
          .help("Payload bytes read from the partition");
      long dropped = 0;
      int n = 0;
      List<Map.Entry<PartitionMeters.Key, PartitionMeters.Meters>> entries = new ArrayList<>(meters.all().entrySet());
      entries.sort(Map.Entry.comparingByKey(java.util.Comparator.comparing(PartitionMeters.Key::topic)
          .thenComparingInt(PartitionMeters.Key::partition)));
      for (Map.Entry<PartitionMeters.Key, PartitionMeters.Meters> e : entries) {
        if (n++ >= labelsMax) {
          dropped++;
          continue;
        }
        Labels labels = Labels.of("topic", e.getKey().topic(), "partition", Integer.toString(e.getKey().partition()));
        add(putMessages, labels, e.getValue().putMessages);
        add(putBytes, labels, e.getValue().putBytes);
        add(getMessages, labels, e.getValue().getMessages);
        add(getBytes, labels, e.getValue().getBytes);
      }
      Labels other = Labels.of("topic", PartitionMeters.OVERFLOW_TOPIC, "partition", "-1");
      PartitionMeters.Meters o = meters.overflow();
      if (o.putMessages.getCount() + o.getMessages.getCount() > 0) {
        add(putMessages, other, o.putMessages);
        add(putBytes, other, o.putBytes);
        add(getMessages, other, o.getMessages);
        add(getBytes, other, o.getBytes);
      }
      GaugeSnapshot.Builder lag = GaugeSnapshot.builder().name("talos_group_lag_messages")
          .help("Messages of the partition after the group's committed offset");
      int lags = 0;
      try {
        for (TopicRecord t : store.topics()) {
          for (String g : store.consumerGroups(t.resourceName())) {
            for (int p = 0; p < t.partitionCount(); p++) {
              if (lags >= labelsMax) {
                dropped++;
                continue;
              }
              OptionalLong committed = store.committedOffset(g, t.resourceName(), p);
              PartitionOffsets off;
              try {
                off = logs.offsets(t.resourceName(), p);
              } catch (Exception e) {
                continue; // unreadable now: no sample rather than a wrong one
              }
              long next = committed.isPresent() ? committed.getAsLong() + 1 : off.startOffset();
              long value = Math.max(0, off.endOffset() - Math.max(next, off.startOffset()));
              lag.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().labels(Labels.of("group", g, "topic",
                  t.name(), "partition", Integer.toString(p))).value(value).build());
              lags++;
            }
          }
        }
      } catch (RuntimeException e) {
        // metadata store unavailable: the lag family is left empty for this scrape
      }
      GaugeSnapshot droppedGauge = GaugeSnapshot.builder().name("talos_metrics_labels_dropped")
          .help("Label sets left out of the per-partition and per-group families by ops.metrics.labels.max")
          .dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().value(dropped).build()).build();
      CounterSnapshot overflowed = CounterSnapshot.builder().name("talos_partition_meters_overflow")
          .help("Marks counted under topic=_other because more partitions had traffic than ops.metrics.labels.max")
          .dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().value(meters.overflowed()).build()).build();
      return MetricSnapshots.of(putMessages.build(), putBytes.build(), getMessages.build(), getBytes.build(),
          lag.build(), droppedGauge, overflowed);
    }

    private static void add(CounterSnapshot.Builder b, Labels labels, Meter m) {
      b.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().labels(labels).value(m.getCount()).build());
    }
  }

  /** {@code talos_} + the Dropwizard name with every character Prometheus does not allow as '_'. */
  static String name(String dropwizardName) {
    return PrometheusNaming.sanitizeMetricName("talos_" + dropwizardName.replaceAll("[^A-Za-z0-9_]", "_"));
  }

  private static CounterSnapshot counter(String name, String help, long value) {
    return CounterSnapshot.builder().name(name).help(help)
        .dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().value(value).build()).build();
  }

  private static CounterSnapshot labeledCounter(String name, String help, String label, Map<String, Long> values) {
    CounterSnapshot.Builder b = CounterSnapshot.builder().name(name).help(help);
    values.forEach((k, v) -> b.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder()
        .labels(Labels.of(label, k)).value(v).build()));
    return b.build();
  }

  private static SummarySnapshot summary(String name, String help, long count, Snapshot s, double scale) {
    Quantiles q = Quantiles.of(new Quantile(0.5, s.getMedian() * scale), new Quantile(0.75, s.get75thPercentile() * scale),
        new Quantile(0.99, s.get99thPercentile() * scale), new Quantile(0.999, s.get999thPercentile() * scale));
    return SummarySnapshot.builder().name(name).help(help)
        .dataPoint(SummarySnapshot.SummaryDataPointSnapshot.builder().count(count).sum(s.getMean() * scale * count)
            .quantiles(q).build()).build();
  }
}
