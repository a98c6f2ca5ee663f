package io.talos.client.codec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.xiaomi.infra.galaxy.talos.client.compression.Compression;
import com.xiaomi.infra.galaxy.talos.thrift.Message;
import com.xiaomi.infra.galaxy.talos.thrift.MessageAndOffset;
import com.xiaomi.infra.galaxy.talos.thrift.MessageType;
import io.talos.client.consumer.ConsumedMessage;
import io.talos.thrift.MessageBlock;
import io.talos.thrift.MessageCompressionType;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Byte compatibility of our block codec with the real Talos SDK 2.0.2
 * ({@code com.xiaomi.infra.galaxy.talos.client.compression.Compression}) in both directions.
 * The two sides have separate Thrift classes (the SDK's on its shaded libthrift 0.9.1), so blocks
 * cross over by copying their fields.
 */
class SdkBlockCompatibilityTest {
  private static final int COUNT = 300;

  @ParameterizedTest
  @EnumSource(CompressionType.class)
  void shouldDecodeBlocksTheSdkEncodes(CompressionType compression) throws Exception {
    List<Message> sdkMessages = sdkMessages(new Random(7));
    com.xiaomi.infra.galaxy.talos.thrift.MessageBlock sdkBlock =
        Compression.compress(sdkMessages, sdkType(compression));
    sdkBlock.setStartMessageOffset(500).setAppendTimestamp(1_800_000_000_000L);

    List<ConsumedMessage> decoded = MessageBlockDecoder.decode(fromSdk(sdkBlock));

    assertEquals(COUNT, decoded.size());
    for (int i = 0; i < COUNT; i++) {
      Message expected = sdkMessages.get(i);
      ConsumedMessage got = decoded.get(i);
      assertEquals(500 + i, got.offset());
      assertArrayEquals(expected.getMessage(), got.payload());
      assertEquals(expected.getCreateTimestamp(), got.createTimestampMs());
      assertEquals(expected.getSequenceNumber(), got.sequenceNumber());
      assertEquals(1_800_000_000_000L, got.appendTimestampMs());
    }
  }

  @ParameterizedTest
  @EnumSource(CompressionType.class)
  void shouldEncodeBlocksTheSdkDecodes(CompressionType compression) throws Exception {
    List<Message> sdkMessages = sdkMessages(new Random(8));
    MessageBlock ours = encode(sdkMessages, compression)
        .setStartMessageOffset(42).setAppendTimestamp(1_900_000_000_000L);

    List<MessageAndOffset> decoded = Compression.decompress(List.of(toSdk(ours)), 0);

    assertEquals(COUNT, decoded.size());
    for (int i = 0; i < COUNT; i++) {
      Message expected = sdkMessages.get(i);
      MessageAndOffset got = decoded.get(i);
      assertEquals(42 + i, got.getMessageOffset());
      assertArrayEquals(expected.getMessage(), got.getMessage().getMessage());
      assertEquals(expected.getCreateTimestamp(), got.getMessage().getCreateTimestamp());
      assertEquals(expected.getSequenceNumber(), got.getMessage().getSequenceNumber());
      assertEquals(MessageType.BINARY, got.getMessage().getMessageType());
      assertEquals(1_900_000_000_000L, got.getMessage().getAppendTimestamp());
    }
  }

  @ParameterizedTest
  @EnumSource(CompressionType.class)
  void shouldWriteTheSameBytesAsTheSdk(CompressionType compression) throws Exception {
    List<Message> sdkMessages = sdkMessages(new Random(9));
    com.xiaomi.infra.galaxy.talos.thrift.MessageBlock sdkBlock =
        Compression.compress(sdkMessages, sdkType(compression));
    MessageBlock ours = encode(sdkMessages, compression);

    assertArrayEquals(sdkBlock.getMessageBlock(), ours.getMessageBlock());
    assertEquals(sdkBlock.getMessageNumber(), ours.getMessageNumber());
    assertEquals(sdkBlock.getMessageBlockSize(), ours.getMessageBlockSize());
    assertEquals(sdkBlock.getCompressionType().getValue(), ours.getCompressionType().getValue());
  }

  /**
   * The SDK runs on snappy-java 1.1.1.6, our build on a newer one; both must read each other's
   * stream format. The old jar is loaded in its own class loader next to the new one.
   */
  @Test
  void shouldInteroperateWithTheSdksSnappyJavaVersion() throws Exception {
    Path jar = Path.of(System.getProperty("talos.test.sdkSnappyJar",
        "target/sdk-compat/sdk-snappy-java.jar"));
    assertTrue(Files.isRegularFile(jar), "missing " + jar + " (copied by the build)");
    List<Message> sdkMessages = sdkMessages(new Random(10));
    MessageBlock ours = encode(sdkMessages, CompressionType.SNAPPY);
    byte[] serialized = encode(sdkMessages, CompressionType.NONE).getMessageBlock();

    try (URLClassLoader old = new URLClassLoader(new URL[] {jar.toUri().toURL()},
        ClassLoader.getPlatformClassLoader())) {
      Class<?> in = old.loadClass("org.xerial.snappy.SnappyInputStream");
      Class<?> out = old.loadClass("org.xerial.snappy.SnappyOutputStream");
      assertFalse(in == org.xerial.snappy.SnappyInputStream.class, "not isolated");

      try (InputStream oldIn = (InputStream) in.getConstructor(InputStream.class)
          .newInstance(new ByteArrayInputStream(ours.getMessageBlock()))) {
        assertArrayEquals(serialized, oldIn.readAllBytes(), "1.1.1.6 reading our stream");
      }

      ByteArrayOutputStream compressed = new ByteArrayOutputStream();
      try (OutputStream oldOut = (OutputStream) out.getConstructor(OutputStream.class)
          .newInstance(compressed)) {
        oldOut.write(serialized);
      }
      MessageBlock fromOld = new MessageBlock(0, COUNT, MessageCompressionType.SNAPPY,
          ByteBuffer.wrap(compressed.toByteArray()));
      List<ConsumedMessage> decoded = MessageBlockDecoder.decode(fromOld);
      assertEquals(COUNT, decoded.size());
      assertArrayEquals(sdkMessages.get(COUNT - 1).getMessage(), decoded.get(COUNT - 1).payload());
    }
  }

  private static List<Message> sdkMessages(Random random) {
    List<Message> messages = new ArrayList<>();
    for (int i = 0; i < COUNT; i++) {
      byte[] payload = new byte[1 + random.nextInt(i % 50 == 0 ? 70_000 : 400)];
      // compressible but not trivial: a small alphabet
      for (int j = 0; j < payload.length; j++) payload[j] = (byte) ('a' + random.nextInt(6));
      Message m = new Message(ByteBuffer.wrap(payload))
          .setCreateTimestamp(1_700_000_000_000L + random.nextInt(100_000))
          .setMessageType(MessageType.BINARY);
      if (i % 4 == 1) m.setSequenceNumber("order-" + i);
      messages.add(m);
    }
    return messages;
  }

  private static MessageBlock encode(List<Message> sdkMessages, CompressionType compression) {
    MessageBlockEncoder encoder = new MessageBlockEncoder(compression);
    for (Message m : sdkMessages) {
      encoder.add(m.getMessage(), m.getCreateTimestamp(),
          m.isSetSequenceNumber() ? m.getSequenceNumber() : null);
    }
    return encoder.finish();
  }

  private static com.xiaomi.infra.galaxy.talos.thrift.MessageCompressionType sdkType(
      CompressionType t) {
    return com.xiaomi.infra.galaxy.talos.thrift.MessageCompressionType.findByValue(
        t.wireType().getValue());
  }

  private static MessageBlock fromSdk(com.xiaomi.infra.galaxy.talos.thrift.MessageBlock b) {
    MessageBlock ours = new MessageBlock(b.getStartMessageOffset(), b.getMessageNumber(),
        MessageCompressionType.findByValue(b.getCompressionType().getValue()),
        ByteBuffer.wrap(b.getMessageBlock()));
    if (b.isSetMessageBlockSize()) ours.setMessageBlockSize(b.getMessageBlockSize());
    if (b.isSetAppendTimestamp()) ours.setAppendTimestamp(b.getAppendTimestamp());
    if (b.isSetCreateTimestamp()) ours.setCreateTimestamp(b.getCreateTimestamp());
    return ours;
  }

  private static com.xiaomi.infra.galaxy.talos.thrift.MessageBlock toSdk(MessageBlock b) {
    com.xiaomi.infra.galaxy.talos.thrift.MessageBlock sdk =
        new com.xiaomi.infra.galaxy.talos.thrift.MessageBlock(b.getStartMessageOffset(),
            b.getMessageNumber(), com.xiaomi.infra.galaxy.talos.thrift.MessageCompressionType
                .findByValue(b.getCompressionType().getValue()),
            ByteBuffer.wrap(b.getMessageBlock()));
    if (b.isSetMessageBlockSize()) sdk.setMessageBlockSize(b.getMessageBlockSize());
    if (b.isSetAppendTimestamp()) sdk.setAppendTimestamp(b.getAppendTimestamp());
    if (b.isSetCreateTimestamp()) sdk.setCreateTimestamp(b.getCreateTimestamp());
    return sdk;
  }
}
