package io.talos.server.storage;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.Constructor;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FSError;
import org.apache.hadoop.fs.FSInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.FilterFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.Syncable;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.util.Progressable;

/**
 * Wraps a file system to make the next writes, flushes or creates fail on demand, to count
 * hflush/hsync calls, and (with {@link #snapshotReads}) to open input streams that, like hdfs
 * ones, only see the bytes the file had when the stream was opened.
 */
class FaultInjectingFileSystem extends FilterFileSystem {
  /** How the next write fails. */
  enum WriteFault { NONE, HALF_THEN_IOEXCEPTION, NOTHING_THEN_FSERROR }

  volatile WriteFault nextWriteFault = WriteFault.NONE;
  final AtomicInteger failNextFlushes = new AtomicInteger();
  final AtomicInteger failNextCreates = new AtomicInteger();
  /** Which creates {@link #failNextCreates} counts and fails; the others go through. */
  volatile java.util.function.Predicate<Path> failCreatesOf = p -> true;
  final AtomicInteger hflushes = new AtomicInteger();
  final AtomicInteger hsyncs = new AtomicInteger();
  final AtomicInteger opens = new AtomicInteger();
  volatile boolean snapshotReads;
  /** While set, every hflush/hsync counts down {@link #flushEntered} and waits until the gate opens. */
  volatile java.util.concurrent.CountDownLatch flushGate;
  volatile java.util.concurrent.CountDownLatch flushEntered = new java.util.concurrent.CountDownLatch(1);
  /** Paths whose delete returns false without deleting (as a file system that refuses does). */
  volatile java.util.function.Predicate<Path> refuseDelete = p -> false;

  /** Creates of paths it accepts count down {@link #createHeld} and wait until {@link #createGate} opens. */
  volatile java.util.function.Predicate<Path> holdCreates = p -> false;
  final java.util.concurrent.CountDownLatch createGate = new java.util.concurrent.CountDownLatch(1);
  final java.util.concurrent.CountDownLatch createHeld = new java.util.concurrent.CountDownLatch(1);

  FaultInjectingFileSystem(FileSystem raw) {
    super(raw);
  }

  @Override
  public FSDataOutputStream create(Path f, FsPermission permission, boolean overwrite, int bufferSize,
      short replication, long blockSize, Progressable progress) throws IOException {
    if (failCreatesOf.test(f) && failNextCreates.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
      throw new IOException("injected create failure for " + f);
    }
    if (holdCreates.test(f)) {
      createHeld.countDown();
      try {
        if (!createGate.await(30, java.util.concurrent.TimeUnit.SECONDS)) throw new IOException("gate never opened");
      } catch (InterruptedException e) {
        throw new java.io.InterruptedIOException("held create of " + f);
      }
    }
    FSDataOutputStream real = fs.create(f, permission, overwrite, bufferSize, replication, blockSize, progress);
    return new FSDataOutputStream(new FaultyStream(real), null);
  }

  @Override
  public boolean delete(Path f, boolean recursive) throws IOException {
    if (refuseDelete.test(f)) return false;
    return fs.delete(f, recursive);
  }

  @Override
  public FSDataInputStream open(Path f, int bufferSize) throws IOException {
    opens.incrementAndGet();
    if (!snapshotReads) return fs.open(f, bufferSize);
    ByteArrayOutputStream copy = new ByteArrayOutputStream();
    try (InputStream in = fs.open(f, bufferSize)) {
      in.transferTo(copy);
    }
    return new FSDataInputStream(new SnapshotStream(copy.toByteArray()));
  }

  private final class FaultyStream extends OutputStream implements Syncable {
    private final FSDataOutputStream out;

    FaultyStream(FSDataOutputStream out) {
      this.out = out;
    }

    @Override
    public void write(int b) throws IOException {
      out.write(b);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      WriteFault fault = nextWriteFault;
      nextWriteFault = WriteFault.NONE;
      switch (fault) {
        case HALF_THEN_IOEXCEPTION -> {
          out.write(b, off, len / 2);
          out.hflush();
          throw new IOException("injected write failure after " + len / 2 + " of " + len + " bytes");
        }
        case NOTHING_THEN_FSERROR -> throw diskError();
        default -> out.write(b, off, len);
      }
    }

    @Override
    public void flush() throws IOException {
      out.flush();
    }

    @Override
    public void hflush() throws IOException {
      hflushes.incrementAndGet();
      awaitGate();
      out.hflush(); // the bytes do reach the file: only the acknowledgement fails
      if (failNextFlushes.getAndUpdate(n -> Math.max(0, n - 1)) > 0) throw new IOException("injected hflush failure");
    }

    @Override
    public void hsync() throws IOException {
      hsyncs.incrementAndGet();
      awaitGate();
      out.hsync();
      if (failNextFlushes.getAndUpdate(n -> Math.max(0, n - 1)) > 0) throw new IOException("injected hsync failure");
    }

    @Override
    public void close() throws IOException {
      out.close();
    }
  }

  private void awaitGate() throws IOException {
    java.util.concurrent.CountDownLatch gate = flushGate;
    if (gate == null) return;
    flushEntered.countDown();
    try {
      gate.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException("interrupted at the flush gate");
    }
  }

  /**
   * The Error RawLocalFileSystem's streams throw when the disk fails a write (its constructor is
   * package-private, hence the reflection).
   */
  static FSError diskError() {
    try {
      Constructor<FSError> c = FSError.class.getDeclaredConstructor(Throwable.class);
      c.setAccessible(true);
      return c.newInstance(new IOException("injected disk error"));
    } catch (ReflectiveOperationException e) {
      throw new AssertionError(e);
    }
  }

  /** An input stream over a copy of the file taken at open time, like an hdfs stream's length. */
  private static final class SnapshotStream extends FSInputStream {
    private final byte[] data;
    private int pos;

    SnapshotStream(byte[] data) {
      this.data = data;
    }

    @Override
    public void seek(long p) throws IOException {
      if (p > data.length) throw new EOFException("seek past end");
      pos = (int) p;
    }

    @Override
    public long getPos() {
      return pos;
    }

    @Override
    public boolean seekToNewSource(long targetPos) {
      return false;
    }

    @Override
    public int read() {
      return pos < data.length ? data[pos++] & 0xff : -1;
    }

    @Override
    public int read(long position, byte[] b, int off, int len) {
      if (position >= data.length) return -1;
      int n = (int) Math.min(len, data.length - position);
      System.arraycopy(data, (int) position, b, off, n);
      return n;
    }
  }
}
