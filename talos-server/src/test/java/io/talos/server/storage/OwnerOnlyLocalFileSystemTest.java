package io.talos.server.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Files 0600 and directories 0700, through every create and mkdirs call the storage code makes. */
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
}
