package io.talos.server.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Arrays;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The anchors reserve blocks past the end without changing the file (its size, its bytes, what
 * appends and reads see), the file system pins only when made to and only the files it is asked
 * to, and a failure is reported, counted and never thrown.
 */
class ExtentTreePinTest {
  private static final long MIB = 1024 * 1024;
  /** {@code stat}'s block unit. */
  private static final long STAT_BLOCK = 512;

  /** The block ext4 moves a file's extents to when they outgrow the inode (4 KiB blocks). */
  private static final long TREE_BLOCK = 4096;

  @TempDir
  java.nio.file.Path dir;

  private boolean onExt4() throws IOException {
    return "ext4".equals(Files.getFileStore(dir).type());
  }

  /** Bytes of disk the file holds, from {@code stat}'s block count. */
  private static long allocatedBytes(java.nio.file.Path f) throws Exception {
    Process p = new ProcessBuilder("stat", "-c", "%b", f.toString()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
    assertEquals(0, p.waitFor(), out);
    return Long.parseLong(out) * STAT_BLOCK;
  }

  @Test
  void theFirstAnchorLiesPastTheLimitOnASpacingBoundary() {
    assertEquals(ExtentTreePin.ANCHOR_SPACING, ExtentTreePin.firstAnchorOffset(0));
    assertEquals(ExtentTreePin.ANCHOR_SPACING, ExtentTreePin.firstAnchorOffset(ExtentTreePin.ANCHOR_SPACING - 1));
    assertEquals(2 * ExtentTreePin.ANCHOR_SPACING, ExtentTreePin.firstAnchorOffset(ExtentTreePin.ANCHOR_SPACING));
    long limit = 256 * MIB + 32 * MIB + 1;
    long first = ExtentTreePin.firstAnchorOffset(limit);
    assertTrue(first > limit && first % ExtentTreePin.ANCHOR_SPACING == 0, "first=" + first);
  }

  @Test
  void anchorsTakeDiskPastTheEndAndLeaveSizeAndBytesAlone() throws Exception {
    assumeTrue(ExtentTreePin.unavailableReason() == null, "needs Linux");
    java.nio.file.Path f = dir.resolve("segment.log");
    byte[] data = new byte[10_000];
    Arrays.fill(data, (byte) 7);
    Files.write(f, data);
    long before = allocatedBytes(f);

    String why = ExtentTreePin.pin(f.toString(), 64 * MIB);
    assumeTrue(why == null || !why.contains("errno 95"), "the file system has no fallocate: " + why);
    assertNull(why);

    assertEquals(data.length, Files.size(f), "the size is the data's");
    assertArrayEquals(data, Files.readAllBytes(f), "the bytes are the data's");
    long anchors = ExtentTreePin.ANCHORS * ExtentTreePin.ANCHOR_BYTES;
    if (onExt4()) {
      // the anchors, and the block the extents moved to: the tree is one level deep
      assertEquals(before + anchors + TREE_BLOCK, allocatedBytes(f), "anchors and a tree block more on the disk");
    } else {
      assertTrue(allocatedBytes(f) >= before + anchors, "the anchors are on the disk");
    }

    // appends continue at the end, as before the pin
    byte[] more = "after the pin".getBytes(StandardCharsets.US_ASCII);
    Files.write(f, more, java.nio.file.StandardOpenOption.APPEND);
    byte[] all = Files.readAllBytes(f);
    assertEquals(data.length + more.length, all.length);
    assertArrayEquals(more, Arrays.copyOfRange(all, data.length, all.length));
  }

  @Test
  void aMissingFileIsReportedNotThrown() {
    assumeTrue(ExtentTreePin.unavailableReason() == null, "needs Linux");
    String why = ExtentTreePin.pin(dir.resolve("absent.log").toString(), MIB);
    assertNotNull(why);
    assertTrue(why.contains("open failed with errno 2"), why);
    assertFalse(Files.exists(dir.resolve("absent.log")), "nothing is created");
  }

  @Test
  void theFileSystemPinsTheFilesItIsAskedToAndCountsFailures() throws Exception {
    assumeTrue(ExtentTreePin.unavailableReason() == null, "needs Linux");
    try (FileSystem fs = PartitionLogs.fileSystemFor(dir.toUri(), new Configuration(), 0, true)) {
      OwnerOnlyLocalFileSystem local = (OwnerOnlyLocalFileSystem) fs;
      Path root = new Path(dir.toUri());
      Path segment = new Path(root, "00000000000000000000.log");
      Path other = new Path(root, "00000000000000000000.index");
      byte[] payload = "payload".getBytes(StandardCharsets.US_ASCII);
      try (FSDataOutputStream out = fs.create(segment, true); FSDataOutputStream idx = fs.create(other, true)) {
        assertTrue(local.pinExtentTree(segment, MIB));
        out.write(payload);
        out.hflush();
        idx.write(1);
      }
      long anchors = ExtentTreePin.ANCHORS * ExtentTreePin.ANCHOR_BYTES;
      long segmentBytes = allocatedBytes(dir.resolve("00000000000000000000.log"));
      if (onExt4()) {
        assertEquals(4096 + anchors + TREE_BLOCK, segmentBytes, "a data block, the anchors and the tree block");
      } else {
        assertTrue(segmentBytes >= anchors, "the anchors are on the disk: " + segmentBytes);
      }
      assertEquals(4096, allocatedBytes(dir.resolve("00000000000000000000.index")), "a file not asked for is plain");
      try (FSDataInputStream in = fs.open(segment)) {
        byte[] back = in.readAllBytes();
        assertArrayEquals(payload, back, "a reader sees only the data");
      }
      assertEquals(payload.length, fs.getFileStatus(segment).getLen());

      assertFalse(local.pinExtentTree(new Path(root, "absent.log"), MIB));
      assertFalse(local.pinExtentTree(new Path(root, "absent2.log"), MIB));
      assertEquals(1, local.pinnedFiles());
      assertEquals(2, local.pinFailures());
    }
  }

  @Test
  void aFileSystemNotMadeToPinLeavesFilesPlain() throws Exception {
    try (FileSystem fs = PartitionLogs.fileSystemFor(URI.create(dir.toUri().toString()), new Configuration())) {
      OwnerOnlyLocalFileSystem local = (OwnerOnlyLocalFileSystem) fs;
      Path segment = new Path(new Path(dir.toUri()), "00000000000000000000.log");
      fs.create(segment, true).close();
      assertFalse(local.pinExtentTree(segment, MIB));
      assertEquals(0, allocatedBytes(dir.resolve("00000000000000000000.log")));
      assertEquals(0, local.pinnedFiles());
      assertEquals(0, local.pinFailures());
    }
  }
}
