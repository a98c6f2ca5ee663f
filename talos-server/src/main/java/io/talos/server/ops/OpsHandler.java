package io.talos.server.ops;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.Histogram;
import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Snapshot;
import com.codahale.metrics.Timer;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The ops endpoint, unauthenticated and read-only, for operators and monitoring:
 * {@code GET /ops/health} runs the {@link HealthChecks} (metadata store, storage root, file
 * descriptors): 200 with each check when all pass, 503 listing each failed check and why;
 * {@code GET /ops/metrics}
 * answers every metric as JSON (timers and histograms with mean, p50, p75, p99, p999 in ms).
 * HEAD is answered like GET without the body (load balancers probe with it); every answer under
 * {@code /ops}, errors included, is JSON.
 * It binds where the API binds (127.0.0.1 by default). Thread-safe.
 */
public final class OpsHandler extends Handler.Abstract {
  public static final String PREFIX = "/ops/";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final MetricRegistry metrics;
  private final HealthChecks health;

  public OpsHandler(MetricRegistry metrics) {
    this(metrics, new HealthChecks(1000));
  }

  /** @param health what /ops/health checks (see {@link HealthChecks}) */
  public OpsHandler(MetricRegistry metrics, HealthChecks health) {
    this.metrics = metrics;
    this.health = health;
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) throws Exception {
    String path = request.getHttpURI().getPath();
    if (path == null || !(path.startsWith(PREFIX) || path.equals("/ops"))) return false;
    ObjectNode body = JSON.createObjectNode();
    int status = 200;
    boolean head = "HEAD".equals(request.getMethod());
    boolean known = path.equals(PREFIX + "health") || path.equals(PREFIX + "metrics") || path.equals(PREFIX + "orphans");
    if (!known) {
      status = 404;
      body.put("status", 404);
      body.put("error", "no such ops path " + path + "; the ops paths are /ops/{health,ready,nodes,topics,topics/NAME,"
          + "groups,groups/NAME,metrics,orphans}, POST /ops/nodes/ID/drain, POST /ops/partitions/TOPIC/P/move;"
          + " Prometheus: /metrics; console: /console/");
    } else if (!"GET".equals(request.getMethod()) && !head) {
      status = 405;
      body.put("status", 405);
      response.getHeaders().put(HttpHeader.ALLOW, "GET, HEAD");
      body.put("error", "method " + request.getMethod() + " not allowed on " + path + "; use GET or HEAD");
    } else if (path.equals(PREFIX + "health")) {
      status = health(body);
    } else if (path.equals(PREFIX + "metrics")) {
      body = metricsJson();
    }
    if (status >= 400) metrics.meter("http.status." + status).mark();
    response.setStatus(status);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
    byte[] bytes = JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(body);
    if (head) {
      response.getHeaders().put(HttpHeader.CONTENT_LENGTH, bytes.length);
      response.write(true, ByteBuffer.allocate(0), callback);
    } else {
      response.write(true, ByteBuffer.wrap(bytes), callback);
    }
    return true;
  }

  /**
   * Runs every health check: 200 {"status":"ok","checks":{name:{"ok":true}}} when all pass, else
   * 503 {"status":"failing","failed":[{"check":name,"problem":why}],"checks":{...}}.
   */
  private int health(ObjectNode body) {
    java.util.List<HealthChecks.Result> results = health.run();
    ObjectNode checks = JSON.createObjectNode();
    com.fasterxml.jackson.databind.node.ArrayNode failed = JSON.createArrayNode();
    for (HealthChecks.Result r : results) {
      ObjectNode c = checks.putObject(r.name());
      c.put("ok", r.ok());
      if (!r.ok()) {
        c.put("problem", r.problem());
        failed.addObject().put("check", r.name()).put("problem", r.problem());
      }
    }
    body.put("status", failed.isEmpty() ? "ok" : "failing");
    if (!failed.isEmpty()) body.set("failed", failed);
    body.set("checks", checks);
    return failed.isEmpty() ? 200 : 503;
  }

  private ObjectNode metricsJson() {
    ObjectNode root = JSON.createObjectNode();
    metrics.getGauges().forEach((name, g) -> root.putPOJO(name, gaugeValue(g)));
    metrics.getCounters().forEach((name, c) -> root.put(name, c.getCount()));
    metrics.getMeters().forEach((name, m) -> root.set(name, meter(m)));
    metrics.getHistograms().forEach((name, h) -> root.set(name, histogram(h)));
    metrics.getTimers().forEach((name, t) -> root.set(name, timer(t)));
    return root;
  }

  private static Object gaugeValue(Gauge<?> g) {
    try {
      return g.getValue();
    } catch (RuntimeException e) {
      return "error: " + e.getMessage();
    }
  }

  private static ObjectNode meter(Meter m) {
    ObjectNode n = JSON.createObjectNode();
    n.put("count", m.getCount());
    n.put("rate1m", m.getOneMinuteRate());
    return n;
  }

  private static ObjectNode histogram(Histogram h) {
    ObjectNode n = JSON.createObjectNode();
    n.put("count", h.getCount());
    Snapshot s = h.getSnapshot();
    n.put("mean", s.getMean());
    n.put("p50", s.getMedian());
    n.put("p75", s.get75thPercentile());
    n.put("p99", s.get99thPercentile());
    n.put("p999", s.get999thPercentile());
    n.put("max", s.getMax());
    return n;
  }

  private static ObjectNode timer(Timer t) {
    ObjectNode n = JSON.createObjectNode();
    n.put("count", t.getCount());
    n.put("rate1m", t.getOneMinuteRate());
    Snapshot s = t.getSnapshot();
    double ms = TimeUnit.MILLISECONDS.toNanos(1);
    n.put("meanMs", s.getMean() / ms);
    n.put("p50Ms", s.getMedian() / ms);
    n.put("p75Ms", s.get75thPercentile() / ms);
    n.put("p99Ms", s.get99thPercentile() / ms);
    n.put("p999Ms", s.get999thPercentile() / ms);
    n.put("maxMs", s.getMax() / ms);
    return n;
  }
}
