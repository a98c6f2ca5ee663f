package io.talos.server.storage;

import java.io.EOFException;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import org.apache.hadoop.fs.ByteBufferPositionedReadable;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSInputStream;
import org.apache.hadoop.fs.StreamCapabilities;

/**
 * The input stream of a local file (wrapping the Hadoop one), with two additions:
 *
 * <ul>
 *   <li>Positioned reads into a {@code ByteBuffer} ({@code ByteBufferPositionedReadable}, which
 *       the Hadoop stream lacks): a direct buffer gets the bytes from the kernel without the JDK's
 *       temporary buffer and copy that a read into an array costs. They go through a {@code
 *       FileChannel} of its own, opened on the first one (a segment read that way holds two file
 *       descriptors).</li>
 *   <li>When given a {@link PageCacheDropBehind}, every positioned read is reported to it, so that
 *       the chunks it completed, when they lie behind the window at the file's end, are dropped
 *       from the page cache again.</li>
 * </ul>
 *
 * Sequential reads ({@code read}, {@code seek}) go to the wrapped stream unreported: the logs read
 * segments only by position, and index files are read whole.
 *
 * <p>Thread-safety: positioned reads are thread-safe, as the wrapped stream's and a file channel's
 * are; the sequential ones are not (as in every Hadoop stream).
 */
final class LocalFileInputStream extends FSInputStream implements ByteBufferPositionedReadable, StreamCapabilities {
  private final FSDataInputStream in;
  private final File file;
  private final String path;
  /** Null: reads are not reported. */
  private final PageCacheDropBehind dropBehind;
  /** For positioned reads into direct buffers; opened on the first one. */
  private volatile FileChannel channel;
  private boolean closed;

  LocalFileInputStream(FSDataInputStream in, File file, PageCacheDropBehind dropBehind) {
    this.in = in;
    this.file = file;
    this.path = file.getPath();
    this.dropBehind = dropBehind;
  }

  @Override
  public int read(long position, byte[] buffer, int offset, int length) throws IOException {
    int n = in.read(position, buffer, offset, length);
    if (n > 0) readAt(position, n);
    return n;
  }

  @Override
  public void readFully(long position, byte[] buffer, int offset, int length) throws IOException {
    in.readFully(position, buffer, offset, length);
    readAt(position, length);
  }

  @Override
  public void readFully(long position, byte[] buffer) throws IOException {
    readFully(position, buffer, 0, buffer.length);
  }

  /**
   * Reads into {@code buf} straight from the file: a direct buffer gets the bytes from the kernel
   * without the JDK's temporary buffer and copy that a read into an array costs.
   */
  @Override
  public int read(long position, ByteBuffer buf) throws IOException {
    int n = channel().read(buf, position);
    if (n > 0) readAt(position, n);
    return n;
  }

  @Override
  public void readFully(long position, ByteBuffer buf) throws IOException {
    FileChannel ch = channel();
    long start = position;
    int length = buf.remaining();
    while (buf.hasRemaining()) {
      int n = ch.read(buf, position);
      if (n < 0) {
        throw new EOFException("end of " + path + " at " + position + ", " + buf.remaining() + " bytes short of "
            + length + " bytes from " + start);
      }
      position += n;
    }
    readAt(start, length);
  }

  private FileChannel channel() throws IOException {
    FileChannel ch = channel;
    if (ch != null) return ch;
    synchronized (this) {
      if (closed) throw new IOException("stream of " + path + " is closed");
      if (channel == null) channel = FileChannel.open(file.toPath(), StandardOpenOption.READ);
      return channel;
    }
  }

  @Override
  public boolean hasCapability(String capability) {
    return StreamCapabilities.PREADBYTEBUFFER.equalsIgnoreCase(capability);
  }

  private void readAt(long position, long length) {
    if (dropBehind == null) return;
    // the file's length (a stat) only when a chunk may have been completed: once per chunk read
    if (PageCacheDropBehind.completesChunk(position, length)) {
      dropBehind.afterRead(path, position, length, file.length());
    }
  }

  @Override
  public int read() throws IOException {
    return in.read();
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    return in.read(b, off, len);
  }

  @Override
  public long skip(long n) throws IOException {
    return in.skip(n);
  }

  @Override
  public void seek(long pos) throws IOException {
    in.seek(pos);
  }

  @Override
  public long getPos() throws IOException {
    return in.getPos();
  }

  @Override
  public boolean seekToNewSource(long targetPos) throws IOException {
    return in.seekToNewSource(targetPos);
  }

  @Override
  public int available() throws IOException {
    return in.available();
  }

  @Override
  public void close() throws IOException {
    FileChannel ch;
    synchronized (this) {
      closed = true;
      ch = channel;
    }
    try {
      if (ch != null) ch.close();
    } finally {
      in.close();
    }
  }
}
