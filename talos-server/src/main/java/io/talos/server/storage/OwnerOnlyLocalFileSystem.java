package io.talos.server.storage;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The raw local file system, creating everything owner-only: files 0600, directories 0700
 * (messages are private to the server's user). Hadoop's {@link RawLocalFileSystem} (3.4.1)
 * gives a new file the default permission minus the umask of its configuration ({@code
 * fs.permissions.umask-mode}, default 022: 0644) and sets it after creating the file, with a
 * {@code chmod} process where Hadoop's native library is missing; a directory made without a
 * permission gets the process umask (0755). Here the umask is fixed to 077, files and
 * directories are created with their final mode in one {@code java.nio} call (no window in
 * which they are readable by others), and permissions are set through {@code java.nio} (no
 * process). Existing files and directories keep their mode. On a file system without POSIX
 * permissions it behaves exactly like its parent.
 *
 * <p>Given a {@link PageCacheDropBehind}, its streams report writes and positioned reads to it,
 * which keeps only the newest part of each file in the page cache; it is closed with the file
 * system.
 *
 * <p>Made to pin extent trees, {@link #pinExtentTree} reserves a new segment file's {@link
 * ExtentTreePin anchors}; otherwise it does nothing.
 *
 * <p>Thread-safe like its parent.
 */
public final class OwnerOnlyLocalFileSystem extends RawLocalFileSystem {
  private static final Logger LOG = LoggerFactory.getLogger(OwnerOnlyLocalFileSystem.class);
  static final Set<PosixFilePermission> FILE = PosixFilePermissions.fromString("rw-------");
  static final Set<PosixFilePermission> DIR = PosixFilePermissions.fromString("rwx------");
  private static final boolean POSIX = FileSystems.getDefault().supportedFileAttributeViews().contains("posix");

  /** Null: the page cache is left to the kernel. */
  private final PageCacheDropBehind dropBehind;
  private final boolean pinExtentTrees;
  private final AtomicLong pinnedFiles = new AtomicLong();
  private final AtomicLong pinFailures = new AtomicLong();

  public OwnerOnlyLocalFileSystem() {
    this(null, false);
  }

  /**
   * @param dropBehind null to leave the page cache to the kernel; owned (closed) by this file system
   * @param pinExtentTrees whether {@link #pinExtentTree} reserves anchors
   */
  public OwnerOnlyLocalFileSystem(PageCacheDropBehind dropBehind, boolean pinExtentTrees) {
    this.dropBehind = dropBehind;
    this.pinExtentTrees = pinExtentTrees;
  }

  /**
   * Reserves the {@link ExtentTreePin anchors} of the segment file {@code f}, just created, past
   * {@code dataLimitBytes}, if this file system pins extent trees. A failure (no {@code
   * fallocate} on this file system, not Linux) leaves the file as it is: counted, and logged the
   * first time.
   *
   * @return whether the anchors were reserved
   */
  public boolean pinExtentTree(Path f, long dataLimitBytes) {
    if (!pinExtentTrees) return false;
    String why = ExtentTreePin.pin(pathToFile(f).getPath(), dataLimitBytes);
    if (why == null) {
      pinnedFiles.incrementAndGet();
      return true;
    }
    if (pinFailures.incrementAndGet() == 1) {
      LOG.warn("Segment files are not pinned (their extent trees can shrink during write-back): {} for {};"
          + " further failures are only counted", why, f);
    }
    return false;
  }

  /** Segment files whose anchors were reserved. */
  public long pinnedFiles() {
    return pinnedFiles.get();
  }

  /** Segment files whose anchors could not be reserved. */
  public long pinFailures() {
    return pinFailures.get();
  }

  /** The drop-behind its streams report to, or null. */
  public PageCacheDropBehind dropBehind() {
    return dropBehind;
  }

  @Override
  public void initialize(URI name, Configuration conf) throws IOException {
    Configuration ownerOnly = new Configuration(conf);
    ownerOnly.set(FsPermission.UMASK_LABEL, "077");
    super.initialize(name, ownerOnly);
  }

  @Override
  public void setPermission(Path p, FsPermission permission) throws IOException {
    if (!POSIX) {
      super.setPermission(p, permission);
      return;
    }
    short mode = permission.toShort();
    Set<PosixFilePermission> set = EnumSet.noneOf(PosixFilePermission.class);
    PosixFilePermission[] bits = { // from 0400 down to 0001
        PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE,
        PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE,
        PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE};
    for (int i = 0; i < bits.length; i++) {
      if ((mode & (0400 >> i)) != 0) set.add(bits[i]);
    }
    Files.setPosixFilePermissions(pathToFile(p).toPath(), set);
  }

  @Override
  protected OutputStream createOutputStreamWithMode(Path f, boolean append, FsPermission permission)
      throws IOException {
    boolean created = false;
    if (POSIX) {
      try {
        Files.createFile(pathToFile(f).toPath(), attribute(FILE));
        created = true;
      } catch (FileAlreadyExistsException e) {
        // overwrite or append: the existing file keeps its mode
      }
    }
    // A file just created is empty: open it to append rather than to truncate. On ext4, truncating
    // a file to 0 bytes marks it to be flushed whole when any descriptor of it is next closed (the
    // auto_da_alloc heuristic for files rewritten in place), which would start writing back all its
    // dirty data at a moment no one chose, e.g. when a reader closes.
    OutputStream out = super.createOutputStreamWithMode(f, append || created, permission);
    if (dropBehind == null) return out;
    File file = pathToFile(f);
    return new DropBehindOutputStream(out, file.getPath(), append ? file.length() : 0, dropBehind);
  }

  @Override
  public FSDataInputStream open(Path f, int bufferSize) throws IOException {
    return new FSDataInputStream(new LocalFileInputStream(super.open(f, bufferSize), pathToFile(f), dropBehind));
  }

  @Override
  public void close() throws IOException {
    try {
      super.close();
    } finally {
      if (dropBehind != null) dropBehind.close();
    }
  }

  @Override
  protected boolean mkOneDirWithMode(Path p, File p2f, FsPermission permission) throws IOException {
    if (!POSIX) return super.mkOneDirWithMode(p, p2f, permission);
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
