package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What an open connection costs the server, and how many it keeps. Each HTTP/1.1 connection
 * held a cache of the header lines it had seen (Jetty's per-connection field cache), built at its
 * second request: about 100 KB of heap per connection, so a few thousand idle keep-alive
 * connections filled the default heap, and nothing bounded how many a client could open.
 */
class HttpConnectionsEndToEndTest {
  @TempDir
  Path dataDir;

  /** A health check on the API port, as a keep-alive request with the header lines clients send. */
  private static byte[] healthRequest(URI endpoint) {
    return ("GET /ops/health HTTP/1.1\r\nHost: " + endpoint.getHost() + ":" + endpoint.getPort()
        + "\r\nUser-Agent: connection-cost-test/1.0\r\nAccept: application/json\r\nAccept-Encoding: gzip\r\n"
        + "Content-Type: application/x-thrift-compact\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
  }

  /** Reads one HTTP response with a Content-Length; returns its status line. */
  private static String readResponse(InputStream in) throws IOException {
    StringBuilder head = new StringBuilder();
    while (!head.toString().endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) throw new IOException("closed after " + head);
      head.append((char) b);
    }
    int length = 0;
    for (String line : head.toString().split("\r\n")) {
      if (line.regionMatches(true, 0, "Content-Length:", 0, 15)) length = Integer.parseInt(line.substring(15).trim());
    }
    in.readNBytes(length);
    return head.substring(0, head.indexOf("\r\n"));
  }

  private static Socket open(URI endpoint) throws IOException {
    Socket s = new Socket();
    s.connect(new InetSocketAddress(endpoint.getHost(), endpoint.getPort()), 5_000);
    s.setSoTimeout(10_000);
    return s;
  }

  private static void send(Socket s, URI endpoint) throws IOException {
    OutputStream out = s.getOutputStream();
    out.write(healthRequest(endpoint));
    out.flush();
  }

  private static void exchange(Socket s, URI endpoint) throws IOException {
    send(s, endpoint);
    assertEquals("HTTP/1.1 200 OK", readResponse(s.getInputStream()));
  }

  private static long heapUsedAfterGc() throws InterruptedException {
    long used = Long.MAX_VALUE;
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(50);
      used = Math.min(used, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
    }
    return used;
  }

  @Test
  void anIdleKeepAliveConnectionHoldsLittleHeap() throws Exception {
    int connections = 200;
    try (TalosServer server = TestServers.start(dataDir)) {
      URI endpoint = server.endpoint();
      try (Socket warm = open(endpoint)) {
        exchange(warm, endpoint);
        exchange(warm, endpoint);
      }
      long before = heapUsedAfterGc();
      List<Socket> sockets = new ArrayList<>();
      try {
        for (int i = 0; i < connections; i++) {
          Socket s = open(endpoint);
          sockets.add(s);
          exchange(s, endpoint); // two requests each: the field cache was built at the second
          exchange(s, endpoint);
        }
        long perConnection = (heapUsedAfterGc() - before) / connections;
        assertTrue(perConnection < 24 * 1024, "heap per idle keep-alive connection: " + perConnection + " B");
      } finally {
        for (Socket s : sockets) s.close();
      }
    }
  }

  /** Whether the answer to a request already sent on {@code s} comes within {@code waitMs}. */
  private static boolean answeredWithin(Socket s, long waitMs) throws IOException {
    s.setSoTimeout((int) waitMs);
    try {
      assertEquals("HTTP/1.1 200 OK", readResponse(s.getInputStream()));
      return true;
    } catch (SocketTimeoutException e) {
      return false;
    }
  }

  /**
   * At the limit the server stops accepting: a connection beyond it waits, unanswered, until one
   * closes or an idle one is cut (sooner than usual while at the limit); the ops listener still
   * answers, and says how many are open.
   */
  @Test
  void connectionsBeyondTheLimitWaitUntilOneCloses() throws Exception {
    int limit = 4;
    try (TalosServer server = TestServers.start(dataDir, ServerConfig.HTTP_CONNECTIONS_MAX, String.valueOf(limit),
        ServerConfig.HTTP_IDLE_TIMEOUT_MS, "30000")) {
      URI endpoint = server.endpoint();
      List<Socket> sockets = new ArrayList<>();
      try {
        for (int i = 0; i < limit; i++) {
          sockets.add(open(endpoint));
          exchange(sockets.get(i), endpoint);
        }
        Socket waiting = open(endpoint); // the kernel completes the handshake; the server does not accept it
        Socket alsoWaiting = open(endpoint);
        sockets.add(waiting);
        sockets.add(alsoWaiting);
        send(waiting, endpoint);
        send(alsoWaiting, endpoint);
        assertFalse(answeredWithin(waiting, 1000), "a connection beyond the limit was served");
        assertFalse(answeredWithin(alsoWaiting, 10), "a connection beyond the limit was served");

        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        String metrics = http.send(java.net.http.HttpRequest.newBuilder(server.opsEndpoint().resolve("/metrics")).build(),
            java.net.http.HttpResponse.BodyHandlers.ofString()).body();
        assertTrue(metrics.contains("talos_http_connections_open " + limit + ".0"), metrics);

        sockets.get(0).close();
        assertTrue(answeredWithin(waiting, 10_000), "a closed connection's place was not given to a waiting one");
        // The limit is reached again; the idle ones are cut after a tenth of the idle timeout.
        assertTrue(answeredWithin(alsoWaiting, 15_000), "idle connections were not cut at the limit");
      } finally {
        for (Socket s : sockets) s.close();
      }
    }
  }
}
