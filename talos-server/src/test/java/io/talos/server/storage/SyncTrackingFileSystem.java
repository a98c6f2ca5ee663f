package io.talos.server.storage;

import java.io.IOException;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.FilterFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.Syncable;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.util.Progressable;

/**
 * Wraps a {@link RawLocalFileSystem} to record, for every file it creates, how many bytes an hsync
 * (fsync) made durable, and {@link #powerCut() simulates a power cut}: every such file is cut back
 * to its last synced length, as the page cache is lost. Renames carry the record along. (A power
 * cut can also lose directory entries that were not fsynced; cutting such a file to 0 bytes is the
 * same for the log, which ignores empty and invalid files.)
 */
final class SyncTrackingFileSystem extends FilterFileSystem {
  private final RawLocalFileSystem raw;
  private final Map<Path, Long> syncedBytes = new ConcurrentHashMap<>();

  SyncTrackingFileSystem(RawLocalFileSystem raw) {
    super(raw);
    this.raw = raw;
  }

  @Override
  public FSDataOutputStream create(Path f, FsPermission permission, boolean overwrite, int bufferSize,
      short replication, long blockSize, Progressable progress) throws IOException {
    Path key = makeQualified(f);
    FSDataOutputStream real = fs.create(f, permission, overwrite, bufferSize, replication, blockSize, progress);
    syncedBytes.put(key, 0L);
    return new FSDataOutputStream(new Tracking(key, real), null);
  }

  @Override
  public boolean rename(Path src, Path dst) throws IOException {
    boolean done = fs.rename(src, dst);
    if (done) {
      Long synced = syncedBytes.remove(makeQualified(src));
      if (synced != null) syncedBytes.put(makeQualified(dst), synced);
    }
    return done;
  }

  /** Cuts every file created through this wrapper back to the bytes its last hsync made durable. */
  void powerCut() throws IOException {
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
      out.write(b);
      written++;
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      out.write(b, off, len);
      written += len;
    }

    @Override
    public void flush() throws IOException {
      out.flush();
    }

    @Override
    public void hflush() throws IOException {
      out.hflush(); // reaches the OS, not the disk
    }

    @Override
    public void hsync() throws IOException {
      out.hsync();
      syncedBytes.put(path, written);
    }

    @Override
    public void close() throws IOException {
      out.close(); // RawLocalFileSystem closes without fsync
    }
  }
}
