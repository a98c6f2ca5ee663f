package io.talos.client.internals;

import io.talos.client.TalosClientConfig;
import io.talos.client.TalosException;
import io.talos.common.auth.GalaxySigner;
import io.talos.thrift.ConsumerService;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.MessageService;
import io.talos.thrift.QuotaService;
import io.talos.thrift.TopicService;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.LongSupplier;
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
 * <p>No other retries happen here. Thread-safe: the JDK HTTP client is shared and keeps
 * connections alive between calls; every call gets its own Thrift client and transport.
 */
public final class TalosRpc implements AutoCloseable {
  /** Bounds of a believable server clock (2010-01-01 to 2100-01-01), epoch seconds. */
  private static final long MIN_SERVER_EPOCH_SECONDS = 1_262_304_000L;
  private static final long MAX_SERVER_EPOCH_SECONDS = 4_102_444_800L;
  private static final int MAX_ERROR_BODY_CHARS = 2000;

  /** One Thrift call on a freshly made generated client. */
  @FunctionalInterface
  public interface Call<C, R> {
    R apply(C client) throws TException;
  }

  private final TalosClientConfig config;
  private final HttpClient http;
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
    this.http = HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofMillis(config.connectTimeoutMs()))
        .followRedirects(HttpClient.Redirect.NEVER)
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
    try {
      for (int attempt = 0; ; attempt++) {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri)
            .timeout(Duration.ofMillis(config.requestTimeoutMs()))
            .POST(new ByteArrayBodyPublisher(body, length));
        for (Map.Entry<String, String> h : signer.headers(path, query, body, length, nowMs()).entrySet()) {
          request.header(h.getKey(), h.getValue());
        }
        HttpResponse<byte[]> response =
            http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
        int status = response.statusCode();
        byte[] reply = response.body() == null ? new byte[0] : response.body();
        boolean thriftReply = response.headers().firstValue("Content-Type")
            .map(ct -> ct.startsWith("application/x-thrift")).orElse(false);
        if (status == 200 || (thriftReply && reply.length > 0)) return reply;
        if (status == 412 && attempt == 0 && adjustClock(response)) continue;
        throw TalosException.httpStatus(status, bodyText(reply));
      }
    } catch (HttpConnectTimeoutException e) {
      throw TalosException.transport("could not connect to " + endpoint + " within "
          + TalosClientConfig.CONNECT_TIMEOUT_MS + "=" + config.connectTimeoutMs(), true, e);
    } catch (HttpTimeoutException e) {
      throw TalosException.transport("no answer from " + endpoint + " to " + method
          + " within " + TalosClientConfig.REQUEST_TIMEOUT_MS + "=" + config.requestTimeoutMs()
          + " (the request may still take effect)", true, e);
    } catch (ConnectException e) {
      throw TalosException.transport("cannot connect to " + endpoint + ": "
          + (e.getMessage() == null ? "connection refused" : e.getMessage()), true, e);
    } catch (IOException e) {
      throw TalosException.transport("I/O error talking to " + endpoint + " (" + method
          + "): " + e, true, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw TalosException.transport("interrupted while waiting for " + endpoint
          + " (" + method + ")", false, e);
    }
  }

  /** Drops the connection pool; later calls fail with IllegalStateException. Idempotent. */
  @Override
  public void close() {
    closed = true;
    // java.net.http.HttpClient is AutoCloseable from JDK 21 on; on 17 its connections go with it
    if (http instanceof AutoCloseable closeable) {
      try {
        closeable.close();
      } catch (Exception ignored) {
        // closing is best effort: nothing the caller could do about it
      }
    }
  }

  private boolean adjustClock(HttpResponse<?> response) {
    String value = response.headers().firstValue(GalaxySigner.TIMESTAMP).orElse(null);
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
