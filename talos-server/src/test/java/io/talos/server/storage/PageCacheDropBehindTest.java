package io.talos.server.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.net.URI;
import java.nio.file.Files;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.StreamCapabilities;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The drop-behind through the local file system's real streams, stepped by hand: what lies more
 * than the window behind a file's end leaves the page cache after it was written and after it was
 * read again, the window stays, the bytes stay what was written, and hflush/hsync still reach the
 * file (the wrapper must stay Syncable). Residency is read with mincore.
 */
class PageCacheDropBehindTest {
  private static final long MIB = 1024 * 1024;
  private static final long WINDOW = 8 * MIB;
  private static final int FILE_BYTES = (int) (32 * MIB);

  private File dir;
  private PageCacheDropBehind dropBehind;
  private OwnerOnlyLocalFileSystem fs;

  @BeforeEach
  void setUp() throws Exception {
    assumeTrue(PageCacheDropBehind.unavailableReason() == null, "needs Linux: " + PageCacheDropBehind.unavailableReason());
    // under target/, not /tmp: tmpfs has no page cache to drop
    dir = Files.createTempDirectory(java.nio.file.Path.of("target").toAbsolutePath(), "dropbehind").toFile();
    dropBehind = new PageCacheDropBehind(WINDOW, false);
    fs = new OwnerOnlyLocalFileSystem(dropBehind, false);
    fs.initialize(URI.create("file:///"), new Configuration());
  }

  @AfterEach
  void tearDown() throws Exception {
    if (fs != null) fs.close();
    if (dir != null) {
      for (File f : dir.listFiles()) f.delete();
      dir.delete();
    }
  }

  @Test
  void dataBehindTheWindowLeavesThePageCacheAfterWritingAndAfterReading() throws Exception {
    byte[] data = new byte[FILE_BYTES];
    new Random(7).nextBytes(data);
    Path file = new Path(dir.getPath(), "00000000000000000000.log");
    try (FSDataOutputStream out = fs.create(file, true)) {
      assertTrue(out.hasCapability(StreamCapabilities.HSYNC), "the wrapped stream must still offer hsync");
      for (int at = 0; at < FILE_BYTES; at += 64 * 1024) {
        out.write(data, at, 64 * 1024);
        out.hflush();
      }
      out.hsync();
    }
    String path = new File(dir, file.getName()).getPath();
    long behind = FILE_BYTES - WINDOW; // 24 MiB: six chunks

    assertTrue(PageResidency.residentFraction(path, 0, behind) > 0.9,
        "written data is cached before the drop-behind ran (else this test proves nothing)");
    drain();
    assertEquals(behind, dropBehind.writtenBackBytes());
    assertEquals(behind, dropBehind.droppedBytes());
    assertTrue(PageResidency.residentFraction(path, 0, behind) < 0.05,
        "data more than the window behind the end is dropped after writing: "
            + PageResidency.residentFraction(path, 0, behind));
    assertTrue(PageResidency.residentFraction(path, behind, WINDOW) > 0.9, "the window stays cached");

    byte[] read = new byte[FILE_BYTES];
    try (FSDataInputStream in = fs.open(file)) {
      for (int at = 0; at < FILE_BYTES; at += 64 * 1024) in.readFully(at, read, at, 64 * 1024);
    }
    assertArrayEquals(data, read);
    assertTrue(PageResidency.residentFraction(path, 0, behind) > 0.9, "read data is cached until the step");
    drain();
    assertEquals(2 * behind, dropBehind.droppedBytes());
    assertEquals(behind, dropBehind.writtenBackBytes(), "read chunks are clean: nothing more to write back");
    assertTrue(PageResidency.residentFraction(path, 0, behind) < 0.05, "dropped again after reading");
    assertTrue(PageResidency.residentFraction(path, behind, WINDOW) > 0.9, "the window stays cached");
    assertEquals(0, dropBehind.skippedChunks());
    assertEquals(0, dropBehind.failedCalls());
  }

  @Test
  void anAppendedFileCountsFromItsLengthAndASmallFileIsLeftAlone() throws Exception {
    Path file = new Path(dir.getPath(), "small.index");
    byte[] small = new byte[(int) (2 * MIB)];
    try (FSDataOutputStream out = fs.create(file, true)) {
      out.write(small);
      out.hflush();
    }
    try (FSDataInputStream in = fs.open(file)) {
      in.readFully(0, small);
    }
    drain();
    assertEquals(0, dropBehind.droppedBytes(), "a file shorter than the window stays in the page cache");
    assertEquals(0, dropBehind.queuedChunks());
  }

  @Test
  void chunksOfADeletedFileAreSkippedQuietly() throws Exception {
    Path file = new Path(dir.getPath(), "gone.log");
    try (FSDataOutputStream out = fs.create(file, true)) {
      out.write(new byte[(int) (WINDOW + 2 * PageCacheDropBehind.CHUNK_BYTES)]);
      out.hflush();
    }
    assertEquals(2, dropBehind.queuedChunks());
    fs.delete(file, false);
    drain();
    assertEquals(0, dropBehind.droppedBytes());
    assertEquals(0, dropBehind.failedCalls());
  }

  /** Steps the background work until nothing is queued or started. */
  private void drain() throws InterruptedException {
    for (int i = 0; i < 1000 && dropBehind.queuedChunks() > 0; i++) dropBehind.runOnce(0);
    dropBehind.runOnce(0); // finishes the last started write-back
  }
}
