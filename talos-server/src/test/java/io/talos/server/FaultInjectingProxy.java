package io.talos.server;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.MessageService;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.thrift.TException;
import org.apache.thrift.protocol.TCompactProtocol;
import org.apache.thrift.protocol.TMessage;
import org.apache.thrift.protocol.TMessageType;
import org.apache.thrift.transport.TMemoryBuffer;
import org.apache.thrift.transport.TMemoryInputTransport;

/**
 * An HTTP proxy in front of a real server that injects failures into putMessage requests, for
 * client tests that need the server to fail on cue: HTTP 503, a PARTITION_NOT_SERVING Thrift
 * error, or holding requests until released. A failed put is answered by the proxy and never
 * reaches the server (so it stores nothing); every other request is forwarded unchanged
 * (signatures do not cover the host). Thread-safe; loopback only.
 */
public final class FaultInjectingProxy implements AutoCloseable {
  /**
   * NONE forwards; HTTP_503 and PARTITION_NOT_SERVING answer without forwarding; LOST_ANSWER
   * forwards the put (the server stores it) and then answers 503, as if the answer was lost.
   */
  public enum Fault { NONE, HTTP_503, PARTITION_NOT_SERVING, LOST_ANSWER }

  private static final Set<String> UNFORWARDED = Set.of("host", "content-length", "connection",
      "expect", "upgrade", "transfer-encoding");

  private final URI target;
  private final HttpServer http;
  private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "fault-proxy");
    t.setDaemon(true);
    return t;
  });
  private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5)).build();
  private final ConcurrentLinkedQueue<Fault> nextPutFaults = new ConcurrentLinkedQueue<>();
  private volatile Fault everyPut = Fault.NONE;
  private volatile CountDownLatch hold;
  private final AtomicInteger putsReceived = new AtomicInteger();
  private final AtomicInteger putsFailed = new AtomicInteger();
  private final AtomicInteger putsHeld = new AtomicInteger();

  public FaultInjectingProxy(URI target) throws IOException {
    this.target = target;
    http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    http.createContext("/", this::handle);
    http.setExecutor(threads);
    http.start();
  }

  public String endpoint() {
    return "http://127.0.0.1:" + http.getAddress().getPort();
  }

  /** The next puts, one fault each in this order, then normal service. */
  public void failNextPuts(List<Fault> faults) {
    nextPutFaults.addAll(faults);
  }

  /** Every put gets this fault until {@link #reset}. */
  public void failEveryPut(Fault fault) {
    everyPut = fault;
  }

  /** Puts wait in the proxy (unanswered) until {@link #release}. */
  public void holdPuts() {
    hold = new CountDownLatch(1);
  }

  public void release() {
    CountDownLatch h = hold;
    hold = null;
    if (h != null) h.countDown();
  }

  public void reset() {
    nextPutFaults.clear();
    everyPut = Fault.NONE;
    release();
  }

  public int putsReceived() {
    return putsReceived.get();
  }

  public int putsFailed() {
    return putsFailed.get();
  }

  /** Puts waiting in the proxy now. */
  public int putsHeld() {
    return putsHeld.get();
  }

  @Override
  public void close() {
    reset();
    http.stop(0);
    threads.shutdownNow();
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      byte[] body = exchange.getRequestBody().readAllBytes();
      String query = exchange.getRequestURI().getRawQuery();
      if (query != null && query.endsWith("type=putMessage")) {
        putsReceived.incrementAndGet();
        Fault fault = nextPutFaults.poll();
        if (fault == null) fault = everyPut;
        if (fault == Fault.LOST_ANSWER) {
          putsFailed.incrementAndGet();
          forward(null, exchange, body);
          answerFault(exchange, body, Fault.HTTP_503);
          return;
        }
        if (fault != Fault.NONE) {
          putsFailed.incrementAndGet();
          answerFault(exchange, body, fault);
          return;
        }
        CountDownLatch h = hold;
        if (h != null) {
          putsHeld.incrementAndGet();
          try {
            h.await(60, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
          } finally {
            putsHeld.decrementAndGet();
          }
        }
      }
      forward(exchange, body);
    }
  }

  private void forward(HttpExchange exchange, byte[] body) throws IOException {
    forward(exchange, exchange, body);
  }

  /** Forwards the request of {@code exchange}; answers on {@code to} unless it is null (the answer is dropped). */
  private void forward(HttpExchange to, HttpExchange exchange, byte[] body) throws IOException {
    URI uri = URI.create(target.toString().replaceAll("/$", "") + exchange.getRequestURI().getRawPath()
        + (exchange.getRequestURI().getRawQuery() == null ? "" : "?" + exchange.getRequestURI().getRawQuery()));
    HttpRequest.Builder request = HttpRequest.newBuilder(uri)
        .method(exchange.getRequestMethod(), HttpRequest.BodyPublishers.ofByteArray(body));
    exchange.getRequestHeaders().forEach((name, values) -> {
      if (UNFORWARDED.contains(name.toLowerCase(Locale.ROOT))) return;
      for (String v : values) request.header(name, v);
    });
    HttpResponse<byte[]> response;
    try {
      response = client.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return;
    }
    if (to == null) return;
    response.headers().map().forEach((name, values) -> {
      String lower = name.toLowerCase(Locale.ROOT);
      if (lower.equals("content-type") || lower.startsWith("x-xiaomi")) {
        exchange.getResponseHeaders().put(name, values);
      }
    });
    byte[] reply = response.body();
    exchange.sendResponseHeaders(response.statusCode(), reply.length == 0 ? -1 : reply.length);
    if (reply.length > 0) exchange.getResponseBody().write(reply);
  }

  private static void answerFault(HttpExchange exchange, byte[] body, Fault fault) throws IOException {
    if (fault == Fault.HTTP_503) {
      byte[] text = "injected: service unavailable".getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", "text/plain");
      exchange.sendResponseHeaders(503, text.length);
      exchange.getResponseBody().write(text);
      return;
    }
    try {
      TMessage call = new TCompactProtocol(new TMemoryInputTransport(body)).readMessageBegin();
      TMemoryBuffer out = new TMemoryBuffer(256);
      TCompactProtocol p = new TCompactProtocol(out);
      p.writeMessageBegin(new TMessage(call.name, TMessageType.REPLY, call.seqid));
      new MessageService.putMessage_result().setE(new GalaxyTalosException()
          .setErrorCode(ErrorCode.PARTITION_NOT_SERVING)
          .setErrMsg("injected: partition is moving to another server")).write(p);
      p.writeMessageEnd();
      byte[] reply = out.getArray();
      int length = out.length();
      exchange.getResponseHeaders().set("Content-Type", "application/x-thrift-compact");
      exchange.sendResponseHeaders(200, length);
      exchange.getResponseBody().write(reply, 0, length);
    } catch (TException e) {
      throw new IOException(e);
    }
  }
}
