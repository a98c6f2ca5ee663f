package io.talos.client.internals;

import java.io.IOException;
import java.net.SocketAddress;
import javax.net.ssl.SSLSession;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.EndpointDetails;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.ProtocolVersion;
import org.apache.hc.core5.http.impl.io.HttpRequestExecutor;
import org.apache.hc.core5.http.io.HttpClientConnection;
import org.apache.hc.core5.http.io.HttpResponseInformationCallback;
import org.apache.hc.core5.http.protocol.HttpContext;
import org.apache.hc.core5.io.CloseMode;
import org.apache.hc.core5.util.Timeout;

/**
 * Marks in the call's context when a request failed while it was being written, so that the
 * caller knows the server cannot have acted on it and may send it again, even a put.
 *
 * <p>The case it is for: a pooled keep-alive connection the server has already reset (it closes
 * idle connections) is reused before the pool's idle check would look at it; writing the request
 * then fails. A request whose writing failed reached the server incomplete (its body shorter than
 * its Content-Length, or not at all), and a server acts only on whole requests. A failure after the
 * whole request was written (e.g. no answer) is not marked: the server may have acted on it.
 *
 * <p>Thread-safe: the mark lives in the per-call context.
 */
final class UnsentRequestTracker extends HttpRequestExecutor {
  /** Context attribute set to {@link Boolean#TRUE} when writing the request failed. */
  static final String UNSENT = "io.talos.client.request-unsent";

  static boolean unsent(HttpContext context) {
    return Boolean.TRUE.equals(context.getAttribute(UNSENT));
  }

  @Override
  public ClassicHttpResponse execute(ClassicHttpRequest request, HttpClientConnection conn,
      HttpResponseInformationCallback informationCallback, HttpContext context)
      throws IOException, HttpException {
    return super.execute(request, new Tracked(conn, context), informationCallback, context);
  }

  /** The connection, marking the context when a write of the request fails. */
  private static final class Tracked implements HttpClientConnection {
    private final HttpClientConnection conn;
    private final HttpContext context;

    Tracked(HttpClientConnection conn, HttpContext context) {
      this.conn = conn;
      this.context = context;
    }

    /** One step of sending the request; {@code X} is what else than I/O it may throw. */
    @FunctionalInterface
    private interface SendStep<X extends Exception> {
      void run() throws X, IOException;
    }

    /** Runs a step of sending the request; if it fails, the request did not reach the server whole. */
    private <X extends Exception> void sending(SendStep<X> step) throws X, IOException {
      try {
        step.run();
      } catch (IOException e) {
        context.setAttribute(UNSENT, Boolean.TRUE);
        throw e;
      }
    }

    @Override
    public void sendRequestHeader(ClassicHttpRequest request) throws HttpException, IOException {
      sending(() -> conn.sendRequestHeader(request));
    }

    @Override
    public void sendRequestEntity(ClassicHttpRequest request) throws HttpException, IOException {
      sending(() -> conn.sendRequestEntity(request));
    }

    @Override
    public void flush() throws IOException {
      // what the session buffer still holds of the request is written here: if that fails, the
      // request did not reach the server whole either
      sending(conn::flush);
    }

    @Override
    public boolean isConsistent() {
      return conn.isConsistent();
    }

    @Override
    public void terminateRequest(ClassicHttpRequest request) throws HttpException, IOException {
      conn.terminateRequest(request);
    }

    @Override
    public ClassicHttpResponse receiveResponseHeader() throws HttpException, IOException {
      return conn.receiveResponseHeader();
    }

    @Override
    public void receiveResponseEntity(ClassicHttpResponse response) throws HttpException, IOException {
      conn.receiveResponseEntity(response);
    }

    @Override
    public boolean isDataAvailable(Timeout timeout) throws IOException {
      return conn.isDataAvailable(timeout);
    }

    @Override
    public boolean isStale() throws IOException {
      return conn.isStale();
    }

    @Override
    public void close() throws IOException {
      conn.close();
    }

    @Override
    public void close(CloseMode closeMode) {
      conn.close(closeMode);
    }

    @Override
    public EndpointDetails getEndpointDetails() {
      return conn.getEndpointDetails();
    }

    @Override
    public SocketAddress getLocalAddress() {
      return conn.getLocalAddress();
    }

    @Override
    public SocketAddress getRemoteAddress() {
      return conn.getRemoteAddress();
    }

    @Override
    public ProtocolVersion getProtocolVersion() {
      return conn.getProtocolVersion();
    }

    @Override
    public SSLSession getSSLSession() {
      return conn.getSSLSession();
    }

    @Override
    public boolean isOpen() {
      return conn.isOpen();
    }

    @Override
    public Timeout getSocketTimeout() {
      return conn.getSocketTimeout();
    }

    @Override
    public void setSocketTimeout(Timeout timeout) {
      conn.setSocketTimeout(timeout);
    }
  }
}
