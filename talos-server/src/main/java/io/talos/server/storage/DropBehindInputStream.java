package io.talos.server.storage;

import java.io.File;
import java.io.IOException;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSInputStream;

/**
 * The input stream of a local file, telling {@link PageCacheDropBehind} about every positioned
 * read so that the chunks it completed, when they lie behind the window at the file's end, are
 * dropped from the page cache again. Sequential reads ({@code read}, {@code seek}) go to the wrapped
 * stream unreported: the logs read segments only by position, and index files are read whole.
 *
 * <p>Thread-safety: positioned reads are thread-safe, as the wrapped stream's are; the sequential
 * ones are not (as in every Hadoop stream).
 */
final class DropBehindInputStream extends FSInputStream {
  private final FSDataInputStream in;
  private final File file;
  private final String path;
  private final PageCacheDropBehind dropBehind;

  DropBehindInputStream(FSDataInputStream in, File file, PageCacheDropBehind dropBehind) {
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

  private void readAt(long position, long length) {
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
    in.close();
  }
}
