package io.talos.server.ops;

import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Timer;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Histogram;
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
 * <p>Thread-safe.
 */
public final class BridgedMetricRegistry extends MetricRegistry {
  /** Prefix of the front-end's per-call timers. */
  public static final String REQUEST_TIMER_PREFIX = "requests.";

  private final Histogram durations = Histogram.builder().name("talos_request_duration_seconds")
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
    if (!name.startsWith(REQUEST_TIMER_PREFIX)) return super.timer(name);
    return timer(name, () -> {
      String rest = name.substring(REQUEST_TIMER_PREFIX.length());
      int dot = rest.indexOf('.');
      String service = dot < 0 ? rest : rest.substring(0, dot);
      String method = dot < 0 ? "" : rest.substring(dot + 1);
      return new RequestTimer(durations.labelValues(service, method),
          method.equals("putMessage") ? puts : method.equals("getMessage") ? gets : null);
    });
  }

  /** A Dropwizard timer that also observes each duration in Prometheus. */
  private static final class RequestTimer extends Timer {
    private final io.prometheus.metrics.core.datapoints.DistributionDataPoint histogram;
    private final Counter counter;

    RequestTimer(io.prometheus.metrics.core.datapoints.DistributionDataPoint histogram, Counter counter) {
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
