package io.talos.server;

import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.Syncable;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.util.Progressable;

/**
 * The local file system under the scheme {@code stall:}, whose writes, flushes and opens of paths
 * containing {@link #stallPathsContaining} block until {@link #release()} (like an hdfs DataNode
 * that stops answering). A server uses it with {@code storage.root.uri=stall:///dir} and {@code
 * hadoop.fs.stall.impl=io.talos.server.StallingFileSystem}; Hadoop instantiates it, hence the
 * static switch. One test at a time. {@link #failPathsContaining} makes the same calls fail instead.
 */
public class StallingFileSystem extends RawLocalFileSystem {
  static volatile String stallPathsContaining;
  private static volatile CountDownLatch released = new CountDownLatch(1);
  /** Counted down when a call first blocks after {@link #stall}. */
  static volatile CountDownLatch stalled = new CountDownLatch(1);

  static void stall(String pathFragment) {
    released = new CountDownLatch(1);
    stalled = new CountDownLatch(1);
    stallPathsContaining = pathFragment;
  }

  static void release() {
    stallPathsContaining = null;
    released.countDown();
  }

  /** Calls on paths containing this fail at once with an IOException (a disk or DataNode error). */
  static volatile String failPathsContaining;

  static void maybeStall(Path p) throws IOException {
    String failing = failPathsContaining;
    if (failing != null && p.toUri().getPath().contains(failing)) {
      throw new IOException("injected storage failure of " + p.toUri().getPath());
    }
    String fragment = stallPathsContaining;
    if (fragment == null || !p.toUri().getPath().contains(fragment)) return;
    stalled.countDown();
    try {
      if (!released.await(60, TimeUnit.SECONDS)) throw new IOException("stall never released");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted in a stall");
    }
  }

  @Override
  public URI getUri() {
    return URI.create("stall:///");
  }

  @Override
  public String getScheme() {
    return "stall";
  }

  @Override
  public void initialize(URI uri, Configuration conf) throws IOException {
    super.initialize(uri, conf);
  }

  @Override
  public FSDataInputStream open(Path f, int bufferSize) throws IOException {
    maybeStall(f);
    return super.open(f, bufferSize);
  }

  @Override
  public FSDataOutputStream create(Path f, FsPermission permission, boolean overwrite, int bufferSize,
      short replication, long blockSize, Progressable progress) throws IOException {
    FSDataOutputStream real = super.create(f, permission, overwrite, bufferSize, replication, blockSize, progress);
    return new FSDataOutputStream(new StallingStream(f, real), null);
  }

  @Override
  public FSDataOutputStream create(Path f, boolean overwrite, int bufferSize, short replication, long blockSize,
      Progressable progress) throws IOException {
    FSDataOutputStream real = super.create(f, overwrite, bufferSize, replication, blockSize, progress);
    return new FSDataOutputStream(new StallingStream(f, real), null);
  }

  private static final class StallingStream extends OutputStream implements Syncable {
    private final Path path;
    private final FSDataOutputStream out;

    StallingStream(Path path, FSDataOutputStream out) {
      this.path = path;
      this.out = out;
    }

    @Override
    public void write(int b) throws IOException {
      maybeStall(path);
      out.write(b);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      maybeStall(path);
      out.write(b, off, len);
    }

    @Override
    public void flush() throws IOException {
      out.flush();
    }

    @Override
    public void hflush() throws IOException {
      maybeStall(path);
      out.hflush();
    }

    @Override
    public void hsync() throws IOException {
      maybeStall(path);
      out.hsync();
    }

    @Override
    public void close() throws IOException {
      out.close();
    }
  }
}
