package io.talos.server.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

class RecordFormatTest {
  private static final BlockToAppend BLOCK =
      new BlockToAppend(7, 1, 4096, 1_650_000_000_123L, new byte[] {10, 20, 30, 40, 50});

  private static byte[] encoded() {
    byte[] buf = new byte[RecordFormat.recordLength(5)];
    assertEquals(buf.length, RecordFormat.encode(buf, 0, 1234, 1_700_000_000_456L, BLOCK));
    return buf;
  }

  @Test
  void shouldLayOutFieldsAtTheDocumentedBigEndianOffsets() {
    byte[] r = encoded();
    ByteBuffer b = ByteBuffer.wrap(r);
    assertEquals(54, r.length);
    assertEquals(0x01, b.get(0));
    CRC32C crc = new CRC32C();
    crc.update(r, 5, r.length - 5);
    assertEquals((int) crc.getValue(), b.getInt(1));
    assertEquals(54, b.getInt(5));
    assertEquals(1234, b.getLong(9));
    assertEquals(7, b.getInt(17));
    assertEquals(1_700_000_000_456L, b.getLong(21));
    assertEquals(1_650_000_000_123L, b.getLong(29));
    assertEquals(1, b.getInt(37));
    assertEquals(4096, b.getInt(41));
    assertEquals(5, b.getInt(45));
    assertEquals(10, r[49]);
    assertEquals(50, r[53]);
  }

  @Test
  void version2CarriesTheProducerBeforeThePayload() throws Exception {
    byte[] r = new byte[RecordFormat.recordLength(5, true)];
    RecordFormat.ProducerTag tag = new RecordFormat.ProducerTag(0x0102030405060708L, 17, 2);
    assertEquals(70, RecordFormat.encode(r, 0, 1234, 1_700_000_000_456L, BLOCK, tag));
    ByteBuffer b = ByteBuffer.wrap(r);
    assertEquals(0x02, b.get(0));
    CRC32C crc = new CRC32C();
    crc.update(r, 5, r.length - 5);
    assertEquals((int) crc.getValue(), b.getInt(1));
    assertEquals(70, b.getInt(5));
    assertEquals(1234, b.getLong(9));
    assertEquals(4096, b.getInt(41));
    assertEquals(0x0102030405060708L, b.getLong(45));
    assertEquals(17, b.getInt(53));
    assertEquals(2, b.getInt(57));
    assertEquals(5, b.getInt(61));
    assertEquals(10, r[65]);
    RecordFormat.Header h = RecordFormat.parseHeader(r, 0, RecordFormat.readLength(r, 0, r.length));
    assertEquals(tag, h.producer());
    StoredBlock decoded = RecordFormat.decode(r, 0, r.length);
    assertEquals(new StoredBlock(1234, 7, 1, 1_700_000_000_456L, 1_650_000_000_123L, 4096,
        ByteBuffer.wrap(r, RecordFormat.HEADER_BYTES_V2, BLOCK.payloadLength())), decoded);
    assertArrayEquals(BLOCK.payload(), decoded.payload());
    for (int i = 0; i < r.length; i++) {
      if (i == 0) continue; // the magic: 0x03 is refused, other flips covered below
      byte[] bad = r.clone();
      bad[i] ^= 0x40;
      assertThrows(CorruptRecordException.class, () -> RecordFormat.decode(bad, 0, bad.length), "byte " + i);
    }
    byte[] v1 = encoded();
    assertEquals(null, RecordFormat.parseHeader(v1, 0, v1.length).producer());
  }

  @Test
  void shouldDecodeWhatItEncodes() throws Exception {
    byte[] buf = new byte[100];
    int n = RecordFormat.encode(buf, 20, 1234, 99, BLOCK);
    StoredBlock b = RecordFormat.decode(buf, 20, n);
    // the payload is a slice of the buffer read, not a copy
    assertEquals(new StoredBlock(1234, 7, 1, 99, 1_650_000_000_123L, 4096,
        ByteBuffer.wrap(buf, 20 + RecordFormat.HEADER_BYTES, BLOCK.payloadLength())), b);
    assertSame(buf, b.payloadBytes().array());
    assertEquals(20 + RecordFormat.HEADER_BYTES, b.payloadBytes().arrayOffset());
    assertArrayEquals(BLOCK.payload(), b.payload());
    assertEquals(b.payloadLength(), b.payloadBuffer().remaining());
    assertEquals(1241, b.nextOffset());
  }

  @Test
  void shouldDetectAFlipOfAnySingleByte() {
    byte[] good = encoded();
    for (int i = 0; i < good.length; i++) {
      byte[] bad = good.clone();
      bad[i] ^= 0x10;
      assertThrows(CorruptRecordException.class, () -> RecordFormat.decode(bad, 0, bad.length), "byte " + i);
    }
  }

  @Test
  void shouldRejectTornAndImplausibleRecords() {
    byte[] r = encoded();
    CorruptRecordException torn = assertThrows(CorruptRecordException.class, () -> RecordFormat.decode(r, 0, 53));
    assertTrue(torn.getMessage().contains("runs past the end"), torn.getMessage());
    assertThrows(CorruptRecordException.class, () -> RecordFormat.decode(r, 0, 8));
    CorruptRecordException zeros =
        assertThrows(CorruptRecordException.class, () -> RecordFormat.decode(new byte[64], 0, 64));
    assertTrue(zeros.getMessage().contains("bad magic"), zeros.getMessage());
    byte[] huge = r.clone();
    ByteBuffer.wrap(huge).putInt(5, RecordFormat.HEADER_BYTES + RecordFormat.MAX_PAYLOAD_BYTES + 1);
    assertThrows(CorruptRecordException.class, () -> RecordFormat.decode(huge, 0, Long.MAX_VALUE));
  }
}
