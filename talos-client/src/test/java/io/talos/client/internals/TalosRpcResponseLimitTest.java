package io.talos.client.internals;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.client.TalosClientConfig;
import io.talos.client.TalosException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.thrift.protocol.TCompactProtocol;
import org.apache.thrift.protocol.TMessage;
import org.apache.thrift.protocol.TMessageType;
import org.apache.thrift.transport.TMemoryBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An answer's memory follows what arrives, not what its Content-Length claims, and an answer
 * over maxResponseBytes (declared or actual) fails its call, not retriable; a legitimate answer
 * of several MiB is read whole.
 */
class TalosRpcResponseLimitTest {
  private static final int MIB = 1024 * 1024;

  private final List<Socket> accepted = new CopyOnWriteArrayList<>();
  private ServerSocket server;
  private TalosRpc rpc;

  @AfterEach
  void stop() throws IOException {
    if (rpc != null) rpc.close();
    if (server != null) server.close();
    for (Socket s : accepted) s.close();
  }

  /** What the raw server writes after reading a request. */
  private record Reply(String headers, byte[] body, boolean closeAfter) {}

  /** Answers every request on every connection with {@code reply}; holds the connection after it unless closeAfter. */
  private void serve(Reply reply) throws IOException {
    server = new ServerSocket(0);
    Thread acceptor = new Thread(() -> {
      try {
        while (true) {
          Socket s = server.accept();
          accepted.add(s);
          Thread t = new Thread(() -> answer(s, reply), "raw-http-conn");
          t.setDaemon(true);
          t.start();
        }
      } catch (IOException e) {
        // closed
      }
    }, "raw-http-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  private static void answer(Socket s, Reply reply) {
    try (s) {
      InputStream in = s.getInputStream();
      OutputStream out = s.getOutputStream();
      while (true) {
        int length = RawHttpRequests.readHead(in);
        if (length < 0) return;
        in.readNBytes(length);
        out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/x-thrift\r\n" + reply.headers() + "\r\n")
            .getBytes(StandardCharsets.US_ASCII));
        out.write(reply.body());
        out.flush();
        if (reply.closeAfter()) return;
        if (!reply.headers().contains("Content-Length: " + reply.body().length + "\r\n")) {
          while (in.read() >= 0) {
            // holds: more body is owed, never sent; until the client goes away
          }
          return;
        }
      }
    } catch (IOException e) {
      // the client went away
    }
  }

  private TalosRpc rpc(TalosClientConfig.Builder config) {
    rpc = new TalosRpc(config.endpoint("http://127.0.0.1:" + server.getLocalPort())
        .credentials("key", "secret").build());
    return rpc;
  }

  private static byte[] request() {
    try {
      TMemoryBuffer buffer = new TMemoryBuffer(64);
      new TCompactProtocol(buffer).writeMessageBegin(new TMessage("listTopics", TMessageType.CALL, 1));
      return Arrays.copyOf(buffer.getArray(), buffer.length());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static byte[] bytes(int n) {
    byte[] b = new byte[n];
    new Random(n).nextBytes(b);
    return b;
  }

  private static long allocatedByThisThread() {
    return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
  }

  @Test
  void refusesAReplyDeclaringMoreThanTheLimitWithoutWaitingForIt() throws Exception {
    // claims 2,000,000,000 bytes, sends 5, then holds the connection
    serve(new Reply("Content-Length: 2000000000\r\n", bytes(5), false));
    TalosRpc client = rpc(TalosClientConfig.builder().requestTimeoutMs(60_000));
    TalosException e = assertTimeoutPreemptively(Duration.ofSeconds(20), () -> assertThrows(TalosException.class,
        () -> client.exchange(TalosService.TOPIC, request(), null)));
    assertTrue(e.getMessage().contains("the reply declares 2000000000 bytes, more than maxResponseBytes=67108864"),
        e.getMessage());
    assertFalse(e.isRetriable(), "the same server would answer the same");
  }

  @Test
  void takesMemoryForTheBytesThatArriveNotForTheDeclaredLength() throws Exception {
    serve(new Reply("Content-Length: 2000000000\r\n", bytes(5), true)); // claims 2 GB, sends 5 bytes, closes
    TalosRpc client = rpc(TalosClientConfig.builder().maxResponseBytes(TalosClientConfig.MAX_ARRAY_BYTES));
    // the first call on this thread (class loading, the first connection) is not measured
    assertThrows(TalosException.class, () -> client.exchange(TalosService.TOPIC, request(), null));
    long before = allocatedByThisThread();
    TalosException e = assertThrows(TalosException.class, () -> client.exchange(TalosService.TOPIC, request(), null));
    long allocated = allocatedByThisThread() - before;
    assertTrue(allocated < TalosRpc.FIRST_DECLARED_BODY_BYTES + 2 * MIB, "allocated " + allocated + " bytes for a reply of 5 bytes (" + e.getMessage() + ")");
    assertTrue(e.isRetriable(), "a reply cut short is a broken connection: " + e.getMessage());
  }

  @Test
  void refusesAnHonestReplyOverTheLimit() throws Exception {
    serve(new Reply("Content-Length: " + (MIB + 1) + "\r\n", bytes(MIB + 1), false));
    TalosRpc client = rpc(TalosClientConfig.builder().maxFetchBytes(MIB).maxResponseBytes(MIB));
    TalosException e = assertThrows(TalosException.class, () -> client.exchange(TalosService.TOPIC, request(), null));
    assertTrue(e.getMessage().contains("the reply declares 1048577 bytes, more than maxResponseBytes=1048576"),
        e.getMessage());
    assertFalse(e.isRetriable());
  }

  @Test
  void refusesAReplyWithoutLengthOnceItPassesTheLimit() throws Exception {
    // no Content-Length: the body lasts until the server closes the connection
    serve(new Reply("Connection: close\r\n", bytes(MIB + 1), true));
    TalosRpc client = rpc(TalosClientConfig.builder().maxFetchBytes(MIB).maxResponseBytes(MIB));
    TalosException e = assertThrows(TalosException.class, () -> client.exchange(TalosService.TOPIC, request(), null));
    assertTrue(e.getMessage().contains("the reply is longer than maxResponseBytes=1048576 bytes"), e.getMessage());
    assertFalse(e.isRetriable());
  }

  @Test
  void refusesAnEndlessChunkedReplyOncePastTheLimitWithoutReadingTheRest() throws Exception {
    server = new ServerSocket(0);
    Thread t = new Thread(() -> {
      try (Socket s = server.accept()) {
        accepted.add(s);
        RawHttpRequests.readHead(s.getInputStream());
        OutputStream out = s.getOutputStream();
        out.write("HTTP/1.1 200 OK\r\nContent-Type: application/x-thrift\r\nTransfer-Encoding: chunked\r\n\r\n"
            .getBytes(StandardCharsets.US_ASCII));
        byte[] chunk = bytes(64 * 1024);
        byte[] size = (Integer.toHexString(chunk.length) + "\r\n").getBytes(StandardCharsets.US_ASCII);
        while (true) { // never ends, until the client goes away
          out.write(size);
          out.write(chunk);
          out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
        }
      } catch (IOException e) {
        // the client went away
      }
    }, "raw-http-endless");
    t.setDaemon(true);
    t.start();
    TalosRpc client = rpc(TalosClientConfig.builder().maxFetchBytes(MIB).maxResponseBytes(MIB));
    TalosException e = assertTimeoutPreemptively(Duration.ofSeconds(20), () -> assertThrows(TalosException.class,
        () -> client.exchange(TalosService.TOPIC, request(), null)));
    assertTrue(e.getMessage().contains("the reply is longer than maxResponseBytes=1048576 bytes"), e.getMessage());
    assertFalse(e.isRetriable());
  }

  @Test
  void readsALegitimateReplyOfSeveralMebibytesWhole() throws Exception {
    byte[] body = bytes(6 * MIB + 7);
    serve(new Reply("Content-Length: " + body.length + "\r\n", body, false));
    TalosRpc client = rpc(TalosClientConfig.builder());
    assertArrayEquals(body, client.exchange(TalosService.TOPIC, request(), null));
    assertArrayEquals(body, client.exchange(TalosService.TOPIC, request(), null), "the connection was kept");
  }

  @Test
  void readsAReplyWithoutLengthUpToExactlyTheLimit() throws Exception {
    byte[] body = bytes(MIB);
    serve(new Reply("Connection: close\r\n", body, true));
    TalosRpc client = rpc(TalosClientConfig.builder().maxFetchBytes(MIB).maxResponseBytes(MIB));
    assertArrayEquals(body, client.exchange(TalosService.TOPIC, request(), null));
  }
}
