package io.talos.server.storage;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * The raw local file system, creating what it creates owner-only: files 0600, directories 0700
 * (messages are private to the server's user). Hadoop's {@link RawLocalFileSystem} creates
 * files and directories without a permission through {@code FileOutputStream} / {@code
 * File.mkdir}, so they get the process umask (usually 0644 / 0755) and no Hadoop umask setting
 * applies; this class gives them an explicit mode through {@code java.nio} instead (no {@code
 * chmod} process, no native library). Calls that pass a permission keep Hadoop's behaviour.
 * Existing files and directories are left as they are. On a file system without POSIX
 * permissions it behaves exactly like its parent.
 *
 * <p>Thread-safe like its parent.
 */
public final class OwnerOnlyLocalFileSystem extends RawLocalFileSystem {
  static final Set<PosixFilePermission> FILE = PosixFilePermissions.fromString("rw-------");
  static final Set<PosixFilePermission> DIR = PosixFilePermissions.fromString("rwx------");
  private static final boolean POSIX = FileSystems.getDefault().supportedFileAttributeViews().contains("posix");

  @Override
  protected OutputStream createOutputStreamWithMode(Path f, boolean append, FsPermission permission)
      throws IOException {
    if (permission == null && POSIX) {
      try {
        Files.createFile(pathToFile(f).toPath(), attribute(FILE));
      } catch (FileAlreadyExistsException e) {
        // overwrite or append: the existing file keeps its mode
      }
    }
    return super.createOutputStreamWithMode(f, append, permission);
  }

  @Override
  protected boolean mkOneDirWithMode(Path p, File p2f, FsPermission permission) throws IOException {
    if (permission != null || !POSIX) return super.mkOneDirWithMode(p, p2f, permission);
    try {
      Files.createDirectory(p2f.toPath(), attribute(DIR));
      return true;
    } catch (FileAlreadyExistsException e) {
      return false; // as File.mkdir: the caller checks whether it is a directory
    } catch (IOException e) {
      return false; // as File.mkdir, which reports no reason either
    }
  }

  private static FileAttribute<Set<PosixFilePermission>> attribute(Set<PosixFilePermission> mode) {
    return PosixFilePermissions.asFileAttribute(mode);
  }
}
