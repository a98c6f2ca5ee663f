package io.talos.server.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.thrift.ErrorCode;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.MessageBlock;
import io.talos.thrift.MessageCompressionType;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.xerial.snappy.Snappy;
import org.xerial.snappy.SnappyOutputStream;

class MessageBlockValidatorTest {
  private static final int MAX_MESSAGE = 10 * 1024 * 1024;
  private static final long MAX_UNCOMPRESSED = 21L * 1024 * 1024;
  private final MessageBlockValidator validator = new MessageBlockValidator(MessageBlockValidator.Mode.FULL,
      MAX_MESSAGE, MAX_UNCOMPRESSED);

  private static byte[] v2(int seqLength, byte[]... messages) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    DataOutputStream out = new DataOutputStream(bytes);
    for (byte[] m : messages) {
      out.write(new byte[] {'V', 0, 2, 0});
      out.writeLong(1L);
      out.writeShort(1);
      out.writeShort(seqLength);
      out.write(new byte[seqLength]);
      out.writeInt(m.length);
      out.write(m);
    }
    return bytes.toByteArray();
  }

  private static MessageBlock block(MessageCompressionType type, int count, byte[] payload) {
    return new MessageBlock(0, count, type, ByteBuffer.wrap(payload));
  }

  private GalaxyTalosException refused(MessageBlock block) {
    GalaxyTalosException e = assertThrows(GalaxyTalosException.class, () -> validator.validate(0, block));
    assertEquals(ErrorCode.INVALID_REQUEST_PARAMS, e.getErrorCode());
    return e;
  }

  @Test
  void acceptsEveryCompressionTheSdkWrites() throws Exception {
    byte[] raw = v2(2, "a".getBytes(), "bc".getBytes());
    validator.validate(0, block(MessageCompressionType.NONE, 2, raw));
    ByteArrayOutputStream framed = new ByteArrayOutputStream();
    try (SnappyOutputStream s = new SnappyOutputStream(framed)) {
      s.write(raw);
    }
    validator.validate(0, block(MessageCompressionType.SNAPPY, 2, framed.toByteArray()));
    validator.validate(0, block(MessageCompressionType.SNAPPY, 2, Snappy.compress(raw)));
    ByteArrayOutputStream gz = new ByteArrayOutputStream();
    try (GZIPOutputStream g = new GZIPOutputStream(gz)) {
      g.write(raw);
    }
    validator.validate(0, block(MessageCompressionType.GZIP, 2, gz.toByteArray()));
  }

  @Test
  void aTinySnappyBlockClaimingGigabytesIsRefusedWithoutAllocating() throws Exception {
    ByteArrayOutputStream bomb = new ByteArrayOutputStream();
    bomb.write(new byte[] {(byte) 0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1});
    byte[] chunk = {(byte) 0x80, (byte) 0xde, (byte) 0xe6, (byte) 0xca, 0x05, 0x00, 0x61}; // varint 1.5e9, then junk
    new DataOutputStream(bomb).writeInt(chunk.length);
    bomb.write(chunk);
    assertTimeoutPreemptively(Duration.ofSeconds(5), () -> {
      GalaxyTalosException e = refused(block(MessageCompressionType.SNAPPY, 1, bomb.toByteArray()));
      assertTrue(e.getErrMsg().contains("message.block.uncompressed.max.bytes"), e.getErrMsg());
    });
    refused(block(MessageCompressionType.SNAPPY, 1, chunk));
  }

  @Test
  void aGzipBombIsCutOffAtTheBudget() throws Exception {
    // Three well-framed 10 MiB messages of zeros: 30 MiB that gzip to ~30 KiB.
    byte[] big = new byte[MAX_MESSAGE];
    ByteArrayOutputStream gz = new ByteArrayOutputStream();
    try (GZIPOutputStream g = new GZIPOutputStream(gz)) {
      g.write(v2(0, big, big, big));
    }
    assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
      GalaxyTalosException e = refused(block(MessageCompressionType.GZIP, 3, gz.toByteArray()));
      assertTrue(e.getErrMsg().contains("more than"), e.getErrMsg());
    });
  }

  @Test
  void lengthsTheSdkWouldMisreadAreRefused() throws Exception {
    GalaxyTalosException longSeq = refused(block(MessageCompressionType.NONE, 1, v2(40_000, "x".getBytes())));
    assertTrue(longSeq.getErrMsg().contains("32767"), longSeq.getErrMsg());
    validator.validate(0, block(MessageCompressionType.NONE, 1, v2(32_767, "x".getBytes())));

    ByteArrayOutputStream v1 = new ByteArrayOutputStream();
    DataOutputStream out = new DataOutputStream(v1);
    out.writeInt(200); // a byte >= 0x80: the SDK would assemble a negative length
    out.write(new byte[200]);
    out.writeInt(1);
    out.write('x');
    refused(block(MessageCompressionType.NONE, 1, v1.toByteArray()));
  }

  @Test
  void corruptCompressedDataIsRefused() {
    refused(block(MessageCompressionType.GZIP, 1, "not gzip".getBytes()));
    refused(block(MessageCompressionType.SNAPPY, 1, new byte[] {(byte) 0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 9, 1, 2}));
  }

  /** The put path validates the payload in place, as a slice of the request body. */
  @Test
  void validatesASliceOfALargerArrayInPlace() throws Exception {
    byte[] raw = v2(2, "a".getBytes(), "bc".getBytes());
    byte[] body = new byte[raw.length + 20];
    java.util.Arrays.fill(body, (byte) 0x7f);
    System.arraycopy(raw, 0, body, 7, raw.length);
    validator.validate(0, 2, MessageCompressionType.NONE, body, 7, raw.length);
    // The bytes around the slice are not read: one message short, or one byte more, is refused.
    GalaxyTalosException shortBy = assertThrows(GalaxyTalosException.class,
        () -> validator.validate(0, 2, MessageCompressionType.NONE, body, 7, raw.length - 1));
    assertTrue(shortBy.getErrMsg().contains("ends after 1 whole messages"), shortBy.getErrMsg());
    GalaxyTalosException longer = assertThrows(GalaxyTalosException.class,
        () -> validator.validate(0, 2, MessageCompressionType.NONE, body, 7, raw.length + 1));
    assertTrue(longer.getErrMsg().contains("trailing bytes"), longer.getErrMsg());
    byte[] framed = Snappy.compress(raw);
    byte[] snappyBody = new byte[framed.length + 5];
    System.arraycopy(framed, 0, snappyBody, 5, framed.length);
    validator.validate(0, 2, MessageCompressionType.SNAPPY, snappyBody, 5, framed.length);
  }
}
