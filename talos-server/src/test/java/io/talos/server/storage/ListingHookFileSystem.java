package io.talos.server.storage;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.FilterFileSystem;
import org.apache.hadoop.fs.LeaseRecoverable;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.util.Progressable;

/**
 * Wraps an hdfs client (keeping its leases, so fencing stays on) to run an action right after a
 * chosen directory listing: the listing number {@code afterListing} (1-based) counted from the
 * creation of an owner marker. Used to let another server act between a new owner's listing and
 * what it does with the listed lengths.
 */
final class ListingHookFileSystem extends FilterFileSystem implements LeaseRecoverable {
  interface Action {
    void run() throws Exception;
  }

  private final int afterListing;
  private final Action action;
  private final AtomicInteger listingsSinceClaim = new AtomicInteger(-1);

  ListingHookFileSystem(FileSystem hdfs, int afterListing, Action action) {
    super(hdfs);
    this.afterListing = afterListing;
    this.action = action;
  }

  @Override
  public FSDataOutputStream create(Path f, FsPermission permission, boolean overwrite, int bufferSize,
      short replication, long blockSize, Progressable progress) throws IOException {
    FSDataOutputStream out = fs.create(f, permission, overwrite, bufferSize, replication, blockSize, progress);
    if (f.getName().endsWith(".owner")) listingsSinceClaim.set(0);
    return out;
  }

  @Override
  public FileStatus[] listStatus(Path f) throws IOException {
    FileStatus[] result = fs.listStatus(f);
    if (listingsSinceClaim.get() >= 0 && listingsSinceClaim.incrementAndGet() == afterListing) {
      try {
        action.run();
      } catch (Exception e) {
        throw new AssertionError("hook failed", e);
      }
    }
    return result;
  }

  @Override
  public boolean recoverLease(Path file) throws IOException {
    return ((LeaseRecoverable) fs).recoverLease(file);
  }

  @Override
  public boolean isFileClosed(Path file) throws IOException {
    return ((LeaseRecoverable) fs).isFileClosed(file);
  }
}
