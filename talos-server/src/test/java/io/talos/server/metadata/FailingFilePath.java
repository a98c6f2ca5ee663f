package io.talos.server.metadata;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import org.h2.store.fs.FileBase;
import org.h2.store.fs.FilePath;
import org.h2.store.fs.FilePathWrapper;

/**
 * An H2 file path ({@code failing:} + another path, e.g. {@code failing:async:/dir/f.mv.db})
 * whose writes and syncs, or opens, fail with an IOException while the test says so: a disk
 * that fails under the store. Switches are global (H2 creates path instances itself).
 */
public final class FailingFilePath extends FilePathWrapper {
  static volatile boolean failWrites;
  static volatile boolean failOpens;

  static {
    FilePath.register(new FailingFilePath());
  }

  /** Makes sure the scheme is registered (class initialisation does it). */
  static String prefix() {
    return "failing:";
  }

  static void reset() {
    failWrites = false;
    failOpens = false;
  }

  public FailingFilePath() {}

  @Override
  public String getScheme() {
    return "failing";
  }

  @Override
  public FileChannel open(String mode) throws IOException {
    if (failOpens) {
      throw new IOException("injected: cannot open " + name);
    }
    return new FailingChannel(super.open(mode));
  }

  private static void check(String what) throws IOException {
    if (failWrites) {
      throw new IOException("injected " + what + " failure");
    }
  }

  private static final class FailingChannel extends FileBase {
    private final FileChannel base;

    FailingChannel(FileChannel base) {
      this.base = base;
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
      return base.read(dst);
    }

    @Override
    public int read(ByteBuffer dst, long position) throws IOException {
      return base.read(dst, position);
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
      check("write");
      return base.write(src);
    }

    @Override
    public int write(ByteBuffer src, long position) throws IOException {
      check("write");
      return base.write(src, position);
    }

    @Override
    public long position() throws IOException {
      return base.position();
    }

    @Override
    public FileChannel position(long newPosition) throws IOException {
      base.position(newPosition);
      return this;
    }

    @Override
    public long size() throws IOException {
      return base.size();
    }

    @Override
    public FileChannel truncate(long size) throws IOException {
      check("truncate");
      base.truncate(size);
      return this;
    }

    @Override
    public void force(boolean metaData) throws IOException {
      check("sync");
      base.force(metaData);
    }

    @Override
    public FileLock tryLock(long position, long size, boolean shared) throws IOException {
      return base.tryLock(position, size, shared);
    }

    @Override
    protected void implCloseChannel() throws IOException {
      base.close();
    }
  }
}
