package io.talos.bench.reliability;

import java.io.IOException;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FilterFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.Syncable;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.util.Progressable;

/**
 * A {@link RawLocalFileSystem} that records, for every file it creates, how many bytes an hsync
 * (fsync) made durable, and {@link #powerCut() loses the power}: from that moment every write and
 * sync through it fails, and every such file is cut back to its last synced length, as the page
 * cache is lost. Renames carry the record along. (A power cut can also lose directory entries that
 * were not fsynced; cutting such a file to 0 bytes is the same for the log, which ignores empty and
 * invalid files.)
 *
 * <p>Thread-safe: writes and syncs hold the lock {@link #powerCut} takes, so a sync either
 * completed before the cut (and its bytes stay) or fails.
 */
final class PowerCutFileSystem extends FilterFileSystem {
  private final RawLocalFileSystem raw;
  private final Map<Path, Long> syncedBytes = new ConcurrentHashMap<>();
  private boolean off;

  PowerCutFileSystem(RawLocalFileSystem raw) {
    super(raw);
    this.raw = raw;
  }

  @Override
  public FSDataOutputStream create(Path f, FsPermission permission, boolean overwrite, int bufferSize,
      short replication, long blockSize, Progressable progress) throws IOException {
    synchronized (this) {
      checkPower();
      Path key = makeQualified(f);
      FSDataOutputStream real = fs.create(f, permission, overwrite, bufferSize, replication, blockSize, progress);
      syncedBytes.put(key, 0L);
      return new FSDataOutputStream(new Tracking(key, real), null);
    }
  }

  @Override
  public synchronized boolean rename(Path src, Path dst) throws IOException {
    checkPower();
    boolean done = fs.rename(src, dst);
    if (done) {
      Long synced = syncedBytes.remove(makeQualified(src));
      if (synced != null) syncedBytes.put(makeQualified(dst), synced);
    }
    return done;
  }

  @Override
  public synchronized boolean delete(Path f, boolean recursive) throws IOException {
    checkPower();
    return fs.delete(f, recursive);
  }

  private void checkPower() throws IOException {
    if (off) throw new IOException("power cut");
  }

  /** Fails every later write and sync, and cuts every file created here to its synced length. */
  synchronized void powerCut() throws IOException {
    off = true;
    for (Map.Entry<Path, Long> e : syncedBytes.entrySet()) {
      java.io.File f = raw.pathToFile(e.getKey());
      if (!f.exists()) continue;
      try (RandomAccessFile file = new RandomAccessFile(f, "rw")) {
        if (file.length() > e.getValue()) file.setLength(e.getValue());
      }
    }
  }

  private final class Tracking extends OutputStream implements Syncable {
    private final Path path;
    private final FSDataOutputStream out;
    private long written;

    Tracking(Path path, FSDataOutputStream out) {
      this.path = path;
      this.out = out;
    }

    @Override
    public void write(int b) throws IOException {
      synchronized (PowerCutFileSystem.this) {
        checkPower();
        out.write(b);
        written++;
      }
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      synchronized (PowerCutFileSystem.this) {
        checkPower();
        out.write(b, off, len);
        written += len;
      }
    }

    @Override
    public void flush() throws IOException {
      synchronized (PowerCutFileSystem.this) {
        checkPower();
        out.flush();
      }
    }

    @Override
    public void hflush() throws IOException {
      synchronized (PowerCutFileSystem.this) {
        checkPower();
        out.hflush(); // reaches the OS, not the disk
      }
    }

    @Override
    public void hsync() throws IOException {
      synchronized (PowerCutFileSystem.this) {
        checkPower();
        out.hsync();
        syncedBytes.put(path, written);
      }
    }

    @Override
    public void close() throws IOException {
      synchronized (PowerCutFileSystem.this) {
        if (!off) out.close(); // RawLocalFileSystem closes without fsync
      }
    }
  }
}
