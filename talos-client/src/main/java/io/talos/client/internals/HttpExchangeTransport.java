package io.talos.client.internals;

import io.talos.client.TalosException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.apache.thrift.TConfiguration;
import org.apache.thrift.transport.TMemoryInputTransport;
import org.apache.thrift.transport.TTransport;
import org.apache.thrift.transport.TTransportException;

/**
 * A Thrift transport for exactly one call over HTTP: the generated client writes its request
 * into a buffer, {@link #flush()} POSTs the buffer through {@link TalosRpc#exchange} and the
 * client then reads the reply from the response body.
 *
 * <p>Not thread-safe; one instance per call.
 */
final class HttpExchangeTransport extends TTransport {
  private final TalosRpc rpc;
  private final TalosService service;
  private final String endpoint;
  /** The request being written: {@code request[0, requestLength)}. */
  private byte[] request = new byte[512];
  private int requestLength;
  private final TMemoryInputTransport response;

  HttpExchangeTransport(TalosRpc rpc, TalosService service) {
    this(rpc, service, null);
  }

  /** @param endpoint the node to send to, or null for the configured endpoint */
  HttpExchangeTransport(TalosRpc rpc, TalosService service, String endpoint) {
    this.endpoint = endpoint;
    this.rpc = rpc;
    this.service = service;
    try {
      // the whole reply is already in memory: no reason to cap what the protocol may read
      this.response = new TMemoryInputTransport(
          TConfiguration.custom().setMaxMessageSize(Integer.MAX_VALUE).build(), new byte[0]);
    } catch (TTransportException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Thrown by {@link #flush()} so that the caller gets back the exact failure. */
  static final class ExchangeFailure extends TTransportException {
    private static final long serialVersionUID = 1L;
    private final transient TalosException failure;

    ExchangeFailure(TalosException failure) {
      super(failure.getMessage(), failure);
      this.failure = failure;
    }

    TalosException failure() {
      return failure;
    }
  }

  @Override
  public void flush() throws TTransportException {
    // The buffer goes out as it is (no copy); a new one is started for a next call, if any.
    byte[] body = request;
    int length = requestLength;
    request = new byte[512];
    requestLength = 0;
    try {
      response.reset(rpc.exchange(service, body, length, endpoint));
    } catch (TalosException e) {
      throw new ExchangeFailure(e);
    }
  }

  @Override
  public void write(byte[] buf, int off, int len) {
    reserve(len);
    System.arraycopy(buf, off, request, requestLength, len);
    requestLength += len;
  }

  /**
   * Binary fields (a put's message block) arrive here as a read-only view: copied straight into
   * the request. TTransport's default copies them into a new array first, then into the request.
   */
  @Override
  public int write(ByteBuffer buffer) {
    int len = buffer.remaining();
    reserve(len);
    buffer.get(request, requestLength, len);
    requestLength += len;
    return len;
  }

  private void reserve(int len) {
    int needed = requestLength + len;
    if (needed > request.length) {
      if (needed < 0) throw new IllegalStateException("request larger than 2 GiB");
      // Room for the fields after a large message block too, so that it is copied once only.
      request = Arrays.copyOf(request, (int) Math.min(Integer.MAX_VALUE - 8,
          Math.max(2L * request.length, needed + 4096L)));
    }
  }

  @Override
  public int read(byte[] buf, int off, int len) throws TTransportException {
    return response.read(buf, off, len);
  }

  @Override
  public byte[] getBuffer() {
    return response.getBuffer();
  }

  @Override
  public int getBufferPosition() {
    return response.getBufferPosition();
  }

  @Override
  public int getBytesRemainingInBuffer() {
    return response.getBytesRemainingInBuffer();
  }

  @Override
  public void consumeBuffer(int len) {
    response.consumeBuffer(len);
  }

  @Override
  public TConfiguration getConfiguration() {
    return response.getConfiguration();
  }

  @Override
  public void updateKnownMessageSize(long size) throws TTransportException {
    response.updateKnownMessageSize(size);
  }

  @Override
  public void checkReadBytesAvailable(long numBytes) throws TTransportException {
    response.checkReadBytesAvailable(numBytes);
  }

  @Override
  public boolean isOpen() {
    return true;
  }

  @Override
  public void open() {}

  @Override
  public void close() {}
}
