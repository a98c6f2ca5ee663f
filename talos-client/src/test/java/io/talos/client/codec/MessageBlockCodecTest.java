package io.talos.client.codec;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.client.consumer.ConsumedMessage;
import io.talos.thrift.MessageBlock;
import io.talos.thrift.MessageCompressionType;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class MessageBlockCodecTest {

  @ParameterizedTest
  @EnumSource(CompressionType.class)
  void shouldRoundTripMessagesWithEveryCompression(CompressionType compression) {
    Random random = new Random(42);
    MessageBlockEncoder encoder = new MessageBlockEncoder(compression);
    List<byte[]> payloads = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      byte[] payload = new byte[1 + random.nextInt(3000)];
      random.nextBytes(payload);
      payloads.add(payload);
      encoder.add(payload, 1_700_000_000_000L + i, i % 3 == 0 ? "seq-" + i : null);
    }
    MessageBlock block = encoder.finish();
    assertEquals(compression.wireType(), block.getCompressionType());
    assertEquals(500, block.getMessageNumber());
    assertEquals(block.getMessageBlock().length, block.getMessageBlockSize());

    block.setStartMessageOffset(1000).setAppendTimestamp(1_800_000_000_000L);
    List<ConsumedMessage> decoded = MessageBlockDecoder.decode(block);
    assertEquals(500, decoded.size());
    for (int i = 0; i < 500; i++) {
      ConsumedMessage m = decoded.get(i);
      assertEquals(1000 + i, m.offset());
      assertArrayEquals(payloads.get(i), m.payload());
      assertEquals(1_700_000_000_000L + i, m.createTimestampMs());
      assertEquals(1_800_000_000_000L, m.appendTimestampMs());
      assertEquals(i % 3 == 0 ? "seq-" + i : null, m.sequenceNumber());
    }
  }

  @ParameterizedTest
  @EnumSource(CompressionType.class)
  void shouldRoundTripTheLargestAllowedMessage(CompressionType compression) {
    byte[] big = new byte[MessageBlockEncoder.MAX_PAYLOAD_BYTES];
    new Random(1).nextBytes(big);
    MessageBlock block = MessageBlockEncoder.encode(List.of(big, new byte[] {7}), compression, 5);
    List<ConsumedMessage> decoded = MessageBlockDecoder.decode(block);
    assertArrayEquals(big, decoded.get(0).payload());
    assertArrayEquals(new byte[] {7}, decoded.get(1).payload());
  }

  @Test
  void shouldWriteVersion2LayoutByteForByte() {
    // two messages: {ts 0x0102030405060708, seq "s1", "hello"} and {ts 1000, no seq, "ab"}
    MessageBlock block = new MessageBlockEncoder(CompressionType.NONE)
        .add("hello".getBytes(UTF_8), 0x0102030405060708L, "s1")
        .add("ab".getBytes(UTF_8), 1000, null)
        .finish();
    String expected = "56000200" + "0102030405060708" + "0001" + "0002" + "7331" + "00000005"
        + "68656c6c6f"
        + "56000200" + "00000000000003e8" + "0001" + "0000" + "00000002" + "6162";
    assertEquals(expected, HexFormat.of().formatHex(block.getMessageBlock()));
    assertEquals(0, block.getStartMessageOffset());
    assertFalse(block.isSetAppendTimestamp());
  }

  @Test
  void shouldSetBlockCreateTimestampToTheMeanOfItsMessages() {
    MessageBlock block = new MessageBlockEncoder(CompressionType.NONE)
        .add(new byte[] {1}, 1000, null).add(new byte[] {2}, 2000, null)
        .add(new byte[] {3}, 6000, null).finish();
    assertEquals(3000, block.getCreateTimestamp());
  }

  @Test
  void shouldBeReusableAfterFinish() {
    MessageBlockEncoder encoder = new MessageBlockEncoder(CompressionType.GZIP);
    encoder.add(new byte[] {1, 2, 3}, 1, null);
    assertEquals(MessageBlockEncoder.MESSAGE_OVERHEAD_BYTES + 3, encoder.serializedBytes());
    encoder.finish();
    assertEquals(0, encoder.messageCount());
    assertEquals(0, encoder.serializedBytes());
    MessageBlock second = encoder.add(new byte[] {9}, 2, null).finish();
    List<ConsumedMessage> decoded = MessageBlockDecoder.decode(second);
    assertEquals(1, decoded.size());
    assertArrayEquals(new byte[] {9}, decoded.get(0).payload());
  }

  @Test
  void shouldRejectMessagesOutsideTheProtocolLimits() {
    MessageBlockEncoder encoder = new MessageBlockEncoder(CompressionType.NONE);
    assertThrows(IllegalArgumentException.class, () -> encoder.add(new byte[0], 1, null));
    assertThrows(IllegalArgumentException.class,
        () -> encoder.add(new byte[MessageBlockEncoder.MAX_PAYLOAD_BYTES + 1], 1, null));
    assertThrows(IllegalArgumentException.class, () -> encoder.add(new byte[1], 1, ""));
    assertThrows(IllegalArgumentException.class,
        () -> encoder.add(new byte[1], 1, "x".repeat(257)));
    assertThrows(IllegalStateException.class, encoder::finish);
    assertThrows(IllegalArgumentException.class,
        () -> MessageBlockEncoder.encode(List.of(), CompressionType.NONE, 1));
  }

  @Test
  void shouldDecodeVersion1Messages() throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    DataOutputStream out = new DataOutputStream(bytes);
    out.writeInt(3);
    out.write("abc".getBytes(UTF_8));
    out.writeInt(2);
    out.write(new byte[] {10, 11});
    out.writeInt(0);
    out.writeInt(1);
    out.write(new byte[] {12});
    MessageBlock block = rawBlock(bytes.toByteArray(), 2).setStartMessageOffset(7);

    List<ConsumedMessage> decoded = MessageBlockDecoder.decode(block);
    assertEquals(new ConsumedMessage(7, new byte[] {10, 11}, -1, -1, "abc"), decoded.get(0));
    assertEquals(new ConsumedMessage(8, new byte[] {12}, -1, -1, null), decoded.get(1));
  }

  @Test
  void shouldDecodeMixedVersionsInOneBlock() throws IOException {
    byte[] v2 = new MessageBlockEncoder(CompressionType.NONE).add(new byte[] {1}, 5, null)
        .finish().getMessageBlock();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    DataOutputStream out = new DataOutputStream(bytes);
    out.writeInt(0);
    out.writeInt(1);
    out.write(2);
    out.write(v2);
    List<ConsumedMessage> decoded = MessageBlockDecoder.decode(rawBlock(bytes.toByteArray(), 2));
    assertArrayEquals(new byte[] {2}, decoded.get(0).payload());
    assertEquals(-1, decoded.get(0).createTimestampMs());
    assertArrayEquals(new byte[] {1}, decoded.get(1).payload());
    assertEquals(5, decoded.get(1).createTimestampMs());
  }

  @Test
  void shouldDecodeSeveralBlocksInOrder() {
    MessageBlock a = MessageBlockEncoder.encode(List.of(new byte[] {1}, new byte[] {2}),
        CompressionType.SNAPPY, 1).setStartMessageOffset(10);
    MessageBlock b = MessageBlockEncoder.encode(List.of(new byte[] {3}), CompressionType.GZIP, 1)
        .setStartMessageOffset(12);
    List<ConsumedMessage> decoded = MessageBlockDecoder.decode(List.of(a, b));
    assertEquals(List.of(10L, 11L, 12L), decoded.stream().map(ConsumedMessage::offset).toList());
  }

  @Test
  void shouldIgnoreBytesAfterTheAnnouncedMessages() {
    byte[] one = MessageBlockEncoder.encode(List.of(new byte[] {1}), CompressionType.NONE, 1)
        .getMessageBlock();
    byte[] padded = Arrays.copyOf(one, one.length + 5);
    assertEquals(1, MessageBlockDecoder.decode(rawBlock(padded, 1)).size());
  }

  @Test
  void shouldReportTruncatedBlocksAsCorrupt() {
    byte[] two = MessageBlockEncoder.encode(List.of(new byte[] {1}, new byte[] {2, 3}),
        CompressionType.NONE, 1).getMessageBlock();
    CorruptMessageBlockException e = assertThrows(CorruptMessageBlockException.class,
        () -> MessageBlockDecoder.decode(rawBlock(Arrays.copyOf(two, two.length - 1), 2)));
    assertTrue(e.getMessage().contains("message 1 of 2"), e.getMessage());
    assertFalse(e.isRetriable());
    assertNull(e.errorCode());
    assertThrows(CorruptMessageBlockException.class,
        () -> MessageBlockDecoder.decode(rawBlock(two, 3)));
  }

  @Test
  void shouldReportUnknownVersionsAndBadCompressedDataAsCorrupt() {
    byte[] v3 = HexFormat.of().parseHex("56000300" + "0000000000000001" + "0001" + "0000"
        + "00000001" + "01");
    CorruptMessageBlockException e = assertThrows(CorruptMessageBlockException.class,
        () -> MessageBlockDecoder.decode(rawBlock(v3, 1)));
    assertTrue(e.getMessage().contains("version 3"), e.getMessage());

    MessageBlock notGzip = rawBlock(new byte[] {1, 2, 3, 4}, 1)
        .setCompressionType(MessageCompressionType.GZIP);
    assertThrows(CorruptMessageBlockException.class, () -> MessageBlockDecoder.decode(notGzip));
    MessageBlock notSnappy = rawBlock(new byte[] {(byte) 0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0,
        0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 50, 1, 2}, 1)
        .setCompressionType(MessageCompressionType.SNAPPY);
    assertThrows(CorruptMessageBlockException.class, () -> MessageBlockDecoder.decode(notSnappy));
  }

  @Test
  void shouldReportNegativeLengthsAsCorrupt() {
    byte[] negative = HexFormat.of().parseHex("56000200" + "0000000000000001" + "0001" + "0000"
        + "ffffffff");
    assertThrows(CorruptMessageBlockException.class,
        () -> MessageBlockDecoder.decode(rawBlock(negative, 1)));
  }

  private static MessageBlock rawBlock(byte[] payload, int messages) {
    return new MessageBlock(0, messages, MessageCompressionType.NONE, java.nio.ByteBuffer.wrap(payload));
  }

  /**
   * An encoder sized to its messages (as the producer sizes it to a batch) makes the same block as
   * a default one, whether the size is exact (the buffer becomes the block), too small (it grows)
   * or too large; and the next block after an exact one is independent of it.
   */
  @ParameterizedTest
  @EnumSource(CompressionType.class)
  void anEncoderSizedToItsMessagesMakesTheSameBlocks(CompressionType compression) {
    List<byte[]> payloads = List.of(new byte[] {1, 2, 3}, new byte[100], "x".getBytes(UTF_8));
    int exact = 0;
    for (byte[] p : payloads) exact += MessageBlockEncoder.serializedSize(p.length, "s");
    MessageBlockEncoder reference = new MessageBlockEncoder(compression);
    for (byte[] p : payloads) reference.add(p, 42, "s");
    byte[] expected = reference.finish().getMessageBlock();
    for (int size : new int[] {exact, 1, exact + 1000}) {
      MessageBlockEncoder sized = new MessageBlockEncoder(compression, size);
      for (byte[] p : payloads) sized.add(p, 42, "s");
      MessageBlock block = sized.finish();
      assertArrayEquals(expected, block.getMessageBlock(), "expected size " + size);
      sized.add(new byte[] {9}, 43, null); // reuse after finish: a block of its own
      MessageBlock next = sized.finish();
      assertEquals(1, next.getMessageNumber());
      assertArrayEquals(expected, block.getMessageBlock(), "the first block is unchanged");
    }
    assertThrows(IllegalArgumentException.class, () -> new MessageBlockEncoder(compression, 0));
  }
}
