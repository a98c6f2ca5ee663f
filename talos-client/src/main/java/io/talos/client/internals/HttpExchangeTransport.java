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
 *
 * <p>The request buffer is reused: a call takes its thread's spare buffer and gives it back once
 * the exchange is over (nothing holds the bytes after {@link TalosRpc#exchange} returns). A put
 * of a full batch needs an array of the batch's size; allocating and zeroing a new one for every
 * request was a tenth of a producer thread's work. A call made while another one on the same
 * thread holds the spare (none do today) simply allocates.
 */
final class HttpExchangeTransport extends TTransport {
  private final TalosRpc rpc;
  private final TalosService service;
  private final String endpoint;
  /** Largest buffer kept as a thread's spare; a larger request's array is left to the GC. */
  static final int SPARE_MAX_BYTES = 4 * 1024 * 1024;
  private static final ThreadLocal<byte[]> SPARE = new ThreadLocal<>();

  /** The request being written: {@code request[0, requestLength)}; null until the first write. */
  private byte[] request;
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
    // The buffer goes out as it is (no copy); a next call, if any, starts another.
    byte[] taken = request;
    byte[] body = taken == null ? new byte[0] : taken;
    int length = requestLength;
    request = null;
    requestLength = 0;
    try {
      response.reset(rpc.exchange(service, body, length, endpoint));
    } catch (TalosException e) {
      throw new ExchangeFailure(e);
    } finally {
      // Only a buffer this call took goes back (a call that wrote nothing took none).
      if (taken != null && taken.length <= SPARE_MAX_BYTES) SPARE.set(taken);
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
    if (request == null) {
      request = SPARE.get();
      SPARE.set(null);
      if (request == null) request = new byte[512];
    }
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
