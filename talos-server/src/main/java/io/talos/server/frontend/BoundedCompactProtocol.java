package io.talos.server.frontend;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.thrift.TException;
import org.apache.thrift.protocol.TCompactProtocol;
import org.apache.thrift.protocol.TList;
import org.apache.thrift.protocol.TMap;
import org.apache.thrift.protocol.TProtocolException;
import org.apache.thrift.protocol.TSet;
import org.apache.thrift.protocol.TStruct;
import org.apache.thrift.transport.TMemoryInputTransport;
import org.apache.thrift.transport.TTransportException;

/**
 * A {@link TCompactProtocol} reader for untrusted request bodies: nothing a body declares can make
 * the decoder allocate more than the body's own size, or recurse deeper than a fixed depth.
 *
 * <ul>
 *   <li>A container (list, set, map) may declare at most {@code maxContainerLength} elements and
 *       at most as many as the bytes left in the body (every compact value takes at least one
 *       byte; a map entry two). The stock protocol checks only against the message-size limit,
 *       and counts a struct element as zero bytes: a 40-byte body could declare a list of
 *       millions of structs and make the generated code pre-size an ArrayList for them.
 *   <li>A string or binary may declare at most the bytes left in the body.
 *   <li>Structs and containers nest at most {@code maxDepth} deep (the call's argument struct is
 *       depth 1). The generated readers and {@code TProtocolUtil.skip} recurse once per level
 *       without a bound of their own: deep nesting was a StackOverflowError.
 * </ul>
 * Violations are {@link TProtocolException}s whose message names the limit and its config key.
 *
 * <p>Reading only; one body at a time ({@link #start}), by one thread. Not thread-safe.
 */
final class BoundedCompactProtocol extends TCompactProtocol {
  static final String CONTAINER_KEY = "server.request.container.max.length";
  static final String DEPTH_KEY = "server.request.nesting.max.depth";
  /** What a decoder reads between bodies: nothing. */
  static final byte[] NO_BODY = new byte[0];

  private final TMemoryInputTransport in;
  private final int maxContainerLength;
  private final int maxDepth;
  private int depth;

  BoundedCompactProtocol(TMemoryInputTransport in, int maxContainerLength, int maxDepth) {
    super(in);
    this.in = in;
    this.maxContainerLength = maxContainerLength;
    this.maxDepth = maxDepth;
  }

  /**
   * Starts reading {@code body[0, length)}: a decoder is reused body after body by its thread.
   *
   * @throws TTransportException if the body is larger than the transport's maximum message size
   */
  void start(byte[] body, int length) throws TTransportException {
    in.reset(body, 0, length);
    in.updateKnownMessageSize(length); // as a transport made for this body does: checked against the maximum
    depth = 0;
    reset(); // the protocol's own state (field-id stack) a failed read may have left behind
  }

  /** Drops the body read last, so that the thread's decoder holds none between bodies. */
  void release() {
    in.reset(NO_BODY, 0, 0);
  }

  /** Bytes of the body not read yet. */
  int remaining() {
    return in.getBytesRemainingInBuffer();
  }

  @Override
  public TStruct readStructBegin() throws TException {
    enter();
    return super.readStructBegin();
  }

  @Override
  public void readStructEnd() throws TException {
    super.readStructEnd();
    depth--;
  }

  @Override
  public TList readListBegin() throws TException {
    enter();
    TList list = super.readListBegin();
    checkLength("list", list.size, 1);
    return list;
  }

  @Override
  public void readListEnd() throws TException {
    super.readListEnd();
    depth--;
  }

  @Override
  public TSet readSetBegin() throws TException {
    enter();
    TSet set = super.readSetBegin();
    checkLength("set", set.size, 1);
    return set;
  }

  @Override
  public void readSetEnd() throws TException {
    super.readSetEnd();
    depth--;
  }

  @Override
  public TMap readMapBegin() throws TException {
    enter();
    TMap map = super.readMapBegin();
    checkLength("map", map.size, 2);
    return map;
  }

  @Override
  public void readMapEnd() throws TException {
    super.readMapEnd();
    depth--;
  }

  @Override
  public String readString() throws TException {
    int length = readLength("string");
    if (length == 0) return "";
    String s = new String(in.getBuffer(), in.getBufferPosition(), length, StandardCharsets.UTF_8);
    in.consumeBuffer(length);
    return s;
  }

  /** A view of the body (no copy), as the stock protocol gives for an in-memory transport. */
  @Override
  public ByteBuffer readBinary() throws TException {
    int length = readLength("binary");
    if (length == 0) return ByteBuffer.allocate(0);
    ByteBuffer b = ByteBuffer.wrap(in.getBuffer(), in.getBufferPosition(), length);
    in.consumeBuffer(length);
    return b;
  }

  private void enter() throws TProtocolException {
    if (++depth > maxDepth) {
      throw new TProtocolException(TProtocolException.DEPTH_LIMIT, "structs and containers nest deeper than "
          + maxDepth + " levels (" + DEPTH_KEY + ")");
    }
  }

  private void checkLength(String kind, int size, int minBytesPerElement) throws TProtocolException {
    if (size < 0) {
      throw new TProtocolException(TProtocolException.NEGATIVE_SIZE, kind + " declares a negative length " + size);
    }
    if (size > maxContainerLength) {
      throw new TProtocolException(TProtocolException.SIZE_LIMIT, kind + " declares " + size
          + " elements; at most " + maxContainerLength + " (" + CONTAINER_KEY + ")");
    }
    if ((long) size * minBytesPerElement > remaining()) {
      throw new TProtocolException(TProtocolException.SIZE_LIMIT, kind + " declares " + size
          + " elements but only " + remaining() + " bytes of the body are left");
    }
  }

  /** The varint length prefix of a string or binary, checked against the bytes left. */
  private int readLength(String kind) throws TException {
    int length = 0;
    for (int shift = 0; ; shift += 7) {
      if (shift > 28) throw new TProtocolException(TProtocolException.INVALID_DATA, kind + " length is not a valid varint");
      byte b = readByte();
      length |= (b & 0x7f) << shift;
      if ((b & 0x80) == 0) break;
    }
    if (length < 0) {
      throw new TProtocolException(TProtocolException.NEGATIVE_SIZE, kind + " declares a negative length " + length);
    }
    if (length > remaining()) {
      throw new TProtocolException(TProtocolException.SIZE_LIMIT, kind + " declares " + length
          + " bytes but only " + remaining() + " bytes of the body are left");
    }
    return length;
  }
}
