package io.talos.server.service;

import io.talos.common.errors.TalosErrors;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.MessageBlock;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.util.zip.GZIPInputStream;
import org.xerial.snappy.SnappyInputStream;

/**
 * Checks that a block holds exactly {@code messageNumber} well-framed messages of 1 to
 * {@code maxMessageBytes} bytes each, before the server stores it. The server never changes a
 * block; it only refuses one that a consumer could not decode (the SDK would retry such a block
 * forever and the partition would be stuck behind it).
 *
 * <p>Payload format (Talos SDK 2.0.2): the messages serialized back to back, then compressed as a
 * whole (NONE; SNAPPY with snappy-java's stream framing; GZIP). A message is either
 * <pre>
 *   V2: 'V' u16(2) u8(0) | i64 createTimestamp | i16 messageType | u16 seqLen | seq | i32 dataLen | data
 *   V1: i32 seqLen | seq | i32 dataLen | data          (older SDKs; first byte is never 'V')
 * </pre>
 * all big-endian. {@link Mode#NONE} skips the check (trusted producers; saves the decompression).
 *
 * <p>Thread-safe; stateless.
 */
public final class MessageBlockValidator {
  public enum Mode { FULL, NONE }

  private static final int V2_MARKER = 'V';
  private static final int MAX_SEQUENCE_BYTES = 65535;

  private final Mode mode;
  private final int maxMessageBytes;

  public MessageBlockValidator(Mode mode, int maxMessageBytes) {
    this.mode = mode;
    this.maxMessageBytes = maxMessageBytes;
  }

  /** @param index the block's position in the request, for the error message */
  public void validate(int index, MessageBlock block) throws GalaxyTalosException {
    if (mode == Mode.NONE) return;
    byte[] payload = block.getMessageBlock();
    int expected = block.getMessageNumber();
    int seen = 0;
    try (DataInputStream in = new DataInputStream(open(block.getCompressionType().getValue(), payload))) {
      for (; seen < expected; seen++) {
        int first = in.readUnsignedByte();
        int dataLength;
        if (first == V2_MARKER) {
          int version = in.readUnsignedShort();
          in.readUnsignedByte();
          if (version != 2) {
            throw TalosErrors.invalidParams("block " + index + " message " + seen + " has format version "
                + version + "; supported: 1, 2");
          }
          in.skipNBytes(8 + 2);
          in.skipNBytes(in.readUnsignedShort());
          dataLength = in.readInt();
        } else {
          int seqLength = (first << 24) | (in.readUnsignedByte() << 16) | in.readUnsignedShort();
          if (seqLength < 0 || seqLength > MAX_SEQUENCE_BYTES) {
            throw TalosErrors.invalidParams("block " + index + " message " + seen + " is not a Talos message");
          }
          in.skipNBytes(seqLength);
          dataLength = in.readInt();
        }
        if (dataLength < 1 || dataLength > maxMessageBytes) {
          throw TalosErrors.invalidParams("block " + index + " message " + seen + " has " + dataLength
              + " bytes; a message has 1 to " + maxMessageBytes + " bytes (message.max.bytes)");
        }
        in.skipNBytes(dataLength);
      }
      if (in.read() != -1) {
        throw TalosErrors.invalidParams("block " + index + " holds more than its messageNumber " + expected
            + " messages, or trailing bytes");
      }
    } catch (EOFException e) {
      throw TalosErrors.invalidParams("block " + index + " ends after " + seen + " whole messages but its"
          + " messageNumber is " + expected);
    } catch (IOException e) {
      throw TalosErrors.invalidParams("block " + index + " payload is not valid "
          + block.getCompressionType() + " data: " + e.getMessage());
    }
  }

  private static InputStream open(int compressionType, byte[] payload) throws IOException {
    InputStream raw = new ByteArrayInputStream(payload);
    switch (compressionType) {
      case 0: return raw;
      case 1: return new SnappyInputStream(raw);
      case 2: return new GZIPInputStream(raw);
      default: throw new IOException("unknown compression type " + compressionType);
    }
  }
}
