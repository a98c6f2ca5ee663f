package io.talos.server.frontend;

import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Timer;
import io.talos.common.auth.GalaxySigner;
import io.talos.server.auth.Authenticator;
import io.talos.server.auth.Authenticator.AuthenticationException;
import io.talos.common.errors.TalosErrors;
import io.talos.server.metadata.Credential;
import io.talos.server.metadata.MetadataException;
import io.talos.server.scheduling.Admission;
import io.talos.server.scheduling.PoolMetrics;
import io.talos.server.scheduling.TaskPool;
import io.talos.server.scheduling.TaskPoolClosedException;
import io.talos.server.service.MessageServiceHandler;
import io.talos.thrift.ErrorCode;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Thrift-over-HTTP API: {@code POST /v1/api/{topic,message,consumer,quota}?id=..&type=method}
 * with one TCompactProtocol message as the body, exactly as the Talos SDK calls it.
 *
 * <p>Request path: check method and path (405 / 404), bound the body (413), authenticate (401 /
 * 412 with the server's {@code X-Xiaomi-Timestamp}), decode the call (400 when the body is not a
 * well-formed call). putMessage and getMessage are then handed to the {@link TaskPool} and the
 * Jetty thread is free: the response completes when a pool worker has served the call. Other
 * calls (admin, consumer groups: metadata operations) run on the Jetty thread. Either way the
 * answer is {@code 200 application/x-thrift} with the Thrift reply.
 * Error bodies are one line of plain text saying what was wrong.
 *
 * <p>Thread-safe; runs on Jetty's request threads.
 */
public final class ApiHandler extends Handler.Abstract {
  private static final Logger LOG = LoggerFactory.getLogger(ApiHandler.class);
  public static final String API_PREFIX = "/v1/api/";
  public static final String THRIFT_CONTENT_TYPE = "application/x-thrift";
  /** User-Agent prefix of our SDK, which understands Talos extension error codes. */
  public static final String TALOS_CLIENT_AGENT = "talos-java-client";

  private final Map<String, ThriftDispatcher> dispatchers;
  private final Authenticator authenticator;
  private final Clock clock;
  private final int maxRequestBytes;
  private final MetricRegistry metrics;
  private final TaskPool pool;
  private final long maxWaitingBytes;
  private final AtomicLong waitingBytes = new AtomicLong();
  private final MessageServiceHandler messages;
  private final int putPriority;
  private final int getPriority;
  private final StorageCalls storage;

  /**
   * @param services path segment after /v1/api/ (topic, message, consumer, quota) → its service,
   *     already wrapped in an {@link ErrorBoundary}, with the generated processor's function map
   */
  /**
   * @param pool serves putMessage and getMessage (the Jetty thread only parses and
   *     authenticates); every other call runs on the Jetty thread
   * @param maxWaitingBytes most request-body bytes held by pool tasks at once
   * @param messages the message service itself, for batched puts (group commit)
   */
  public ApiHandler(Map<String, Service> services, Authenticator authenticator, Clock clock,
      int maxRequestBytes, MetricRegistry metrics, TaskPool pool, long maxWaitingBytes, MessageServiceHandler messages) {
    this(services, authenticator, clock, maxRequestBytes, metrics, pool, maxWaitingBytes, messages, 0);
  }

  /**
   * @param storageThreads threads running the storage part of puts and gets, each waited for at
   *     most until its request's deadline (see {@link StorageCalls}); 0 runs it on the pool worker
   */
  public ApiHandler(Map<String, Service> services, Authenticator authenticator, Clock clock,
      int maxRequestBytes, MetricRegistry metrics, TaskPool pool, long maxWaitingBytes, MessageServiceHandler messages,
      int storageThreads) {
    this.storage = new StorageCalls(clock, pool.config().defaultDeadlineMs(), storageThreads);
    Map<String, ThriftDispatcher> d = new LinkedHashMap<>();
    services.forEach((name, s) -> d.put(name, new ThriftDispatcher(name, s.implementation(), s.functions(), maxRequestBytes)));
    this.dispatchers = Map.copyOf(d);
    this.authenticator = authenticator;
    this.clock = clock;
    this.maxRequestBytes = maxRequestBytes;
    this.metrics = metrics;
    this.pool = pool;
    this.maxWaitingBytes = maxWaitingBytes;
    metrics.gauge("pool.waiting.bytes", () -> waitingBytes::get);
    this.messages = messages;
    this.putPriority = pool.config().priorityOf("put");
    this.getPriority = pool.config().priorityOf("get");
  }

  /** A service implementation and its generated {@code Processor.getProcessMapView()}. */
  public record Service(Object implementation, @SuppressWarnings("rawtypes") Map functions) {}

  @Override
  public boolean handle(Request request, Response response, Callback callback) {
    String path = request.getHttpURI().getPath();
    if (path == null || !path.startsWith(API_PREFIX)) return false;
    ThriftDispatcher dispatcher = dispatchers.get(path.substring(API_PREFIX.length()));
    if (dispatcher == null) {
      return error(response, callback, 404, "no such API path " + path + "; the API paths are "
          + API_PREFIX + "{" + String.join(",", new java.util.TreeSet<>(dispatchers.keySet())) + "}");
    }
    if (!"POST".equals(request.getMethod())) {
      response.getHeaders().put(HttpHeader.ALLOW, "POST");
      return error(response, callback, 405, "method " + request.getMethod() + " not allowed on " + path + "; use POST");
    }
    Map<String, List<String>> headers = new LinkedHashMap<>();
    for (HttpField field : request.getHeaders()) {
      headers.computeIfAbsent(field.getName(), k -> new ArrayList<>()).add(field.getValue());
    }
    String query = request.getHttpURI().getQuery();
    // The headers first: an unauthenticated client cannot make the server read a large body.
    Authenticator.Claim claim;
    try {
      claim = authenticator.checkHeaders(headers);
    } catch (AuthenticationException e) {
      return authenticationError(response, callback, e);
    } catch (MetadataException e) {
      LOG.warn("cannot look up a credential", e);
      return error(response, callback, 503, "the metadata store is unavailable, retry later: " + e.getMessage());
    }

    long declared = request.getLength();
    byte[] body;
    try (InputStream in = Content.Source.asInputStream(request)) {
      if (declared > maxRequestBytes) {
        drain(in);
        return error(response, callback, 413, "request body of " + declared + " bytes exceeds the limit of "
            + maxRequestBytes + " bytes (server.request.max.bytes)");
      }
      body = in.readNBytes(maxRequestBytes + 1);
      if (body.length > maxRequestBytes) {
        drain(in);
        return error(response, callback, 413, "request body exceeds the limit of " + maxRequestBytes
            + " bytes (server.request.max.bytes)");
      }
    } catch (IOException e) {
      return error(response, callback, 400, "cannot read the request body: " + e.getMessage());
    }
    Credential credential;
    try {
      credential = authenticator.verify(claim, "POST", path, query, headers, body, body.length);
    } catch (AuthenticationException e) {
      return authenticationError(response, callback, e);
    }

    String agent = request.getHeaders().get(HttpHeader.USER_AGENT);
    RequestContext ctx = new RequestContext(credential,
        agent != null && agent.startsWith(TALOS_CLIENT_AGENT), queryParam(query, "id"));
    String method = queryParam(query, "type");
    ThriftDispatcher.Call call;
    try {
      call = dispatcher.decode(body, body.length, method);
    } catch (ThriftDispatcher.MalformedRequestException e) {
      return error(response, callback, 400, e.getMessage());
    }
    String service = path.substring(API_PREFIX.length());
    Timer.Context timer = metrics.timer("requests." + service + "." + call.method()).time();
    if (service.equals("message") && (call.method().equals("putMessage") || call.method().equals("getMessage"))) {
      // Request bodies held by waiting and running tasks are bounded too, not only their count.
      long held = body.length;
      boolean fits = waitingBytes.addAndGet(held) <= maxWaitingBytes;
      PendingReply pending = new PendingReply(response, callback, timer, () -> waitingBytes.addAndGet(-held));
      // The client's deadline is on the client's clock: move it onto ours by the offset its
      // signed X-Xiaomi-Timestamp shows (to the second).
      long clockOffsetMs = clock.millis() - claim.clientTimestampSecs() * 1000;
      MessageCallTask task = call.method().equals("putMessage")
          ? new PutTask(messages, call, ctx, pending, metrics, putPriority, clockOffsetMs, storage)
          : new GetTask(dispatcher, call, ctx, pending, metrics, getPriority, clockOffsetMs, storage);
      if (task.expiredAt(clock.millis())) {
        metrics.meter(PoolMetrics.EXPIRED).mark();
        task.expire(); // already past its deadline: answered at once, never queued
        return true;
      }
      Admission admission = fits ? pool.submit(task) : Admission.REJECTED_FULL;
      if (!admission.accepted()) {
        // Refused fast, never queued: the client retries later (or elsewhere).
        task.fail(admission == Admission.REJECTED_FULL
            ? TalosErrors.of(ErrorCode.EXCESSIVE_PENDING_MESSAGE, "the server has too many requests waiting"
                + " (scheduling.max.waiting.tasks / scheduling.max.waiting.bytes); retry later")
            : new TaskPoolClosedException());
      }
      return true;
    }
    byte[] reply;
    try {
      reply = dispatcher.execute(call, ctx);
    } catch (RuntimeException e) {
      // The services' ErrorBoundary answers every service error; this is a bug in the path itself.
      LOG.error("{} failed outside the service error boundary", call.method(), e);
      return error(response, callback, 500, "internal error serving " + call.method() + ": " + e);
    } finally {
      timer.stop();
    }
    response.setStatus(200);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, THRIFT_CONTENT_TYPE);
    response.write(true, ByteBuffer.wrap(reply), callback);
    return true;
  }

  @Override
  protected void doStop() throws Exception {
    storage.close();
    super.doStop();
  }

  private boolean authenticationError(Response response, Callback callback, AuthenticationException e) {
    metrics.meter("auth.failures").mark();
    if (e.httpStatus() == 412) {
      response.getHeaders().put(GalaxySigner.TIMESTAMP, Long.toString(clock.millis() / 1000));
    }
    return error(response, callback, e.httpStatus(), e.getMessage());
  }

  private boolean error(Response response, Callback callback, int status, String message) {
    metrics.meter("http.status." + status).mark();
    LOG.debug("HTTP {}: {}", status, message);
    response.setStatus(status);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain; charset=utf-8");
    response.write(true, ByteBuffer.wrap((message + "\n").getBytes(StandardCharsets.UTF_8)), callback);
    return true;
  }

  /**
   * Reads and discards the rest of a refused body, up to a few times the limit, so that the
   * client, still sending, gets to read the 413 instead of a connection reset. Beyond that the
   * connection is closed (Jetty does not reuse a connection with unread content).
   */
  private void drain(InputStream in) throws IOException {
    long budget = 4L * maxRequestBytes;
    byte[] sink = new byte[64 * 1024];
    for (int n; budget > 0 && (n = in.read(sink, 0, (int) Math.min(sink.length, budget))) >= 0; ) budget -= n;
  }

  static String queryParam(String query, String name) {
    if (query == null) return null;
    for (String part : query.split("&")) {
      int eq = part.indexOf('=');
      if (eq > 0 && part.substring(0, eq).equals(name)) return part.substring(eq + 1);
    }
    return null;
  }
}
