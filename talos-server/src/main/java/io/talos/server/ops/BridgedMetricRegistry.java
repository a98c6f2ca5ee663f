package io.talos.server.ops;

import com.codahale.metrics.Histogram;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.SlidingWindowReservoir;
import com.codahale.metrics.Timer;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.concurrent.TimeUnit;

/**
 * The server's Dropwizard registry, whose request timers ({@value #REQUEST_TIMER_PREFIX}
 * {@code <service>.<method>}, which the front-end starts and stops around every API call) also
 * record into native Prometheus metrics as each call ends: the histogram
 * {@code talos_request_duration_seconds{service,method}} (Prometheus' default buckets, 5 ms to
 * 10 s) and the counters {@code talos_put_requests_total} and {@code talos_get_requests_total}.
 * Components keep recording through the Dropwizard API; nothing in the request path changes.
 *
 * <p>Every Dropwizard timer and histogram this registry makes keeps the last {@value #SAMPLES}
 * updates ({@link SlidingWindowReservoir}, a fixed array): its percentiles on {@code /ops/metrics}
 * are those of its last {@value #SAMPLES} calls. Dropwizard's default reservoir (exponentially
 * decaying) allocates a sample and a skip-list node at most updates, and keeps them until later
 * ones displace them: at a few updates per request they outlived each young collection, were
 * copied and promoted, and their links from old nodes to new ones were cards the next collection
 * scanned. They took most of a steady server's young-collection copying time (many small
 * objects), and about half its pause.
 *
 * <p>Thread-safe.
 */
public final class BridgedMetricRegistry extends MetricRegistry {
  /** Updates a timer or histogram keeps for its percentiles: its last this many. */
  public static final int SAMPLES = 1028;

  /** Prefix of the front-end's per-call timers. */
  public static final String REQUEST_TIMER_PREFIX = "requests.";

  private final io.prometheus.metrics.core.metrics.Histogram durations =
      io.prometheus.metrics.core.metrics.Histogram.builder().name("talos_request_duration_seconds")
      .help("Duration of API calls, from decoded request to answer, by service and method")
      .labelNames("service", "method").build();
  private final Counter puts = Counter.builder().name("talos_put_requests_total")
      .help("putMessage calls answered (successful or not)").build();
  private final Counter gets = Counter.builder().name("talos_get_requests_total")
      .help("getMessage calls answered (successful or not)").build();

  /** Registers the native metrics in {@code registry} (once). */
  void registerNative(PrometheusRegistry registry) {
    registry.register(durations);
    registry.register(puts);
    registry.register(gets);
  }

  @Override
  public Timer timer(String name) {
    if (!name.startsWith(REQUEST_TIMER_PREFIX)) {
      return timer(name, () -> new Timer(new SlidingWindowReservoir(SAMPLES)));
    }
    return timer(name, () -> {
      String rest = name.substring(REQUEST_TIMER_PREFIX.length());
      int dot = rest.indexOf('.');
      String service = dot < 0 ? rest : rest.substring(0, dot);
      String method = dot < 0 ? "" : rest.substring(dot + 1);
      return new RequestTimer(durations.labelValues(service, method),
          method.equals("putMessage") ? puts : method.equals("getMessage") ? gets : null);
    });
  }

  @Override
  public Histogram histogram(String name) {
    return histogram(name, () -> new Histogram(new SlidingWindowReservoir(SAMPLES)));
  }

  /** A Dropwizard timer that also observes each duration in Prometheus. */
  private static final class RequestTimer extends Timer {
    private final io.prometheus.metrics.core.datapoints.DistributionDataPoint histogram;
    private final Counter counter;

    RequestTimer(io.prometheus.metrics.core.datapoints.DistributionDataPoint histogram, Counter counter) {
      super(new SlidingWindowReservoir(SAMPLES));
      this.histogram = histogram;
      this.counter = counter;
    }

    @Override
    public void update(long duration, TimeUnit unit) {
      super.update(duration, unit);
      if (duration >= 0) histogram.observe(unit.toNanos(duration) / 1e9);
      if (counter != null) counter.inc();
    }
  }
}
