package io.talos.server.frontend;

import com.codahale.metrics.MetricRegistry;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.ByteBuffer;
import org.apache.thrift.TApplicationException;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * Jetty's error handler for the whole server: the errors Jetty answers itself, before or instead
 * of our handlers (a URI it cannot parse, 413/414/431 size limits, a handler that threw), are
 * answered in the language of the endpoint instead of an HTML page: JSON ({@code {"status":..,
 * "error":..}}) under {@code /ops}, and a Thrift EXCEPTION message ({@code application/x-thrift},
 * read by the Talos SDK as a {@link TApplicationException} with the message) everywhere else,
 * including when the path could not be parsed at all: the API's clients are Thrift clients.
 * Each answer is counted ({@code http.status.<code>}).
 *
 * <p>Thread-safe.
 */
public final class TalosErrorHandler extends ErrorHandler {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final MetricRegistry metrics;

  public TalosErrorHandler(MetricRegistry metrics) {
    this.metrics = metrics;
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) {
    int status = response.getStatus() > 0 ? response.getStatus() : 500;
    Object attr = request.getAttribute(ERROR_STATUS);
    if (attr instanceof Integer i) status = i;
    String message = request.getAttribute(ERROR_MESSAGE) instanceof String m ? m : HttpStatus.getMessage(status);
    String path = request.getHttpURI() == null ? null : request.getHttpURI().getPath();
    metrics.meter("http.status." + status).mark();
    response.setStatus(status);
    ByteBuffer body;
    if (isOps(path)) {
      response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
      body = ByteBuffer.wrap(json(status, message));
    } else {
      response.getHeaders().put(HttpHeader.CONTENT_TYPE, ApiHandler.THRIFT_CONTENT_TYPE);
      String method = request.getHttpURI() == null ? null : ApiHandler.queryParam(request.getHttpURI().getQuery(), "type");
      body = ByteBuffer.wrap(thrift(status, method, message));
    }
    response.write(true, request.getMethod().equals("HEAD") ? ByteBuffer.allocate(0) : body, callback);
    return true;
  }

  /** Errors found while parsing the request (no request to look at): always a Thrift answer. */
  @Override
  public ByteBuffer badMessageError(int status, String reason, HttpFields.Mutable fields) {
    metrics.meter("http.status." + status).mark();
    fields.put(HttpHeader.CONTENT_TYPE, ApiHandler.THRIFT_CONTENT_TYPE);
    return ByteBuffer.wrap(thrift(status, null, reason == null ? HttpStatus.getMessage(status) : reason));
  }

  static boolean isOps(String path) {
    return path != null && (path.equals("/ops") || path.startsWith("/ops/"));
  }

  private static byte[] thrift(int status, String method, String message) {
    int type = status == 404 || status == 405 ? TApplicationException.UNKNOWN_METHOD
        : status >= 500 ? TApplicationException.INTERNAL_ERROR : TApplicationException.PROTOCOL_ERROR;
    return ThriftDispatcher.applicationException(method, 0, type, "HTTP " + status + ": " + message);
  }

  static byte[] json(int status, String message) {
    try {
      return JSON.writeValueAsBytes(JSON.createObjectNode().put("status", status).put("error", message));
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
