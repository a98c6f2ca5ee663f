package io.talos.server.storage;

import java.io.IOException;
import java.io.OutputStream;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.fs.Syncable;

/**
 * The output stream of a local file, reporting to {@link PageCacheDropBehind} how far the file
 * has been handed to the OS after each write. Everything else is the wrapped stream's: hflush and
 * hsync (it must stay {@link Syncable}, or Hadoop's buffering stream above it would refuse them),
 * its capabilities, its close.
 *
 * <p>Thread-safety: writes are serialized by the buffering stream above it (and by this class's
 * own lock); hflush and hsync may run concurrently with a write, as the wrapped stream allows.
 */
final class DropBehindOutputStream extends OutputStream implements Syncable, StreamCapabilities {
  private final OutputStream out;
  private final String path;
  private final PageCacheDropBehind dropBehind;
  /** Bytes of the file handed to the OS: its length when opened plus every byte written since. */
  private long position;
  /** Bytes from 0 already handed to {@link PageCacheDropBehind#afterWrite}. */
  private long scheduledUpTo;

  /**
   * @param out the file system's stream of the file
   * @param startPosition the file's length when {@code out} was opened (0 unless appending)
   */
  DropBehindOutputStream(OutputStream out, String path, long startPosition, PageCacheDropBehind dropBehind) {
    this.out = out;
    this.path = path;
    this.position = startPosition;
    this.dropBehind = dropBehind;
  }

  @Override
  public synchronized void write(int b) throws IOException {
    out.write(b);
    written(1);
  }

  @Override
  public synchronized void write(byte[] b, int off, int len) throws IOException {
    out.write(b, off, len);
    written(len);
  }

  private void written(int len) {
    position += len;
    scheduledUpTo = dropBehind.afterWrite(path, position, scheduledUpTo);
  }

  @Override
  public void flush() throws IOException {
    out.flush();
  }

  @Override
  public void hflush() throws IOException {
    ((Syncable) out).hflush();
  }

  @Override
  public void hsync() throws IOException {
    ((Syncable) out).hsync();
  }

  @Override
  public boolean hasCapability(String capability) {
    return out instanceof StreamCapabilities c && c.hasCapability(capability);
  }

  @Override
  public void close() throws IOException {
    out.close();
  }
}
