package io.talos.client.internals;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.talos.client.TalosClientConfig;
import io.talos.client.TalosException;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.thrift.protocol.TCompactProtocol;
import org.apache.thrift.protocol.TMessage;
import org.apache.thrift.protocol.TMessageType;
import org.apache.thrift.transport.TMemoryBuffer;
import org.junit.jupiter.api.Test;

/**
 * requestTimeoutMs bounds a call until its answer's headers arrive, also while the request is
 * still being written; a call racing close() ends as a call in progress does.
 */
class TalosRpcDeadlineTest {

  @Test
  void aServerThatStopsReadingTheRequestDoesNotHoldTheCallerForever() throws Exception {
    List<Socket> accepted = new CopyOnWriteArrayList<>();
    try (ServerSocket server = new ServerSocket(0)) {
      // accepts and never reads: a stalled (GC-paused, SIGSTOPped, overloaded) server
      Thread acceptor = new Thread(() -> {
        try {
          while (true) accepted.add(server.accept());
        } catch (Exception e) {
          // closed
        }
      });
      acceptor.setDaemon(true);
      acceptor.start();
      TalosRpc rpc = new TalosRpc(TalosClientConfig.builder()
          .endpoint("http://127.0.0.1:" + server.getLocalPort())
          .credentials("key", "secret").requestTimeoutMs(1_000).build());
      try {
        // a put of a batch of batch.max.bytes=16 MiB (ProducerConfig.MAX_BATCH_BYTES, allowed); larger
        // than what the socket buffers of both sides take while the server does not read
        byte[] body = body(io.talos.client.producer.ProducerConfig.MAX_BATCH_BYTES);
        // requestTimeoutMs=1000: the old JDK client failed the call after 1 s (HttpTimeoutException)
        TalosException e = assertTimeoutPreemptively(Duration.ofSeconds(10),
            () -> assertThrows(TalosException.class,
                () -> rpc.exchange(TalosService.MESSAGE, body, null)));
        org.junit.jupiter.api.Assertions.assertTrue(e.isRetriable(), e.getMessage());
        org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("requestTimeoutMs=1000")
            && e.getMessage().contains("may still take effect"), e.getMessage());
      } finally {
        rpc.close();
        for (Socket s : accepted) s.close();
      }
    }
  }

  /**
   * A call that passed invoke()'s closed check when close() runs (here: exchange() right after
   * close()) fails with a TalosException ("closed while waiting"), as a call in progress does,
   * not with the pool's shutdown IllegalStateException.
   */
  @Test
  void aCallRacingCloseFailsWithATalosException() throws Exception {
    try (ServerSocket server = new ServerSocket(0)) {
      TalosRpc rpc = new TalosRpc(TalosClientConfig.builder()
          .endpoint("http://127.0.0.1:" + server.getLocalPort())
          .credentials("key", "secret").build());
      rpc.close();
      byte[] body = body(16);
      Throwable t = assertThrows(Throwable.class, () -> rpc.exchange(TalosService.TOPIC, body, null));
      org.junit.jupiter.api.Assertions.assertTrue(t instanceof TalosException, String.valueOf(t));
      org.junit.jupiter.api.Assertions.assertTrue(t.getMessage().contains("closed while waiting"), t.getMessage());
    }
  }

  private static byte[] body(int size) throws Exception {
    TMemoryBuffer buffer = new TMemoryBuffer(64);
    new TCompactProtocol(buffer).writeMessageBegin(new TMessage("putMessage", TMessageType.CALL, 1));
    byte[] head = Arrays.copyOf(buffer.getArray(), buffer.length());
    byte[] body = new byte[size];
    System.arraycopy(head, 0, body, 0, head.length);
    return body;
  }
}
