package io.talos.client.internals;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.client.TalosClientConfig;
import io.talos.client.TalosException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.thrift.protocol.TCompactProtocol;
import org.apache.thrift.protocol.TMessage;
import org.apache.thrift.protocol.TMessageType;
import org.apache.thrift.transport.TMemoryBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The connection handling of {@link TalosRpc} against a raw HTTP/1.1 server that can answer,
 * close a connection after answering, or keep a request waiting: keep-alive reuse, a connection
 * the server closed while idle, the per-server connection bound, and calls in progress ended by
 * {@link TalosRpc#close()} and by an interrupt.
 */
class TalosRpcConnectionTest {
  private static final byte[] ANSWER = "the answer".getBytes(StandardCharsets.UTF_8);

  /** What the server does with the next requests, in order; ANSWER once they run out. */
  enum Behaviour { ANSWER, ANSWER_THEN_CLOSE, ANSWER_THEN_RESET, HOLD }

  private RawHttpServer server;
  private TalosRpc rpc;

  @BeforeEach
  void start() throws IOException {
    server = new RawHttpServer();
  }

  @AfterEach
  void stop() throws Exception {
    if (rpc != null) rpc.close();
    server.close();
  }

  private TalosRpc rpc(TalosClientConfig.Builder config) {
    rpc = new TalosRpc(config.endpoint("http://127.0.0.1:" + server.port())
        .credentials("key", "secret").build());
    return rpc;
  }

  private byte[] call(TalosRpc client) {
    return client.exchange(TalosService.TOPIC, body(), null);
  }

  @Test
  void keepsTheConnectionAliveBetweenCalls() {
    TalosRpc client = rpc(TalosClientConfig.builder());
    for (int i = 0; i < 3; i++) assertArrayEquals(ANSWER, call(client));
    assertEquals(3, server.requests.get());
    assertEquals(1, server.connections.get());
  }

  @Test
  void replacesAConnectionTheServerClosedWhileIdle() throws Exception {
    TalosRpc client = rpc(TalosClientConfig.builder());
    server.next(Behaviour.ANSWER_THEN_CLOSE);
    assertArrayEquals(ANSWER, call(client));
    assertTrue(server.closedOne.await(5, TimeUnit.SECONDS));
    // idle past the validation age, as a connection the server's idle timeout closed would be
    Thread.sleep(TalosRpc.VALIDATE_AFTER_IDLE_MS + 200);

    assertArrayEquals(ANSWER, call(client));
    assertEquals(2, server.connections.get());
    assertEquals(2, server.requests.get());
  }

  @Test
  void sendsAgainARequestWhoseWritingFailed() throws Exception {
    TalosRpc client = rpc(TalosClientConfig.builder());
    server.next(Behaviour.ANSWER_THEN_RESET);
    assertArrayEquals(ANSWER, call(client));
    assertTrue(server.closedOne.await(5, TimeUnit.SECONDS));

    // at once, before the idle check: the reset connection is taken, writing on it fails, and
    // the request (which the server never got) goes out again on a new connection
    assertArrayEquals(ANSWER, call(client));
    assertEquals(2, server.connections.get());
    assertEquals(2, server.requests.get());
  }

  @Test
  void closeEndsACallInProgressAtOnce() throws Exception {
    TalosRpc client = rpc(TalosClientConfig.builder().requestTimeoutMs(60_000));
    server.next(Behaviour.HOLD);
    CompletableFuture<byte[]> held = CompletableFuture.supplyAsync(() -> call(client));
    assertTrue(server.holding.await(5, TimeUnit.SECONDS));

    long start = System.nanoTime();
    client.close();
    ExecutionException e = assertThrows(ExecutionException.class, () -> held.get(5, TimeUnit.SECONDS));
    assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) < 5_000);
    TalosException failure = assertInstanceOfTalos(e.getCause());
    assertTrue(failure.getMessage().startsWith("the Talos client was closed while waiting for"),
        failure.getMessage());
  }

  @Test
  void anInterruptEndsACallInProgress() throws Exception {
    TalosRpc client = rpc(TalosClientConfig.builder().requestTimeoutMs(60_000));
    server.next(Behaviour.HOLD);
    AtomicReference<Throwable> outcome = new AtomicReference<>();
    AtomicReference<Boolean> stillInterrupted = new AtomicReference<>();
    Thread caller = new Thread(() -> {
      try {
        call(client);
      } catch (Throwable t) {
        outcome.set(t);
        stillInterrupted.set(Thread.currentThread().isInterrupted());
      }
    });
    caller.start();
    assertTrue(server.holding.await(5, TimeUnit.SECONDS));

    caller.interrupt();
    caller.join(5_000);
    assertTrue(!caller.isAlive(), "the interrupted call is still waiting");
    TalosException failure = assertInstanceOfTalos(outcome.get());
    assertTrue(failure.getMessage().startsWith("interrupted while waiting for"), failure.getMessage());
    assertTrue(stillInterrupted.get(), "the interrupt status must stay set");
    // the pool goes on working for other callers
    assertArrayEquals(ANSWER, call(client));
  }

  @Test
  void boundsTheConnectionsToOneServer() throws Exception {
    TalosRpc client = rpc(TalosClientConfig.builder().maxConnectionsPerEndpoint(1)
        .connectTimeoutMs(300).requestTimeoutMs(60_000));
    server.next(Behaviour.HOLD);
    CompletableFuture<byte[]> held = CompletableFuture.supplyAsync(() -> call(client));
    assertTrue(server.holding.await(5, TimeUnit.SECONDS));

    TalosException e = assertThrows(TalosException.class, () -> call(client));
    assertTrue(e.getMessage().contains("no free connection")
        && e.getMessage().contains(TalosClientConfig.MAX_CONNECTIONS_PER_ENDPOINT + "=1"), e.getMessage());
    assertTrue(e.isRetriable());
    assertEquals(1, server.connections.get());
    held.cancel(true);
  }

  private static TalosException assertInstanceOfTalos(Throwable t) {
    assertTrue(t instanceof TalosException, String.valueOf(t));
    return (TalosException) t;
  }

  private static byte[] body() {
    try {
      TMemoryBuffer buffer = new TMemoryBuffer(64);
      new TCompactProtocol(buffer).writeMessageBegin(new TMessage("listTopics", TMessageType.CALL, 1));
      return Arrays.copyOf(buffer.getArray(), buffer.length());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** HTTP/1.1 over plain sockets, one thread per connection; just enough for these tests. */
  static final class RawHttpServer implements AutoCloseable {
    final ServerSocket socket = new ServerSocket(0);
    final AtomicInteger connections = new AtomicInteger();
    final AtomicInteger requests = new AtomicInteger();
    final CountDownLatch closedOne = new CountDownLatch(1);
    final CountDownLatch holding = new CountDownLatch(1);
    private final List<Behaviour> script = new CopyOnWriteArrayList<>();
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    RawHttpServer() throws IOException {
      acceptor = new Thread(this::accept, "raw-http-accept");
      acceptor.setDaemon(true);
      acceptor.start();
    }

    int port() {
      return socket.getLocalPort();
    }

    void next(Behaviour behaviour) {
      script.add(behaviour);
    }

    private synchronized Behaviour take() {
      return script.isEmpty() ? Behaviour.ANSWER : script.remove(0);
    }

    private void accept() {
      while (!socket.isClosed()) {
        try {
          Socket s = socket.accept();
          connections.incrementAndGet();
          open.add(s);
          Thread t = new Thread(() -> serve(s), "raw-http-conn");
          t.setDaemon(true);
          t.start();
        } catch (IOException e) {
          return;
        }
      }
    }

    private void serve(Socket s) {
      try (s) {
        InputStream in = s.getInputStream();
        OutputStream out = s.getOutputStream();
        while (true) {
          int length = RawHttpRequests.readHead(in);
          if (length < 0) return;
          in.readNBytes(length);
          requests.incrementAndGet();
          Behaviour b = take();
          if (b == Behaviour.HOLD) {
            holding.countDown();
            in.read(); // until the client goes away
            return;
          }
          out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/x-thrift\r\nContent-Length: "
              + ANSWER.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
          out.write(ANSWER);
          out.flush();
          if (b == Behaviour.ANSWER_THEN_CLOSE || b == Behaviour.ANSWER_THEN_RESET) {
            if (b == Behaviour.ANSWER_THEN_RESET) s.setSoLinger(true, 0);
            s.close();
            closedOne.countDown();
            return;
          }
        }
      } catch (IOException e) {
        // the client went away
      }
    }

    @Override
    public void close() throws IOException {
      socket.close();
      for (Socket s : open) s.close();
    }
  }
}
