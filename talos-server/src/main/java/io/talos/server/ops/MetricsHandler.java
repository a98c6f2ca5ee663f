package io.talos.server.ops;

import com.codahale.metrics.MetricRegistry;
import io.prometheus.metrics.expositionformats.ExpositionFormatWriter;
import io.prometheus.metrics.expositionformats.ExpositionFormats;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * {@code GET /metrics}: the Prometheus scrape endpoint. The format follows the {@code Accept}
 * header as the Prometheus library negotiates it ({@link ExpositionFormats#findWriter}):
 * OpenMetrics text for {@code application/openmetrics-text}, the Prometheus protobuf format for
 * {@code application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily}, the Prometheus
 * text format (0.0.4) otherwise. Open like /ops/health (a scraper cannot sign requests); see
 * docs/security.md for what it reveals. Wrong method: 405 JSON with {@code Allow}. Thread-safe.
 */
public final class MetricsHandler extends Handler.Abstract {
  public static final String PATH = "/metrics";

  private final PrometheusMetrics prometheus;
  private final MetricRegistry metrics;
  private final ExpositionFormats formats = ExpositionFormats.init();

  public MetricsHandler(PrometheusMetrics prometheus, MetricRegistry metrics) {
    this.prometheus = prometheus;
    this.metrics = metrics;
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) throws Exception {
    String path = request.getHttpURI().getPath();
    if (!PATH.equals(path) && !(PATH + "/").equals(path)) return false;
    String method = request.getMethod();
    if (!method.equals("GET") && !method.equals("HEAD")) {
      metrics.meter("http.status.405").mark();
      response.setStatus(405);
      response.getHeaders().put(HttpHeader.ALLOW, "GET, HEAD");
      response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
      response.write(true, ByteBuffer.wrap(("{\"status\":405,\"error\":\"method " + method
          + " not allowed on /metrics; use GET or HEAD\"}").getBytes(StandardCharsets.UTF_8)), callback);
      return true;
    }
    ExpositionFormatWriter writer = formats.findWriter(request.getHeaders().get(HttpHeader.ACCEPT));
    ByteArrayOutputStream out = new ByteArrayOutputStream(64 * 1024);
    writer.write(out, prometheus.registry().scrape());
    response.setStatus(200);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, writer.getContentType());
    response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-store");
    if (method.equals("HEAD")) {
      response.getHeaders().put(HttpHeader.CONTENT_LENGTH, out.size());
      response.write(true, ByteBuffer.allocate(0), callback);
    } else {
      response.write(true, ByteBuffer.wrap(out.toByteArray()), callback);
    }
    return true;
  }
}
