package io.talos.server.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.StreamCapabilities;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Files 0600 and directories 0700, through every create and mkdirs call the storage code makes; a
 * new file is opened without truncating it, and overwrite and append keep their meaning.
 */
class OwnerOnlyLocalFileSystemTest {
  @TempDir
  java.nio.file.Path dir;

  private static String mode(java.nio.file.Path p) throws Exception {
    return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
  }

  @Test
  void createsFilesAndDirectoriesOwnerOnly() throws Exception {
    Assumptions.assumeTrue(Files.getFileStore(dir).supportsFileAttributeView("posix"));
    try (FileSystem fs = PartitionLogs.fileSystemFor(dir.toUri(), new Configuration())) {
      Path root = new Path(dir.toUri());
      Path nested = new Path(root, "a/b/c");
      fs.mkdirs(nested);
      try (FSDataOutputStream out = fs.create(new Path(nested, "f1"), true)) {
        out.write(1);
      }
      try (FSDataOutputStream out = fs.create(new Path(nested, "f2"), false)) {
        out.write(1);
      }
      Path renamed = new Path(nested, "f3");
      fs.rename(new Path(nested, "f2"), renamed);
      for (String d : new String[] {"a", "a/b", "a/b/c"}) assertEquals("rwx------", mode(dir.resolve(d)), d);
      for (String f : new String[] {"a/b/c/f1", "a/b/c/f3"}) assertEquals("rw-------", mode(dir.resolve(f)), f);
    }
  }

  @Test
  void aNewFileIsNotTruncatedSoClosingAnotherDescriptorDoesNotFlushIt() throws Exception {
    // on the disk, not /tmp: tmpfs has no write-back
    java.nio.file.Path disk = Files.createTempDirectory(java.nio.file.Path.of("target").toAbsolutePath(), "owneronly");
    try (FileSystem fs = PartitionLogs.fileSystemFor(disk.toUri(), new Configuration())) {
      Path file = new Path(new Path(disk.toUri()), "00000000000000000000.log");
      try (FSDataOutputStream out = fs.create(file, true)) {
        out.write(new byte[1024 * 1024]);
        out.hflush();
        String path = disk.resolve(file.getName()).toString();
        long dirty = PageResidency.dirtyPages(path, 0, 1024 * 1024); // opens and closes a descriptor
        assumeTrue(dirty > 0, "needs the cachestat system call (Linux 6.5+) and a file system with write-back");
        // On ext4 a file truncated to 0 bytes is flushed whole when a descriptor of it is next
        // closed (auto_da_alloc): opened with O_TRUNC, the pages would no longer be dirty here.
        assertEquals(256, PageResidency.dirtyPages(path, 0, 1024 * 1024));
      }
    } finally {
      try (var files = Files.walk(disk)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  @Test
  void overwriteReplacesAndAppendAppends() throws Exception {
    try (FileSystem fs = PartitionLogs.fileSystemFor(dir.toUri(), new Configuration())) {
      Path file = new Path(new Path(dir.toUri()), "f");
      try (FSDataOutputStream out = fs.create(file, true)) {
        out.write(new byte[] {1, 2, 3, 4});
      }
      try (FSDataOutputStream out = fs.append(file)) {
        out.write(new byte[] {5});
      }
      assertArrayEquals(new byte[] {1, 2, 3, 4, 5}, Files.readAllBytes(dir.resolve("f")));
      try (FSDataOutputStream out = fs.create(file, true)) {
        out.write(new byte[] {9});
      }
      assertArrayEquals(new byte[] {9}, Files.readAllBytes(dir.resolve("f")));
    }
  }

  /**
   * Positioned reads into a direct buffer come from the file itself (the Hadoop stream reads only
   * into arrays), with and without page-cache drop-behind; past the end is an EOFException.
   */
  @Test
  void readsIntoDirectBuffersByPosition() throws Exception {
    byte[] data = new byte[300_000];
    for (int i = 0; i < data.length; i++) data[i] = (byte) (i * 13 + 5);
    Files.write(dir.resolve("seg"), data);
    for (long window : new long[] {0, 64 * 1024}) {
      try (FileSystem fs = PartitionLogs.fileSystemFor(dir.toUri(), new Configuration(), window, false);
          FSDataInputStream in = fs.open(new Path(new Path(dir.toUri()), "seg"))) {
        assertTrue(in.hasCapability(StreamCapabilities.PREADBYTEBUFFER), "window " + window);
        ByteBuffer buf = ByteBuffer.allocateDirect(200_000);
        in.readFully(70_000, buf);
        assertFalse(buf.hasRemaining());
        byte[] got = new byte[200_000];
        buf.flip().get(got);
        assertArrayEquals(java.util.Arrays.copyOfRange(data, 70_000, 270_000), got, "window " + window);
        assertThrows(java.io.EOFException.class, () -> in.readFully(200_000, ByteBuffer.allocateDirect(100_001)));
        byte[] viaArray = new byte[10];
        in.readFully(5, viaArray, 0, 10); // the array reads still work beside it
        assertArrayEquals(java.util.Arrays.copyOfRange(data, 5, 15), viaArray);
      }
    }
  }
}
