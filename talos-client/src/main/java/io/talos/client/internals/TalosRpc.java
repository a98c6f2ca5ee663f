package io.talos.client.internals;

import io.talos.client.TalosClientConfig;
import io.talos.client.TalosException;
import io.talos.common.auth.GalaxySigner;
import io.talos.thrift.ConsumerService;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.MessageService;
import io.talos.thrift.QuotaService;
import io.talos.thrift.TopicService;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.channels.ClosedByInterruptException;
import java.nio.charset.StandardCharsets;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.LongSupplier;
import javax.net.ssl.SSLContext;
import org.apache.hc.client5.http.ConnectTimeoutException;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManager;
import org.apache.hc.client5.http.io.ManagedHttpClientConnection;
import org.apache.hc.client5.http.protocol.HttpClientContext;
import org.apache.hc.client5.http.socket.ConnectionSocketFactory;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.ConnectionRequestTimeoutException;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpEntity;
import org.apache.hc.core5.http.config.RegistryBuilder;
import org.apache.hc.core5.http.io.HttpConnectionFactory;
import org.apache.hc.core5.http.io.entity.ByteArrayEntity;
import org.apache.hc.core5.io.CloseMode;
import org.apache.hc.core5.pool.PoolConcurrencyPolicy;
import org.apache.hc.core5.pool.PoolReusePolicy;
import org.apache.hc.core5.util.TimeValue;
import org.apache.hc.core5.util.Timeout;
import org.apache.thrift.TApplicationException;
import org.apache.thrift.TException;
import org.apache.thrift.protocol.TCompactProtocol;
import org.apache.thrift.protocol.TMessage;
import org.apache.thrift.protocol.TProtocol;
import org.apache.thrift.transport.TMemoryInputTransport;

/**
 * Calls Talos services: each call is one signed HTTP POST of a TCompactProtocol message to
 * {@code <endpoint>/v1/api/<service>?id=<8-char request id>&type=<method>}, answered by one
 * Thrift reply (see {@link RequestSigner} for the headers).
 *
 * <p>Failures come out as {@link TalosException}: the server's {@code GalaxyTalosException}
 * with its code; a non-200 HTTP status without a Thrift reply with that status and the
 * response body as message; no answer at all with the cause. A reply with a non-200 status but
 * a Thrift content type is read as a normal reply, as the SDK does.
 *
 * <p>Clock skew: when the server answers 412 with its time in {@code X-Xiaomi-Timestamp}, the
 * offset between that time and the local clock is remembered for all later requests and the
 * request is signed again and sent once more.
 *
 * <p>Transport: a call is a blocking HTTP/1.1 exchange on the calling thread (Apache HttpClient
 * classic): our callers already have a thread per call in progress (a producer's I/O threads, a
 * consumer's fetch threads), so nothing is handed to other threads. Connections are kept alive
 * in a pool of at most {@code maxConnectionsPerEndpoint} per server; a call holds one for its
 * whole exchange. A connection idle for more than {@link #VALIDATE_AFTER_IDLE_MS} is checked
 * before it is used again, so that one the server closed meanwhile (it closes idle connections,
 * after 30 s by default) is replaced instead of failing the call. Redirects are not followed.
 * An answer's body is read into memory as it arrives (never sized from its Content-Length
 * alone); one longer than {@code maxResponseBytes}, declared or actual, fails the call (not
 * retriable) and its connection is dropped.
 * Interrupting a waiting caller ends its call (see {@link InterruptibleSocketFactory});
 * {@link #close()} ends the calls in progress at once.
 *
 * <p>A request whose writing failed (a kept-alive connection the server had reset) is sent once
 * more on a new connection (see {@link UnsentRequestTracker}); no other retries happen here.
 * Thread-safe: the HTTP client and its pool are shared; every call gets its own Thrift client
 * and transport.
 */
public final class TalosRpc implements AutoCloseable {
  /** Bounds of a believable server clock (2010-01-01 to 2100-01-01), epoch seconds. */
  private static final long MIN_SERVER_EPOCH_SECONDS = 1_262_304_000L;
  private static final long MAX_SERVER_EPOCH_SECONDS = 4_102_444_800L;
  private static final int MAX_ERROR_BODY_CHARS = 2000;
  /**
   * An answer's buffer starts at most this large and grows (doubling) as bytes arrive: a declared
   * Content-Length is a claim, and a broken or hostile server or proxy must not make the client
   * take memory for bytes it never sends.
   */
  static final int FIRST_BODY_CHUNK_BYTES = 64 * 1024;
  /**
   * A declared Content-Length is believed up to this much (the whole buffer taken at once): a
   * usual get's answer (a few MiB) is then read into one array, without copies as it grows, and
   * a false claim costs at most this.
   */
  static final int FIRST_DECLARED_BODY_BYTES = 4 * 1024 * 1024;
  /**
   * A pooled connection idle this long is checked (a 1 ms read for an end of stream) before it
   * carries a call; below it the check would cost more than the rare stale connection.
   */
  static final long VALIDATE_AFTER_IDLE_MS = 1000;

  /**
   * Ends calls that got no answer's headers within {@code requestTimeoutMs}: socket reads have a
   * timeout, writes and a TLS handshake do not, so a server that stops reading a large request
   * would otherwise hold its caller for ever. One daemon thread for every client in the JVM;
   * cancelled deadlines leave its queue at once.
   */
  private static final ScheduledThreadPoolExecutor DEADLINES = newDeadlineTimer();

  private static ScheduledThreadPoolExecutor newDeadlineTimer() {
    ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, "talos-client-deadlines");
      t.setDaemon(true);
      return t;
    });
    timer.setRemoveOnCancelPolicy(true);
    return timer;
  }

  /** One Thrift call on a freshly made generated client. */
  @FunctionalInterface
  public interface Call<C, R> {
    R apply(C client) throws TException;
  }

  private final TalosClientConfig config;
  private final PoolingHttpClientConnectionManager pool;
  private final CloseableHttpClient http;
  private final RequestSigner signer;
  private final LongSupplier localClockMs;
  private final AtomicLong clockOffsetMs = new AtomicLong();
  private volatile boolean closed;
  private final PartitionRouter router = new PartitionRouter(this);

  public TalosRpc(TalosClientConfig config) {
    this(config, System::currentTimeMillis);
  }

  /** @param localClockMs the local clock, replaceable in tests */
  public TalosRpc(TalosClientConfig config, LongSupplier localClockMs) {
    this.config = config;
    this.localClockMs = localClockMs;
    this.signer = new RequestSigner(config.secretKeyId(), config.secretKey(), config.bodyDigest());
    SSLContext tls;
    try {
      tls = SSLContext.getDefault();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JVM has no default TLS context", e);
    }
    // LAX: a per-server bound without the pool-wide lock the strict policy takes on every lease
    this.pool = new PoolingHttpClientConnectionManager(
        RegistryBuilder.<ConnectionSocketFactory>create()
            .register("http", InterruptibleSocketFactory.plain())
            .register("https", InterruptibleSocketFactory.tls(tls))
            .build(),
        PoolConcurrencyPolicy.LAX, PoolReusePolicy.LIFO, TimeValue.NEG_ONE_MILLISECOND,
        (HttpConnectionFactory<ManagedHttpClientConnection>) null);
    pool.setDefaultMaxPerRoute(config.maxConnectionsPerEndpoint());
    pool.setMaxTotal(Integer.MAX_VALUE);
    pool.setDefaultConnectionConfig(ConnectionConfig.custom()
        .setConnectTimeout(Timeout.ofMilliseconds(config.connectTimeoutMs()))
        .setValidateAfterInactivity(TimeValue.ofMilliseconds(VALIDATE_AFTER_IDLE_MS))
        .build());
    this.http = HttpClients.custom()
        .setConnectionManager(pool)
        .setDefaultRequestConfig(RequestConfig.custom()
            .setConnectionRequestTimeout(Timeout.ofMilliseconds(config.connectTimeoutMs()))
            .setResponseTimeout(Timeout.ofMilliseconds(config.requestTimeoutMs()))
            .setExpectContinueEnabled(false)
            .build())
        .setRequestExecutor(new UnsentRequestTracker())
        .disableAutomaticRetries()
        .disableRedirectHandling()
        .disableCookieManagement()
        .disableAuthCaching()
        .disableContentCompression()
        .disableConnectionState()
        .disableDefaultUserAgent()
        .build();
  }

  public TalosClientConfig config() {
    return config;
  }

  /** The local clock corrected by what the server said about skew, epoch ms. */
  public long nowMs() {
    return localClockMs.getAsLong() + clockOffsetMs.get();
  }

  /** How far the local clock is behind the server's, as learned from 412 answers, in ms. */
  public long clockOffsetMs() {
    return clockOffsetMs.get();
  }

  public <R> R topic(Call<TopicService.Client, R> call) {
    return invoke(TalosService.TOPIC, TopicService.Client::new, call);
  }

  public <R> R message(Call<MessageService.Client, R> call) {
    return invoke(TalosService.MESSAGE, MessageService.Client::new, call);
  }

  public <R> R credential(Call<io.talos.thrift.CredentialService.Client, R> call) {
    return invoke(TalosService.CREDENTIAL, io.talos.thrift.CredentialService.Client::new, call);
  }

  /**
   * A putMessage or getMessage of {@code partition}, sent straight to the node that serves it
   * when the servers form a cluster (see {@link PartitionRouter}); else to the configured endpoint.
   */
  public <R> R message(io.talos.thrift.TopicAndPartition partition, Call<MessageService.Client, R> call) {
    return router.call(partition, call);
  }

  /** The Talos cluster extension (partition map for direct routing). */
  public <R> R cluster(Call<io.talos.thrift.ClusterService.Client, R> call) {
    return invoke(TalosService.CLUSTER, io.talos.thrift.ClusterService.Client::new, call);
  }

  /** As {@link #message(Call)}, sent to {@code endpoint} ({@code http://host:port}) instead of the configured one. */
  <R> R message(String endpoint, Call<MessageService.Client, R> call) {
    return invoke(TalosService.MESSAGE, MessageService.Client::new, call, endpoint);
  }

  public <R> R consumer(Call<ConsumerService.Client, R> call) {
    return invoke(TalosService.CONSUMER, ConsumerService.Client::new, call);
  }

  public <R> R quota(Call<QuotaService.Client, R> call) {
    return invoke(TalosService.QUOTA, QuotaService.Client::new, call);
  }

  private <C, R> R invoke(TalosService service, Function<TProtocol, C> newClient, Call<C, R> call) {
    return invoke(service, newClient, call, null);
  }

  private <C, R> R invoke(TalosService service, Function<TProtocol, C> newClient, Call<C, R> call, String endpoint) {
    if (closed) throw new IllegalStateException("the Talos client is closed");
    HttpExchangeTransport transport = new HttpExchangeTransport(this, service, endpoint);
    try {
      return call.apply(newClient.apply(new TCompactProtocol(transport)));
    } catch (GalaxyTalosException e) {
      throw TalosException.fromServer(e);
    } catch (HttpExchangeTransport.ExchangeFailure e) {
      throw e.failure();
    } catch (TApplicationException e) {
      throw TalosException.transport("the server could not process the "
          + service.name().toLowerCase(Locale.ROOT) + " request: " + e.getMessage(), false, e);
    } catch (TException e) {
      throw TalosException.transport("unreadable reply from " + config.endpoint() + ": "
          + e.getMessage(), false, e);
    }
  }

  /**
   * POSTs one serialized Thrift call and returns the reply body.
   *
   * @throws TalosException when there is no Thrift reply
   */
  byte[] exchange(TalosService service, byte[] body, String endpointOrNull) {
    return exchange(service, body, body.length, endpointOrNull);
  }

  /**
   * As {@link #exchange(TalosService, byte[], String)} with the body {@code body[0, length)}; the
   * array is sent as it is (not copied) and must not change until this returns.
   */
  byte[] exchange(TalosService service, byte[] body, int length, String endpointOrNull) {
    String endpoint = endpointOrNull == null ? config.endpoint() : endpointOrNull;
    String method = methodName(body, length);
    String query = "id=" + requestId() + "&type=" + method;
    URI uri = URI.create(endpoint + service.path() + "?" + query);
    String path = uri.getRawPath();
    boolean clockAdjusted = false;
    boolean resent = false;
    while (true) {
      HttpPost request = new HttpPost(uri);
      // over the array itself: a put's batch is not copied again on its way out
      request.setEntity(new ByteArrayEntity(body, 0, length, null));
      for (Map.Entry<String, String> h : signer.headers(path, query, body, length, nowMs()).entrySet()) {
        request.setHeader(h.getKey(), h.getValue());
      }
      HttpClientContext context = HttpClientContext.create();
      AtomicBoolean timedOut = new AtomicBoolean();
      ScheduledFuture<?> deadline = DEADLINES.schedule(() -> {
        timedOut.set(true);
        request.cancel(); // closes the connection: a blocked write or handshake fails at once
      }, config.requestTimeoutMs(), TimeUnit.MILLISECONDS);
      Answer answer;
      try {
        answer = http.execute(request, context, response -> {
          deadline.cancel(false); // the headers are here; reads have their own timeout now
          try {
            return answer(response, config.maxResponseBytes());
          } catch (ResponseTooLargeException e) {
            // drop the connection: closing the body would otherwise read the rest of it
            request.cancel();
            throw e;
          }
        });
      } catch (ResponseTooLargeException e) {
        throw TalosException.transport(e.getMessage() + " from " + endpoint + " (" + method + ")", false, e);
      } catch (IOException e) {
        if (timedOut.get()) throw noAnswer(endpoint, method, e);
        // Writing the request failed (a kept-alive connection the server had reset): the server
        // got no whole request, so sending it once more on a new connection is safe.
        if (!resent && !closed && UnsentRequestTracker.unsent(context)
            && !Thread.currentThread().isInterrupted()) {
          resent = true;
          continue;
        }
        throw failure(e, endpoint, method);
      } catch (IllegalStateException e) {
        // the pool refuses leases once closed: a call that raced close() ends as one in progress
        if (closed) throw closedWhileWaiting(endpoint, method, e);
        throw e;
      } finally {
        deadline.cancel(false);
      }
      if (answer.status == 200 || (answer.thrift && answer.body.length > 0)) return answer.body;
      if (answer.status == 412 && !clockAdjusted && adjustClock(answer.serverTime)) {
        clockAdjusted = true;
        continue;
      }
      throw TalosException.httpStatus(answer.status, bodyText(answer.body));
    }
  }

  /** What {@link #exchange} needs of a response, read while its connection is held. */
  private record Answer(int status, boolean thrift, byte[] body, String serverTime) {}

  private static Answer answer(ClassicHttpResponse response, int maxBytes) throws IOException {
    Header contentType = response.getFirstHeader("Content-Type");
    Header serverTime = response.getFirstHeader(GalaxySigner.TIMESTAMP);
    return new Answer(response.getCode(),
        contentType != null && contentType.getValue().startsWith("application/x-thrift"),
        readBody(response.getEntity(), maxBytes), serverTime == null ? null : serverTime.getValue());
  }

  /** An answer longer than {@code maxResponseBytes}, declared or as it arrived. */
  private static final class ResponseTooLargeException extends IOException {
    private static final long serialVersionUID = 1L;

    ResponseTooLargeException(String message) {
      super(message);
    }
  }

  /**
   * The whole body in one array of its exact length. The array starts at the declared length
   * up to {@link #FIRST_DECLARED_BODY_BYTES}, or at {@link #FIRST_BODY_CHUNK_BYTES} without one,
   * and doubles as bytes arrive, up to the declared length: memory taken is at most about twice
   * what arrived, plus the first array, whatever Content-Length claims.
   *
   * @throws ResponseTooLargeException when the declared or actual length exceeds {@code maxBytes}
   * @throws EOFException when the body ends before its declared length
   */
  static byte[] readBody(HttpEntity entity, int maxBytes) throws IOException {
    if (entity == null) return new byte[0];
    long declared = entity.getContentLength(); // -1 when not declared (chunked, or until close)
    if (declared > maxBytes) {
      throw new ResponseTooLargeException("the reply declares " + declared + " bytes, more than "
          + TalosClientConfig.MAX_RESPONSE_BYTES + "=" + maxBytes);
    }
    long limit = declared >= 0 ? declared : maxBytes;
    // Not closed on a failure: closing reads the rest of the body (to reuse the connection);
    // the caller drops the connection first, and HttpClient closes the response then.
    InputStream in = entity.getContent();
    if (in == null) return new byte[0];
    byte[] body = new byte[(int) Math.min(limit,
        declared >= 0 ? FIRST_DECLARED_BODY_BYTES : FIRST_BODY_CHUNK_BYTES)];
    int n = 0;
    while (true) {
      if (n == body.length) {
        if (n == limit) {
          if (declared >= 0 || in.read() < 0) break;
          throw new ResponseTooLargeException("the reply is longer than "
              + TalosClientConfig.MAX_RESPONSE_BYTES + "=" + maxBytes + " bytes");
        }
        body = Arrays.copyOf(body, (int) Math.min(limit, Math.max(1, 2L * n)));
      }
      int read = in.read(body, n, body.length - n);
      if (read < 0) break;
      n += read;
    }
    if (declared >= 0 && n < declared) {
      throw new EOFException("the reply ended after " + n + " of its " + declared + " bytes");
    }
    in.close(); // all read: releases the connection for reuse
    return n == body.length ? body : Arrays.copyOf(body, n);
  }

  private TalosException failure(IOException e, String endpoint, String method) {
    if (closed) return closedWhileWaiting(endpoint, method, e);
    // a read or connect that was interrupted closed its channel; a wait for the pool keeps
    // the interrupt status set
    if (e instanceof ClosedByInterruptException || Thread.currentThread().isInterrupted()) {
      Thread.currentThread().interrupt();
      return TalosException.transport("interrupted while waiting for " + endpoint
          + " (" + method + ")", false, e);
    }
    if (e instanceof ConnectionRequestTimeoutException) {
      return TalosException.transport("no free connection to " + endpoint + " within "
          + TalosClientConfig.CONNECT_TIMEOUT_MS + "=" + config.connectTimeoutMs() + ": "
          + TalosClientConfig.MAX_CONNECTIONS_PER_ENDPOINT + "="
          + config.maxConnectionsPerEndpoint() + " calls to it are in progress", true, e);
    }
    if (e instanceof ConnectTimeoutException) {
      return TalosException.transport("could not connect to " + endpoint + " within "
          + TalosClientConfig.CONNECT_TIMEOUT_MS + "=" + config.connectTimeoutMs(), true, e);
    }
    if (e instanceof SocketTimeoutException) return noAnswer(endpoint, method, e);
    if (e instanceof ConnectException) {
      Throwable reason = e.getCause() instanceof ConnectException ? e.getCause() : e;
      return TalosException.transport("cannot connect to " + endpoint + ": "
          + (reason.getMessage() == null ? "connection refused" : reason.getMessage()), true, e);
    }
    return TalosException.transport("I/O error talking to " + endpoint + " (" + method
        + "): " + e, true, e);
  }

  private TalosException noAnswer(String endpoint, String method, Exception e) {
    return TalosException.transport("no answer from " + endpoint + " to " + method
        + " within " + TalosClientConfig.REQUEST_TIMEOUT_MS + "=" + config.requestTimeoutMs()
        + " (the request may still take effect)", true, e);
  }

  private static TalosException closedWhileWaiting(String endpoint, String method, Exception e) {
    return TalosException.transport("the Talos client was closed while waiting for " + endpoint
        + " (" + method + ")", false, e);
  }

  /**
   * Drops the connection pool, closing its connections at once: calls in progress (e.g. a
   * long-poll fetch the server holds) fail promptly, as does a call that raced this; later calls
   * fail with IllegalStateException. Idempotent.
   */
  @Override
  public void close() {
    closed = true;
    pool.close(CloseMode.IMMEDIATE);
    http.close(CloseMode.IMMEDIATE);
  }

  private boolean adjustClock(String value) {
    if (value == null) return false;
    long serverSeconds;
    try {
      serverSeconds = Long.parseLong(value.strip());
    } catch (NumberFormatException e) {
      return false;
    }
    if (serverSeconds <= MIN_SERVER_EPOCH_SECONDS || serverSeconds >= MAX_SERVER_EPOCH_SECONDS) {
      return false;
    }
    clockOffsetMs.set(serverSeconds * 1000 - localClockMs.getAsLong());
    return true;
  }

  private static String methodName(byte[] body, int length) {
    try {
      TMessage message = new TCompactProtocol(new TMemoryInputTransport(body, 0, length)).readMessageBegin();
      return message.name;
    } catch (TException e) {
      throw new IllegalStateException("the generated client wrote an unreadable message", e);
    }
  }

  private static String requestId() {
    String hex = Integer.toHexString(ThreadLocalRandom.current().nextInt());
    return "0".repeat(8 - hex.length()) + hex;
  }

  private static String bodyText(byte[] body) {
    String text = new String(body, StandardCharsets.UTF_8);
    return text.length() <= MAX_ERROR_BODY_CHARS ? text
        : text.substring(0, MAX_ERROR_BODY_CHARS) + "... (" + body.length + " bytes)";
  }
}
