package io.talos.server.service;

import io.talos.common.errors.TalosErrors;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.MessageBlock;
import io.talos.thrift.MessageCompressionType;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.zip.GZIPInputStream;
import org.xerial.snappy.Snappy;

/**
 * Checks that a block holds exactly {@code messageNumber} well-framed messages of 1 to
 * {@code maxMessageBytes} bytes each, which the Talos SDK 2.0.2 can decode, before the server
 * stores it. The server never changes a block; it only refuses one that a consumer could not
 * decode (the SDK would retry such a block forever and the partition would be stuck behind it).
 *
 * <p>Payload format (Talos SDK 2.0.2): the messages serialized back to back, then compressed as a
 * whole (NONE; SNAPPY with snappy-java's stream framing, or a bare snappy buffer; GZIP). A
 * message is either
 * <pre>
 *   V2: 'V' u16(2) u8(0) | i64 createTimestamp | i16 messageType | i16 seqLen | seq | i32 dataLen | data
 *   V1: i32 seqLen | seq | i32 dataLen | data          (older SDKs; first byte is never 'V')
 * </pre>
 * all big-endian. The SDK reads the V2 sequence length as a signed short and assembles the V1
 * one from signed bytes, so lengths it would misread (V2 above 32767, V1 with a byte above 0x7F)
 * are refused.
 *
 * <p>Decompression is bounded: a block may expand to at most {@code maxUncompressedBytes}; a
 * snappy chunk's declared length is checked before anything is allocated. A tiny block claiming a
 * huge size costs nothing but its refusal. {@link Mode#NONE} skips the check (trusted producers;
 * saves the decompression).
 *
 * <p>Thread-safe; stateless.
 */
public final class MessageBlockValidator {
  public enum Mode { FULL, NONE }

  private static final int V2_MARKER = 'V';
  private static final byte[] SNAPPY_MAGIC = {(byte) 0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
  private static final int SNAPPY_HEADER_BYTES = SNAPPY_MAGIC.length + 8;

  private final Mode mode;
  private final int maxMessageBytes;
  private final long maxUncompressedBytes;

  public MessageBlockValidator(Mode mode, int maxMessageBytes, long maxUncompressedBytes) {
    this.mode = mode;
    this.maxMessageBytes = maxMessageBytes;
    this.maxUncompressedBytes = maxUncompressedBytes;
  }

  /** @param index the block's position in the request, for the error message */
  public void validate(int index, MessageBlock block) throws GalaxyTalosException {
    if (mode == Mode.NONE) return;
    byte[] payload = block.getMessageBlock(); // copies: for callers off the hot path
    if (payload == null) payload = new byte[0];
    validate(index, block.getMessageNumber(), block.getCompressionType(), payload, 0, payload.length);
  }

  /**
   * Validates the block whose payload is {@code payload[offset, offset + length)}; the bytes are
   * only read. Uncompressed payloads (and snappy ones, once inflated) are walked in place, without
   * stream objects; gzip goes through a bounded stream.
   *
   * @param index the block's position in the request, for the error message
   */
  public void validate(int index, int messageNumber, MessageCompressionType compression, byte[] payload,
      int offset, int length) throws GalaxyTalosException {
    if (mode == Mode.NONE) return;
    int[] seen = {0};
    try {
      switch (compression.getValue()) {
        case 0 -> walk(index, messageNumber, payload, offset, offset + length, seen);
        case 1 -> {
          byte[] raw = unsnappy(payload, offset, length);
          walk(index, messageNumber, raw, 0, raw.length, seen);
        }
        case 2 -> walkStream(index, messageNumber,
            new BoundedInputStream(new GZIPInputStream(new ByteArrayInputStream(payload, offset, length))), seen);
        default -> throw new IOException("unknown compression type " + compression.getValue());
      }
    } catch (EOFException e) {
      throw TalosErrors.invalidParams("block " + index + " ends after " + seen[0] + " whole messages but its"
          + " messageNumber is " + messageNumber);
    } catch (IOException | RuntimeException e) {
      // Corrupt compressed data surfaces as IOException or, from snappy's native code, as
      // SnappyError / runtime exceptions: all mean the same to the client.
      throw TalosErrors.invalidParams("block " + index + " payload is not valid "
          + compression + " data: " + e.getMessage());
    } catch (Error e) {
      if (e instanceof VirtualMachineError) throw e;
      throw TalosErrors.invalidParams("block " + index + " payload is not valid "
          + compression + " data: " + e);
    }
  }

  /** The message framing of {@code buf[pos, end)}, read in place; {@code seen[0]} counts whole messages. */
  private void walk(int index, int expected, byte[] buf, int pos, int end, int[] seen)
      throws GalaxyTalosException, EOFException {
    for (; seen[0] < expected; seen[0]++) {
      need(pos, end, 1);
      int first = buf[pos++] & 0xff;
      int dataLength;
      if (first == V2_MARKER) {
        need(pos, end, 3);
        int version = ((buf[pos] & 0xff) << 8) | (buf[pos + 1] & 0xff);
        pos += 3;
        if (version != 2) {
          throw TalosErrors.invalidParams("block " + index + " message " + seen[0] + " has format version "
              + version + "; supported: 1, 2");
        }
        need(pos, end, 8 + 2 + 2);
        pos += 8 + 2;
        int seqLength = (short) (((buf[pos] & 0xff) << 8) | (buf[pos + 1] & 0xff));
        pos += 2;
        if (seqLength < 0) {
          throw TalosErrors.invalidParams("block " + index + " message " + seen[0]
              + " has a sequence number over 32767 bytes, which SDK consumers cannot read");
        }
        need(pos, end, seqLength);
        pos += seqLength;
      } else {
        need(pos, end, 3);
        int b1 = buf[pos] & 0xff;
        int b2 = buf[pos + 1] & 0xff;
        int b3 = buf[pos + 2] & 0xff;
        pos += 3;
        if (((first | b1 | b2 | b3) & 0x80) != 0) {
          throw TalosErrors.invalidParams("block " + index + " message " + seen[0] + " is not a Talos message");
        }
        int seqLength = (first << 24) | (b1 << 16) | (b2 << 8) | b3;
        need(pos, end, seqLength);
        pos += seqLength;
      }
      need(pos, end, 4);
      dataLength = ((buf[pos] & 0xff) << 24) | ((buf[pos + 1] & 0xff) << 16) | ((buf[pos + 2] & 0xff) << 8)
          | (buf[pos + 3] & 0xff);
      pos += 4;
      if (dataLength < 1 || dataLength > maxMessageBytes) {
        throw TalosErrors.invalidParams("block " + index + " message " + seen[0] + " has " + dataLength
            + " bytes; a message has 1 to " + maxMessageBytes + " bytes (message.max.bytes)");
      }
      need(pos, end, dataLength);
      pos += dataLength;
    }
    if (pos != end) {
      throw TalosErrors.invalidParams("block " + index + " holds more than its messageNumber " + expected
          + " messages, or trailing bytes");
    }
  }

  private static void need(int pos, int end, int bytes) throws EOFException {
    if (end - pos < bytes) throw new EOFException();
  }

  /** As {@link #walk} over a stream (gzip: the inflated size is known only by reading). */
  private void walkStream(int index, int expected, InputStream stream, int[] seen)
      throws GalaxyTalosException, IOException {
    try (DataInputStream in = new DataInputStream(stream)) {
      for (; seen[0] < expected; seen[0]++) {
        int first = in.readUnsignedByte();
        int dataLength;
        if (first == V2_MARKER) {
          int version = in.readUnsignedShort();
          in.readUnsignedByte();
          if (version != 2) {
            throw TalosErrors.invalidParams("block " + index + " message " + seen[0] + " has format version "
                + version + "; supported: 1, 2");
          }
          in.skipNBytes(8 + 2);
          int seqLength = in.readShort();
          if (seqLength < 0) {
            throw TalosErrors.invalidParams("block " + index + " message " + seen[0]
                + " has a sequence number over 32767 bytes, which SDK consumers cannot read");
          }
          in.skipNBytes(seqLength);
          dataLength = in.readInt();
        } else {
          int b1 = in.readUnsignedByte();
          int b2 = in.readUnsignedByte();
          int b3 = in.readUnsignedByte();
          if (((first | b1 | b2 | b3) & 0x80) != 0) {
            throw TalosErrors.invalidParams("block " + index + " message " + seen[0] + " is not a Talos message");
          }
          in.skipNBytes((first << 24) | (b1 << 16) | (b2 << 8) | b3);
          dataLength = in.readInt();
        }
        if (dataLength < 1 || dataLength > maxMessageBytes) {
          throw TalosErrors.invalidParams("block " + index + " message " + seen[0] + " has " + dataLength
              + " bytes; a message has 1 to " + maxMessageBytes + " bytes (message.max.bytes)");
        }
        in.skipNBytes(dataLength);
      }
      if (in.read() != -1) {
        throw TalosErrors.invalidParams("block " + index + " holds more than its messageNumber " + expected
            + " messages, or trailing bytes");
      }
    }
  }

  /** snappy-java's stream framing (magic, version, compatible version, then length-prefixed chunks), or a bare snappy buffer. */
  private byte[] unsnappy(byte[] payload, int offset, int length) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    if (!hasSnappyMagic(payload, offset, length)) {
      appendChunk(payload, offset, length, out);
      return out.toByteArray();
    }
    if (length < SNAPPY_HEADER_BYTES) throw new EOFException();
    int end = offset + length;
    int pos = offset + SNAPPY_HEADER_BYTES;
    while (pos < end) {
      if (end - pos < 4) throw new IOException("truncated snappy chunk header");
      int chunk = ((payload[pos] & 0xff) << 24) | ((payload[pos + 1] & 0xff) << 16)
          | ((payload[pos + 2] & 0xff) << 8) | (payload[pos + 3] & 0xff);
      pos += 4;
      if (chunk <= 0 || chunk > end - pos) throw new IOException("snappy chunk length " + chunk + " is out of bounds");
      appendChunk(payload, pos, chunk, out);
      pos += chunk;
    }
    return out.toByteArray();
  }

  private void appendChunk(byte[] payload, int offset, int length, ByteArrayOutputStream out) throws IOException {
    long size = Snappy.uncompressedLength(payload, offset, length);
    if (size < 0 || out.size() + size > maxUncompressedBytes) {
      throw new IOException("it would decompress to more than " + maxUncompressedBytes
          + " bytes (message.block.uncompressed.max.bytes)");
    }
    byte[] chunk = new byte[(int) size];
    Snappy.uncompress(payload, offset, length, chunk, 0);
    out.write(chunk);
  }

  private static boolean hasSnappyMagic(byte[] payload, int offset, int length) {
    if (length < SNAPPY_MAGIC.length) return false;
    for (int i = 0; i < SNAPPY_MAGIC.length; i++) if (payload[offset + i] != SNAPPY_MAGIC[i]) return false;
    return true;
  }

  /** Fails once more than {@code maxUncompressedBytes} have been read (a decompression bomb). */
  private final class BoundedInputStream extends FilterInputStream {
    private long count;

    BoundedInputStream(InputStream in) {
      super(in);
    }

    @Override
    public int read() throws IOException {
      int b = super.read();
      if (b >= 0) count(1);
      return b;
    }

    @Override
    public int read(byte[] buf, int off, int len) throws IOException {
      int n = super.read(buf, off, len);
      if (n > 0) count(n);
      return n;
    }

    /** Skips by reading, so skipped bytes count too. */
    @Override
    public long skip(long n) throws IOException {
      byte[] sink = new byte[(int) Math.min(8192, Math.max(1, n))];
      long skipped = 0;
      while (skipped < n) {
        int r = read(sink, 0, (int) Math.min(sink.length, n - skipped));
        if (r < 0) break;
        skipped += r;
      }
      return skipped;
    }

    private void count(int n) throws IOException {
      count += n;
      if (count > maxUncompressedBytes) {
        throw new IOException("it decompresses to more than " + maxUncompressedBytes
            + " bytes (message.block.uncompressed.max.bytes)");
      }
    }
  }
}
