package io.talos.server.storage;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.FilterFileSystem;
import org.apache.hadoop.fs.LeaseRecoverable;
import org.apache.hadoop.fs.Path;

/**
 * Wraps an hdfs client, counting the input streams opened, and still offers its leases (a plain
 * FilterFileSystem would hide them, which turns fencing and lease recovery off).
 */
final class LeaseCountingFileSystem extends FilterFileSystem implements LeaseRecoverable {
  final AtomicInteger opens = new AtomicInteger();

  LeaseCountingFileSystem(FileSystem hdfs) {
    super(hdfs);
  }

  @Override
  public FSDataInputStream open(Path f, int bufferSize) throws IOException {
    opens.incrementAndGet();
    return fs.open(f, bufferSize);
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
