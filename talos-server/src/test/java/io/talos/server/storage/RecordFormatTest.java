package io.talos.server.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
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
  void shouldDecodeWhatItEncodes() throws Exception {
    byte[] buf = new byte[100];
    int n = RecordFormat.encode(buf, 20, 1234, 99, BLOCK);
    StoredBlock b = RecordFormat.decode(buf, 20, n);
    assertEquals(new StoredBlock(1234, 7, 1, 99, 1_650_000_000_123L, 4096, b.payload()), b);
    assertArrayEquals(BLOCK.payload(), b.payload());
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
