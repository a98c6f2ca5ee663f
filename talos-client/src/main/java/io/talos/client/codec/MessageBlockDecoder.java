package io.talos.client.codec;

import io.talos.client.consumer.ConsumedMessage;
import io.talos.thrift.MessageBlock;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPInputStream;
import org.xerial.snappy.SnappyInputStream;

/**
 * Reads the messages out of {@code MessageBlock}s in the format of {@link io.talos.client.codec}:
 * both message versions, all three compressions. Message {@code i} of a block gets offset
 * {@code startMessageOffset + i} and the block's append time when the block has one.
 *
 * <p>Bytes after the announced number of messages are ignored, as the SDK does.
 *
 * <p>Stateless and thread-safe.
 */
public final class MessageBlockDecoder {
  private static final byte VERSION_MARKER = 'V';

  private MessageBlockDecoder() {}

  /**
   * Decodes blocks in order and concatenates their messages.
   *
   * @throws CorruptMessageBlockException if a block's payload does not hold its messages
   */
  public static List<ConsumedMessage> decode(List<MessageBlock> blocks) {
    int total = 0;
    for (MessageBlock b : blocks) total += Math.max(0, b.getMessageNumber());
    List<ConsumedMessage> out = new ArrayList<>(total);
    for (MessageBlock b : blocks) decodeInto(b, out);
    return out;
  }

  /**
   * Decodes one block.
   *
   * @throws CorruptMessageBlockException if the payload does not hold the block's messages
   */
  public static List<ConsumedMessage> decode(MessageBlock block) {
    List<ConsumedMessage> out = new ArrayList<>(Math.max(0, block.getMessageNumber()));
    decodeInto(block, out);
    return out;
  }

  private static void decodeInto(MessageBlock block, List<ConsumedMessage> out) {
    CompressionType compression = CompressionType.fromWire(block.getCompressionType());
    if (compression == null) {
      throw corrupt(block, "unknown compression type " + block.getCompressionType(), null);
    }
    int expected = block.getMessageNumber();
    if (expected < 0) throw corrupt(block, "negative message count", null);
    if (block.messageBlock == null) throw corrupt(block, "no payload", null);
    ByteBuffer in = decompress(block, compression).order(ByteOrder.BIG_ENDIAN);
    long appendTimestampMs = block.isSetAppendTimestamp() ? block.getAppendTimestamp() : -1;
    long offset = block.getStartMessageOffset();
    for (int i = 0; i < expected; i++) {
      try {
        out.add(readMessage(in, offset + i, appendTimestampMs));
      } catch (BufferUnderflowException e) {
        throw corrupt(block, "payload ends inside message " + i + " of " + expected, e);
      } catch (IllegalArgumentException e) {
        throw corrupt(block, "message " + i + " of " + expected + ": " + e.getMessage(), e);
      }
    }
  }

  private static ConsumedMessage readMessage(ByteBuffer in, long offset, long appendTimestampMs) {
    if (in.remaining() < 4) throw new BufferUnderflowException();
    if (in.get(in.position()) == VERSION_MARKER) {
      in.get();
      int version = in.getShort() & 0xFFFF;
      in.get();
      if (version != 2) {
        throw new IllegalArgumentException("unsupported message version " + version);
      }
      long createTimestampMs = in.getLong();
      in.getShort(); // message type: always BINARY, nothing to do with it
      int seqLength = in.getShort() & 0xFFFF;
      String seq = seqLength == 0 ? null : readString(in, seqLength);
      byte[] payload = readBytes(in, in.getInt());
      return new ConsumedMessage(offset, payload, createTimestampMs, appendTimestampMs, seq);
    }
    int seqLength = in.getInt();
    String seq = seqLength == 0 ? null : readString(in, seqLength);
    int payloadLength = in.getInt();
    if (payloadLength == 0) throw new IllegalArgumentException("empty version 1 message");
    return new ConsumedMessage(offset, readBytes(in, payloadLength), -1, appendTimestampMs, seq);
  }

  private static String readString(ByteBuffer in, int length) {
    return new String(readBytes(in, length), StandardCharsets.UTF_8);
  }

  private static byte[] readBytes(ByteBuffer in, int length) {
    if (length < 0) throw new IllegalArgumentException("negative length " + length);
    if (length > in.remaining()) throw new BufferUnderflowException();
    byte[] bytes = new byte[length];
    in.get(bytes);
    return bytes;
  }

  /** The serialized messages; reads the block's buffer in place when it is not compressed. */
  private static ByteBuffer decompress(MessageBlock block, CompressionType compression) {
    ByteBuffer raw = block.messageBlock.duplicate(); // the getter may copy; this never does
    if (compression == CompressionType.NONE) return raw.slice();
    InputStream bytes = raw.hasArray()
        ? new ByteArrayInputStream(raw.array(), raw.arrayOffset() + raw.position(), raw.remaining())
        : new ByteArrayInputStream(block.getMessageBlock());
    try (InputStream in = compression == CompressionType.SNAPPY
        ? new SnappyInputStream(bytes) : new GZIPInputStream(bytes, 8192)) {
      return ByteBuffer.wrap(in.readAllBytes());
    } catch (IOException | RuntimeException e) {
      throw corrupt(block, "payload does not decompress: " + e.getMessage(), e);
    }
  }

  private static CorruptMessageBlockException corrupt(MessageBlock block, String why,
      Throwable cause) {
    return new CorruptMessageBlockException("corrupt message block (start offset "
        + block.getStartMessageOffset() + ", " + block.getMessageNumber() + " messages, "
        + block.getCompressionType() + "): " + why, cause);
  }
}
