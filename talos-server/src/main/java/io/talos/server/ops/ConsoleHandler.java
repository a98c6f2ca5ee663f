package io.talos.server.ops;

import com.codahale.metrics.MetricRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The web console: static files from the server jar ({@code /io/talos/server/console/} on the
 * class path), read once at construction, served at {@code /console/} ({@code /console} redirects
 * there). The page reads the ops API with the browser's fetch, signing protected requests itself
 * (see console.js and docs/security.md). A file that does not exist is 404 JSON; a method other
 * than GET or HEAD is 405 JSON with {@code Allow}. Thread-safe (immutable after construction).
 */
public final class ConsoleHandler extends Handler.Abstract {
  public static final String PREFIX = "/console/";
  private static final String RESOURCES = "/io/talos/server/console/";
  private static final Map<String, String> FILES = Map.of(
      "index.html", "text/html; charset=utf-8",
      "console.js", "text/javascript; charset=utf-8",
      "console.css", "text/css; charset=utf-8");

  private final Map<String, byte[]> content = new LinkedHashMap<>();
  private final MetricRegistry metrics;

  public ConsoleHandler(MetricRegistry metrics) {
    this.metrics = metrics;
    for (String f : FILES.keySet()) {
      try (InputStream in = ConsoleHandler.class.getResourceAsStream(RESOURCES + f)) {
        if (in == null) throw new IllegalStateException("console file " + RESOURCES + f + " is missing from the jar");
        content.put(f, in.readAllBytes());
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) {
    String path = request.getHttpURI().getPath();
    if (path == null) return false;
    if (path.equals("/console")) {
      response.setStatus(302);
      response.getHeaders().put(HttpHeader.LOCATION, PREFIX);
      callback.succeeded();
      return true;
    }
    if (!path.startsWith(PREFIX)) return false;
    String method = request.getMethod();
    if (!method.equals("GET") && !method.equals("HEAD")) {
      response.getHeaders().put(HttpHeader.ALLOW, "GET, HEAD");
      return json(response, callback, 405, "method " + method + " not allowed on " + path + "; use GET or HEAD");
    }
    String file = path.substring(PREFIX.length());
    if (file.isEmpty()) file = "index.html";
    byte[] bytes = content.get(file);
    if (bytes == null) {
      return json(response, callback, 404, "no console file " + path + "; the console is at " + PREFIX);
    }
    response.setStatus(200);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, FILES.get(file));
    response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-cache");
    // The page runs the signing code and holds a secret: no framing, no foreign scripts.
    response.getHeaders().put("X-Frame-Options", "DENY");
    response.getHeaders().put("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'");
    response.getHeaders().put("X-Content-Type-Options", "nosniff");
    if (method.equals("HEAD")) {
      response.getHeaders().put(HttpHeader.CONTENT_LENGTH, bytes.length);
      response.write(true, ByteBuffer.allocate(0), callback);
    } else {
      response.write(true, ByteBuffer.wrap(bytes), callback);
    }
    return true;
  }

  private boolean json(Response response, Callback callback, int status, String message) {
    metrics.meter("http.status." + status).mark();
    response.setStatus(status);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
    String body = "{\"status\":" + status + ",\"error\":" + com.fasterxml.jackson.databind.node.TextNode.valueOf(message) + "}";
    response.write(true, ByteBuffer.wrap(body.getBytes(StandardCharsets.UTF_8)), callback);
    return true;
  }
}
