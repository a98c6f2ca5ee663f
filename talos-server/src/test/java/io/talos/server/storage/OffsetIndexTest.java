package io.talos.server.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.net.URI;
import java.nio.file.Files;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OffsetIndexTest {
  @TempDir java.nio.file.Path tmp;

  /** Records of 40 bytes and 5 messages each from offset 100, indexed every 100 bytes. */
  private static OffsetIndex indexOf(int records) {
    OffsetIndex index = new OffsetIndex(100, 100);
    for (int i = 0; i < records; i++) index.maybeAppend(100 + 5L * i, 40L * i);
    return index;
  }

  @Test
  void shouldAddAnEntryOnlyAfterIntervalBytes() {
    OffsetIndex index = indexOf(10); // positions 0, 40, ..., 360: entries at 120 and 240 and 360
    assertEquals(3, index.entryCount());
  }

  @Test
  void shouldLookUpTheFloorEntry() {
    OffsetIndex index = indexOf(10); // entries: 115 -> 120, 130 -> 240, 145 -> 360
    assertEquals(0, index.lookup(100));
    assertEquals(0, index.lookup(114));
    assertEquals(120, index.lookup(115));
    assertEquals(120, index.lookup(129));
    assertEquals(240, index.lookup(130));
    assertEquals(360, index.lookup(Long.MAX_VALUE));
  }

  @Test
  void shouldPersistEntriesAndSealAndRejectDamagedFiles() throws Exception {
    try (FileSystem fs = PartitionLogs.fileSystemFor(URI.create("file:///"), new Configuration())) {
      Path path = new Path(new Path(tmp.toUri()), "00000000000000000100.index");
      OffsetIndex.Seal seal = new OffsetIndex.Seal(100, 150, 400, 1234);
      indexOf(10).write(fs, path, seal);
      assertEquals(OffsetIndex.HEADER_BYTES + 3 * OffsetIndex.ENTRY_BYTES + 4, Files.size(tmp.resolve(path.getName())));

      OffsetIndex.Persisted p = OffsetIndex.read(fs, path, 100, 100);
      assertNotNull(p);
      assertEquals(seal, p.seal());
      assertEquals(3, p.index().entryCount());
      assertEquals(240, p.index().lookup(131));

      assertNull(OffsetIndex.read(fs, path, 101, 100), "other base offset");
      assertNull(OffsetIndex.read(fs, new Path(path.getParent(), "missing.index"), 100, 100));
      byte[] bytes = Files.readAllBytes(tmp.resolve(path.getName()));
      bytes[OffsetIndex.HEADER_BYTES + 3] ^= 1;
      Files.write(tmp.resolve(path.getName()), bytes);
      assertNull(OffsetIndex.read(fs, path, 100, 100), "CRC mismatch");
    }
  }
}
