package io.talos.client.internals;

import java.io.IOException;
import java.net.Socket;
import java.nio.channels.SocketChannel;
import javax.net.ssl.SSLContext;
import org.apache.hc.client5.http.socket.PlainConnectionSocketFactory;
import org.apache.hc.client5.http.ssl.SSLConnectionSocketFactory;
import org.apache.hc.core5.http.protocol.HttpContext;

/**
 * Sockets for the HTTP connection pool whose blocking connect, read and write end when the
 * waiting thread is interrupted, as the calls of the asynchronous JDK client did before.
 *
 * <p>A plain {@link Socket} ignores {@link Thread#interrupt()}: a producer closing with a timeout
 * (which interrupts its I/O threads) would wait for the answers still on their way. A socket
 * made from a {@link SocketChannel} is interruptible: the interrupt closes the channel and the
 * blocked call throws {@link java.nio.channels.ClosedByInterruptException} (the connection is
 * then discarded by the pool). Connect and read timeouts work on it as on a plain socket; TLS
 * is layered over it by the JDK's {@link javax.net.ssl.SSLSocketFactory} as over any socket.
 *
 * <p>Stateless and thread-safe.
 */
final class InterruptibleSocketFactory {
  private InterruptibleSocketFactory() {}

  /** Plain HTTP. */
  static PlainConnectionSocketFactory plain() {
    return new PlainConnectionSocketFactory() {
      @Override
      public Socket createSocket(HttpContext context) throws IOException {
        return newSocket();
      }
    };
  }

  /** HTTPS with {@code sslContext}, verifying the server's name as the JDK client did. */
  static SSLConnectionSocketFactory tls(SSLContext sslContext) {
    return new SSLConnectionSocketFactory(sslContext) {
      @Override
      public Socket createSocket(HttpContext context) throws IOException {
        return newSocket();
      }
    };
  }

  private static Socket newSocket() throws IOException {
    SocketChannel channel = SocketChannel.open();
    return channel.socket();
  }
}
