package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.common.auth.GalaxySigner;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicService;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Slow-loris: a hundred connections that announce a large body and then trickle it byte by byte
 * must neither stall legitimate API calls nor the health check, and must themselves be cut.
 * Half of them hold only a key id (bad signature), half are validly signed (a misbehaving
 * client with the secret). The server gets fewer HTTP threads than there are tricklers.
 */
class SlowClientsTest {
  private static final int TRICKLERS = 100;
  private static final int HTTP_THREADS = 16;

  @TempDir
  static Path dataDir;

  static TalosServer server;
  static RawApi api;
  static TopicAndPartition tap;

  @BeforeAll
  static void start() throws Exception {
    server = TestServers.start(dataDir, ServerConfig.HTTP_THREADS_MAX, String.valueOf(HTTP_THREADS));
    api = new RawApi(server.endpoint(), server.adminCredential().secretKeyId(), server.adminCredential().secretKey());
    tap = new TopicAndPartition("slow", api.createTopic("slow", 1), 0);
  }

  @AfterAll
  static void stop() {
    if (server != null) server.close();
  }

  /** Request headers announcing a 1 MiB put body, signed with {@code secret} (null: a garbage signature). */
  static String trickleHeaders(URI endpoint, String keyId, String secret, int n) {
    String path = "/v1/api/message";
    String query = "id=slow" + n + "&type=putMessage";
    Map<String, List<String>> headers = new LinkedHashMap<>();
    headers.put("Content-Type", List.of("application/x-thrift-compact"));
    headers.put(GalaxySigner.TIMESTAMP, List.of(Long.toString(Instant.now().getEpochSecond())));
    // The body never completes, so its MD5 is never checked: a distinct value per connection
    // gives each a distinct signature (the replay guard would refuse copies).
    headers.put(GalaxySigner.CONTENT_MD5, List.of(String.format("%032x", 0xabcdef00L + n)));
    String signature = secret == null ? "bm90IGEgc2lnbmF0dXJl"
        : GalaxySigner.sign(secret, GalaxySigner.stringToSign("POST", path, query, headers));
    StringBuilder request = new StringBuilder("POST " + path + "?" + query + " HTTP/1.1\r\n");
    request.append("Host: ").append(endpoint.getHost()).append(':').append(endpoint.getPort()).append("\r\n");
    headers.forEach((k, v) -> request.append(k).append(": ").append(v.get(0)).append("\r\n"));
    request.append(GalaxySigner.AUTHORIZATION).append(": ").append(GalaxySigner.SCHEME_V3).append(' ')
        .append(keyId).append(':').append(signature).append("\r\n");
    request.append("Content-Length: ").append(1 << 20).append("\r\n\r\n");
    return request.toString();
  }

  /**
   * Reads what the server answers on a trickling connection until it closes it.
   *
   * @return the status line, "closed" (closed or reset without an answer) or "open" when the
   *     connection was still open after {@code timeoutMs}
   */
  static String outcome(Socket socket, long timeoutMs) throws IOException {
    socket.setSoTimeout((int) timeoutMs);
    StringBuilder head = new StringBuilder();
    try {
      InputStream in = socket.getInputStream();
      byte[] buffer = new byte[4096];
      for (int n; (n = in.read(buffer)) >= 0; ) {
        if (head.length() < 64) head.append(new String(buffer, 0, n, StandardCharsets.ISO_8859_1));
      }
    } catch (SocketTimeoutException e) {
      return "open";
    } catch (IOException reset) {
      // reset: the server closed while we were still sending
    }
    int eol = head.indexOf("\r\n");
    return eol > 0 ? head.substring(0, eol) : "closed";
  }

  /**
   * The minimum body rate guards against bodies that never finish, not against late ones: a body
   * that has wholly arrived is served however long it took. Headers first, then (after the grace
   * period, as a client or a server starved of CPU may) the whole body at once: the server used to
   * check the rate on that chunk before it noticed the body was complete, and answered 408.
   */
  @Test
  void aWholeBodyArrivingLateInOnePieceIsServed() throws Exception {
    String path = "/v1/api/topic";
    String query = "id=late1&type=describeTopic";
    byte[] body = RawApi.call("describeTopic",
        new TopicService.describeTopic_args(new io.talos.thrift.DescribeTopicRequest("slow")));
    Map<String, List<String>> headers = new LinkedHashMap<>();
    headers.put("Content-Type", List.of("application/x-thrift-compact"));
    headers.put(GalaxySigner.TIMESTAMP, List.of(Long.toString(Instant.now().getEpochSecond())));
    headers.put(GalaxySigner.CONTENT_SHA256, List.of(GalaxySigner.contentSha256Hex(body, 0, body.length)));
    String signature = GalaxySigner.sign(server.adminCredential().secretKey(),
        GalaxySigner.stringToSign("POST", path, query, headers));
    StringBuilder head = new StringBuilder("POST " + path + "?" + query + " HTTP/1.1\r\n");
    head.append("Host: 127.0.0.1:").append(server.endpoint().getPort()).append("\r\n");
    headers.forEach((k, v) -> head.append(k).append(": ").append(v.get(0)).append("\r\n"));
    head.append(GalaxySigner.AUTHORIZATION).append(": ").append(GalaxySigner.SCHEME_V3).append(' ')
        .append(server.adminCredential().secretKeyId()).append(':').append(signature).append("\r\n");
    head.append("Content-Length: ").append(body.length).append("\r\nConnection: close\r\n\r\n");
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(server.endpoint().getHost(), server.endpoint().getPort()), 5_000);
      OutputStream out = socket.getOutputStream();
      out.write(head.toString().getBytes(StandardCharsets.ISO_8859_1));
      out.flush();
      Thread.sleep(new ServerConfig(new java.util.Properties()).getLong(ServerConfig.REQUEST_BODY_RATE_GRACE_MS) + 700);
      out.write(body);
      out.flush();
      assertEquals("HTTP/1.1 200 OK", outcome(socket, 30_000));
    }
  }

  @Test
  void tricklingConnectionsStallNeitherTheApiNorHealthAndAreCut() throws Exception {
    URI endpoint = server.endpoint();
    List<Socket> sockets = new ArrayList<>();
    ScheduledExecutorService trickle = Executors.newSingleThreadScheduledExecutor();
    ExecutorService callers = Executors.newFixedThreadPool(4);
    HttpClient http = HttpClient.newHttpClient();
    try {
      for (int i = 0; i < TRICKLERS; i++) {
        Socket s = new Socket();
        s.connect(new InetSocketAddress(endpoint.getHost(), endpoint.getPort()), 5000);
        String secret = i % 2 == 0 ? null : server.adminCredential().secretKey();
        s.getOutputStream().write(trickleHeaders(endpoint, server.adminCredential().secretKeyId(), secret, i)
            .getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().write('x');
        sockets.add(s);
      }
      trickle.scheduleAtFixedRate(() -> {
        for (Socket s : sockets) {
          try {
            OutputStream out = s.getOutputStream();
            out.write('x');
            out.flush();
          } catch (IOException cut) {
            // the server closed it: expected sooner or later
          }
        }
      }, 250, 250, TimeUnit.MILLISECONDS);

      // Legitimate calls while every trickler is open, and on past the body rate's grace period.
      long worstNanos = 0;
      int calls = 0;
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      int i = 0;
      while (System.nanoTime() < until) {
        final int n = i++;
        long t0 = System.nanoTime();
        Future<String> call = callers.submit(() -> {
          switch (n % 4) {
            case 0:
              return String.valueOf(api.call("topic", "listTopics", new TopicService.listTopics_args(),
                  new TopicService.listTopics_result()).isSetSuccess());
            case 1:
              return String.valueOf(api.put(tap, List.of("legit " + n)) >= 0);
            case 2:
              return health(http, endpoint);
            default:
              return health(http, server.opsEndpoint());
          }
        });
        // Generous bound: without the fix these calls wait for a free thread that never comes.
        String result = call.get(15, TimeUnit.SECONDS);
        assertTrue(result.equals("true"), "call " + n + " answered " + result);
        worstNanos = Math.max(worstNanos, System.nanoTime() - t0);
        calls++;
      }
      System.out.printf("SlowClientsTest: %d legitimate calls with %d trickling connections open, worst %.1f ms%n",
          calls, TRICKLERS, worstNanos / 1e6);
      assertTrue(calls >= 8, "only " + calls + " calls in 5 s");
      assertEquals(calls / 4 + (calls % 4 > 1 ? 1 : 0), api.readAll(tap, 0).size());

      // Every trickler is answered and cut: key-id-only ones at once (bad signature), signed ones
      // once their rate is below the minimum after the grace period.
      for (int k = 0; k < sockets.size(); k++) {
        String outcome = outcome(sockets.get(k), 20_000);
        String expected = k % 2 == 0 ? "401" : "408";
        assertTrue(outcome.equals("closed") || outcome.contains(" " + expected + " "),
            "trickler " + k + " (expected HTTP " + expected + " or a closed connection): " + outcome);
      }
    } finally {
      trickle.shutdownNow();
      callers.shutdownNow();
      for (Socket s : sockets) s.close();
    }
  }

  @Test
  void bodiesBeyondTheInFlightBudgetAre503WithRetryAfter(@TempDir Path otherDir) throws Exception {
    int limit = 64 * 1024;
    try (TalosServer small = TestServers.start(otherDir, ServerConfig.REQUEST_MAX_BYTES, String.valueOf(limit),
        ServerConfig.REQUEST_BODY_INFLIGHT_MAX_BYTES, String.valueOf(limit));
        Socket first = new Socket(); Socket second = new Socket()) {
      URI endpoint = small.endpoint();
      String keyId = small.adminCredential().secretKeyId();
      String secret = small.adminCredential().secretKey();
      byte[] part = new byte[40 * 1024];
      first.connect(new InetSocketAddress(endpoint.getHost(), endpoint.getPort()), 5000);
      first.getOutputStream().write(trickleHeaders(endpoint, keyId, secret, 1).replace("1048576", "60000")
          .getBytes(StandardCharsets.US_ASCII));
      first.getOutputStream().write(part);
      first.getOutputStream().flush();
      // Until the server holds the first body (its whole declared length is reserved once its
      // first bytes arrive); then a second body cannot fit beside it.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (inflightBytes(small) < part.length && System.nanoTime() < deadline) Thread.sleep(20);
      assertEquals(60000, inflightBytes(small));
      second.connect(new InetSocketAddress(endpoint.getHost(), endpoint.getPort()), 5000);
      second.getOutputStream().write(trickleHeaders(endpoint, keyId, secret, 2).replace("1048576", "60000")
          .getBytes(StandardCharsets.US_ASCII));
      second.getOutputStream().write(part);
      second.getOutputStream().flush();
      second.setSoTimeout(10_000);
      String answer = new String(second.getInputStream().readNBytes(512), StandardCharsets.ISO_8859_1);
      assertTrue(answer.startsWith("HTTP/1.1 503 "), answer);
      assertTrue(answer.contains("Retry-After: 1"), answer);
      assertTrue(answer.contains("server.request.body.inflight.max.bytes"), answer);
      // Once the first connection is gone its bytes are returned and calls are served again.
      first.close();
      deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (inflightBytes(small) > 0 && System.nanoTime() < deadline) Thread.sleep(20);
      assertEquals(0, inflightBytes(small));
      RawApi smallApi = new RawApi(endpoint, keyId, secret);
      assertTrue(smallApi.call("topic", "listTopics", new TopicService.listTopics_args(),
          new TopicService.listTopics_result()).isSetSuccess());
    }
  }

  private static long inflightBytes(TalosServer server) {
    return ((Number) server.metrics().getGauges().get("http.body.inflight.bytes").getValue()).longValue();
  }

  private static String health(HttpClient http, URI base) throws Exception {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(base.resolve("/ops/health")).build(),
        HttpResponse.BodyHandlers.ofString());
    return String.valueOf(r.statusCode() == 200 && r.body().contains("status"));
  }
}
