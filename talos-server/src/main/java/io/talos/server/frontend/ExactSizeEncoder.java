package io.talos.server.frontend;

import org.apache.thrift.TApplicationException;
import org.apache.thrift.TBase;
import org.apache.thrift.TConfiguration;
import org.apache.thrift.TException;
import org.apache.thrift.protocol.TCompactProtocol;
import org.apache.thrift.protocol.TMessage;
import org.apache.thrift.protocol.TProtocol;

/**
 * Encodes a Thrift compact message (a reply) into an array of exactly its size, or (gathered)
 * into one array for all but the large binary fields, which the reply refers to.
 *
 * <p>Thread-safe: each thread encodes with its own protocol and transport, made once and reused
 * for every reply (a {@link TCompactProtocol} allocates its scratch buffers when made; two per
 * reply, at thousands of replies a second, were a tenth of the server's garbage).
 */
public final class ExactSizeEncoder {
  private static final ThreadLocal<ExactSizeEncoder> PER_THREAD = ThreadLocal.withInitial(ExactSizeEncoder::new);

  private final ArrayTransport transport = new ArrayTransport();
  private final TCompactProtocol protocol = new TCompactProtocol(transport);

  private ExactSizeEncoder() {}

  /**
   * Encodes in two passes: the first only counts the bytes (a payload is counted, not copied), the
   * second writes into an array of exactly that size. Exactly one of {@code struct} and {@code
   * exception} is non-null. The reply is thus copied once, with no
   * growing buffer and no final trim, which matters for getMessage replies of megabytes.
   */
  @SuppressWarnings("rawtypes")
  public static byte[] encode(TMessage header, TBase struct, TApplicationException exception) {
    return PER_THREAD.get().encodeReply(header, struct, exception);
  }

  /**
   * As {@link #encode}, but a binary field of at least {@link #GATHER_MIN_BYTES} (a stored message
   * block) is not copied: the reply refers to it, between parts of one array that holds everything
   * else. A getMessage reply of megabytes then costs no array of its size, no zeroing of one and
   * no copy into it; its bytes are copied once, when written to the connection. The caller
   * guarantees that the struct's binary fields are not changed afterwards (see {@link
   * EncodedReply}).
   */
  @SuppressWarnings("rawtypes")
  public static EncodedReply encodeGathered(TMessage header, TBase struct) {
    return PER_THREAD.get().encodeGatheredReply(header, struct);
  }

  /** Smallest binary field a gathered reply refers to instead of copying (smaller ones are copied). */
  static final int GATHER_MIN_BYTES = 1024;

  @SuppressWarnings("rawtypes")
  private EncodedReply encodeGatheredReply(TMessage header, TBase struct) {
    try {
      transport.target(null);
      write(protocol, header, struct, null);
      int total = transport.length;
      int referenced = transport.gatherableBytes;
      byte[] framing = new byte[total - referenced];
      transport.gatherInto(framing);
      write(protocol, header, struct, null);
      java.util.List<java.nio.ByteBuffer> parts = transport.finishGather();
      if (transport.length != total) {
        throw new IllegalStateException("reply encoded to " + transport.length + " bytes, counted " + total);
      }
      return EncodedReply.ofParts(parts.toArray(new java.nio.ByteBuffer[0]));
    } catch (TException e) {
      throw new IllegalStateException("cannot encode a Thrift reply", e);
    } finally {
      transport.target(null);
    }
  }

  @SuppressWarnings("rawtypes")
  private byte[] encodeReply(TMessage header, TBase struct, TApplicationException exception) {
    try {
      transport.target(null);
      write(protocol, header, struct, exception);
      byte[] out = new byte[transport.length];
      transport.target(out);
      write(protocol, header, struct, exception);
      if (transport.length != out.length) {
        throw new IllegalStateException("reply encoded to " + transport.length + " bytes, counted " + out.length);
      }
      return out;
    } catch (TException e) {
      throw new IllegalStateException("cannot encode a Thrift reply", e);
    } finally {
      transport.target(null); // the reply is the caller's now
    }
  }

  @SuppressWarnings("rawtypes")
  private static void write(TProtocol out, TMessage header, TBase struct, TApplicationException exception)
      throws TException {
    out.reset(); // a pass that failed half-way left its struct nesting behind: cleared, never piles up
    out.writeMessageBegin(header);
    if (struct != null) struct.write(out);
    else exception.write(out);
    out.writeMessageEnd();
  }

  /**
   * A write-only transport into a fixed array, or (array null) one that only counts. Not
   * thread-safe; one per thread, retargeted for each encoding pass.
   */
  private static final class ArrayTransport extends org.apache.thrift.transport.TTransport {
    private byte[] array;
    int length;
    /** Counting pass: bytes of the binary fields a gathering pass would refer to. */
    int gatherableBytes;
    /** Gathering pass: the parts so far, or null in the other passes. */
    private java.util.List<java.nio.ByteBuffer> parts;
    /** Gathering pass: bytes written into {@code array}; {@code [partStart, arrayLength)} not yet a part. */
    private int arrayLength;
    private int partStart;

    /** Starts a pass that writes into {@code array} from its start, or (null) only counts. */
    void target(byte[] array) {
      this.array = array;
      this.length = 0;
      this.gatherableBytes = 0;
      this.parts = null;
    }

    /**
     * Starts a pass that writes everything but the gatherable binary fields into {@code framing}
     * and refers to those.
     */
    void gatherInto(byte[] framing) {
      target(framing);
      parts = new java.util.ArrayList<>();
      arrayLength = 0;
      partStart = 0;
    }

    /** Ends a gathering pass: its parts, in order. */
    java.util.List<java.nio.ByteBuffer> finishGather() throws org.apache.thrift.transport.TTransportException {
      if (arrayLength != array.length) {
        throw new org.apache.thrift.transport.TTransportException("reply framing " + arrayLength
            + " bytes, counted " + array.length);
      }
      closeArrayPart();
      java.util.List<java.nio.ByteBuffer> done = parts;
      parts = null;
      return done;
    }

    private void closeArrayPart() {
      if (arrayLength > partStart) parts.add(java.nio.ByteBuffer.wrap(array, partStart, arrayLength - partStart));
      partStart = arrayLength;
    }

    @Override
    public void write(byte[] buf, int off, int len) throws org.apache.thrift.transport.TTransportException {
      if (parts != null) {
        if (len > array.length - arrayLength) {
          throw new org.apache.thrift.transport.TTransportException("reply framing larger than counted");
        }
        System.arraycopy(buf, off, array, arrayLength, len);
        arrayLength += len;
      } else if (array != null) {
        if (len > array.length - length) {
          throw new org.apache.thrift.transport.TTransportException("reply larger than counted");
        }
        System.arraycopy(buf, off, array, length, len);
      }
      length += len;
    }

    /**
     * A binary field (a message payload): counted or copied straight from the buffer. TTransport's
     * own version copies it into a new array first, in both passes (the compact protocol writes
     * every binary field through here).
     */
    @Override
    public int write(java.nio.ByteBuffer buf) throws org.apache.thrift.transport.TTransportException {
      int len = buf.remaining();
      if (parts != null) {
        if (len >= GATHER_MIN_BYTES) {
          closeArrayPart();
          parts.add(buf.slice()); // a view: the reply refers to the block, which is never changed
          buf.position(buf.limit());
          length += len;
          return len;
        }
        if (len > array.length - arrayLength) {
          throw new org.apache.thrift.transport.TTransportException("reply framing larger than counted");
        }
        buf.get(array, arrayLength, len);
        arrayLength += len;
      } else if (array != null) {
        if (len > array.length - length) {
          throw new org.apache.thrift.transport.TTransportException("reply larger than counted");
        }
        buf.get(array, length, len);
      } else {
        buf.position(buf.limit());
        if (len >= GATHER_MIN_BYTES) gatherableBytes += len;
      }
      length += len;
      return len;
    }

    @Override
    public boolean isOpen() {
      return true;
    }

    @Override
    public void open() {}

    @Override
    public void close() {}

    @Override
    public int read(byte[] buf, int off, int len) throws org.apache.thrift.transport.TTransportException {
      throw new org.apache.thrift.transport.TTransportException("write-only transport");
    }

    @Override
    public TConfiguration getConfiguration() {
      return TConfiguration.DEFAULT;
    }

    @Override
    public void updateKnownMessageSize(long size) {}

    @Override
    public void checkReadBytesAvailable(long numBytes) {}
  }
}
