package io.talos.server.storage;

import java.io.Closeable;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps only the newest {@link #windowBytes()} of each local segment file in the OS page cache:
 * data further behind a file's end is written back to the disk and dropped from the page cache,
 * after it was written and again after it was read, so that new writes and reads reuse the pages
 * just freed instead of taking fresh ones. This is what the HDFS DataNode does with its
 * drop-behind settings, for the same reasons:
 *
 * <ul>
 *   <li>A page cache that only grows makes each new page cost more than the copy into it: the
 *       kernel has to find and clean a page first, and in a virtual machine memory the guest has
 *       not touched for a while (or has handed back to the host) faults in from the host page by
 *       page. Measured on the project's VM with {@code dd}-like writers: writing into new page
 *       cache cost 3.9 CPU-seconds per GB (270 MB/s), writing the same data with drop-behind 0.45
 *       CPU-seconds per GB (1.9 GB/s); reading a file that was not cached, 3.6 against 0.65.</li>
 *   <li>Dirty data is bounded per file instead of by the kernel's global dirty limits, so writers
 *       are not stalled all at once when those limits are reached, and less acknowledged data
 *       waits in memory for the disk.</li>
 * </ul>
 *
 * <p>Consumers near the tail read the window, which stays cached; a consumer further behind reads
 * from the disk, as it would once the data outgrew the memory anyway.
 *
 * <p>All of it is advice: nothing here changes what a file holds or when a put is acknowledged
 * (that is the log's hflush or hsync). Work is done in whole chunks of {@link #CHUNK_BYTES}, by one
 * background thread, so a write or read never waits for the disk because of it; when the thread
 * falls behind by {@link #QUEUE_CHUNKS} chunks, further chunks are left to the kernel (counted in
 * {@link #skippedChunks()}).
 *
 * <p>Thread-safety: {@link #afterWrite} and {@link #afterRead} may be called by any thread; {@link
 * #runOnce} by one thread at a time (the background thread, or a test stepping it).
 */
public final class PageCacheDropBehind implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(PageCacheDropBehind.class);

  /** Granularity of the advice: one background step per this many bytes of a file. */
  static final long CHUNK_BYTES = 4L * 1024 * 1024;
  /** Chunks waiting for the background thread at most. */
  static final int QUEUE_CHUNKS = 1024;
  /** How long a started write-back waits for the next chunk before it is finished on its own. */
  private static final long PIPELINE_WAIT_MS = 20;

  private final long windowBytes;
  private final ArrayBlockingQueue<Chunk> queue = new ArrayBlockingQueue<>(QUEUE_CHUNKS);
  private final AtomicLong writtenBackBytes = new AtomicLong();
  private final AtomicLong droppedBytes = new AtomicLong();
  private final AtomicLong skippedChunks = new AtomicLong();
  private final AtomicLong failedCalls = new AtomicLong();
  private final Thread thread;
  private volatile boolean closed;
  /** Background thread only: a chunk whose write-back was started and is not finished yet. */
  private Chunk started;

  /** A range of a file to write back (if written) and drop. */
  private static final class Chunk {
    final String path;
    final long offset;
    final long length;
    final boolean written;
    int fd = -1;

    Chunk(String path, long offset, long length, boolean written) {
      this.path = path;
      this.offset = offset;
      this.length = length;
      this.written = written;
    }
  }

  /**
   * @param windowBytes bytes behind each file's end left to the page cache ({@code >= 0})
   * @param startThread false for a test that steps {@link #runOnce} itself
   * @throws IllegalStateException if the native calls are unavailable (check {@link
   *     #unavailableReason()} first)
   */
  public PageCacheDropBehind(long windowBytes, boolean startThread) {
    if (windowBytes < 0) throw new IllegalArgumentException("windowBytes=" + windowBytes + " must be >= 0");
    String why = NativePageCache.unavailableReason();
    if (why != null) throw new IllegalStateException("page-cache drop-behind is unavailable: " + why);
    this.windowBytes = windowBytes;
    if (startThread) {
      thread = new Thread(this::run, "page-cache-drop-behind");
      thread.setDaemon(true);
      thread.start();
    } else {
      thread = null;
    }
  }

  /** Null if drop-behind can be used on this machine, else why not. */
  public static String unavailableReason() {
    return NativePageCache.unavailableReason();
  }

  public long windowBytes() {
    return windowBytes;
  }

  /**
   * Called after bytes {@code [0, position)} of a file were handed to the OS by its only writer.
   * Queues the whole chunks from {@code scheduledUpTo} up to {@code position - windowBytes}.
   *
   * @return the new {@code scheduledUpTo} for the writer to pass next time (chunks that did not
   *     fit in the queue are skipped, not retried)
   */
  long afterWrite(String path, long position, long scheduledUpTo) {
    long limit = floorChunk(position - windowBytes);
    if (limit - scheduledUpTo < CHUNK_BYTES) return scheduledUpTo;
    for (long at = scheduledUpTo; at < limit; at += CHUNK_BYTES) {
      offer(new Chunk(path, at, Math.min(CHUNK_BYTES, limit - at), true));
    }
    return limit;
  }

  /**
   * Called after {@code [position, position + length)} of a file of {@code fileLength} bytes was
   * read. When the read completed one or more chunks that lie wholly more than the window behind
   * the file's end, queues them to be dropped again.
   */
  void afterRead(String path, long position, long length, long fileLength) {
    long from = floorChunk(position);
    long to = Math.min(floorChunk(position + length), floorChunk(fileLength - windowBytes));
    for (long at = from; at < to; at += CHUNK_BYTES) {
      offer(new Chunk(path, at, CHUNK_BYTES, false));
    }
  }

  /**
   * Whether a read of {@code [position, position + length)} reaches or crosses a chunk boundary,
   * so that {@link #afterRead} may have a chunk to drop (the cheap test before asking the file's
   * length).
   */
  static boolean completesChunk(long position, long length) {
    return floorChunk(position + length) > floorChunk(position);
  }

  private static long floorChunk(long bytes) {
    return bytes <= 0 ? 0 : bytes - bytes % CHUNK_BYTES;
  }

  private void offer(Chunk c) {
    if (closed || !queue.offer(c)) skippedChunks.incrementAndGet();
  }

  /**
   * One step of the background thread: takes the next chunk (waiting up to {@code waitMs}, or
   * less while a started write-back is pending), starts its write-back if it was written, and
   * finishes the previously started one: waits for it to reach the disk, then drops it. A chunk
   * that was only read is dropped at once. Two chunks are thus in flight to the disk at a time.
   */
  void runOnce(long waitMs) throws InterruptedException {
    Chunk next = queue.poll(started == null ? waitMs : Math.min(waitMs, PIPELINE_WAIT_MS), TimeUnit.MILLISECONDS);
    if (next != null && next.written) start(next);
    if (started != null) {
      finish(started);
      started = null;
    }
    if (next != null) {
      if (next.written && next.fd >= 0) {
        started = next;
      } else if (!next.written) {
        drop(next);
      }
    }
  }

  private void start(Chunk c) {
    c.fd = NativePageCache.openReadOnly(c.path);
    if (c.fd < 0) return; // deleted meanwhile (retention, a replaced segment): nothing to do
    if (NativePageCache.startWriteBack(c.fd, c.offset, c.length) != 0) failedCalls.incrementAndGet();
  }

  private void finish(Chunk c) {
    try {
      if (NativePageCache.writeBackAndWait(c.fd, c.offset, c.length) != 0) {
        failedCalls.incrementAndGet();
        return; // not known to be on the disk: the kernel would keep the dirty pages anyway
      }
      writtenBackBytes.addAndGet(c.length);
      dropCleanPages(c.fd, c);
    } finally {
      NativePageCache.closeQuietly(c.fd);
      c.fd = -1;
    }
  }

  private void drop(Chunk c) {
    int fd = NativePageCache.openReadOnly(c.path);
    if (fd < 0) return;
    try {
      dropCleanPages(fd, c);
    } finally {
      NativePageCache.closeQuietly(fd);
    }
  }

  private void dropCleanPages(int fd, Chunk c) {
    if (NativePageCache.dropCleanPages(fd, c.offset, c.length) != 0) {
      failedCalls.incrementAndGet();
    } else {
      droppedBytes.addAndGet(c.length);
    }
  }

  private void run() {
    try {
      while (!closed) runOnce(1000);
    } catch (InterruptedException e) {
      // closing
    } catch (RuntimeException | Error e) {
      LOG.error("Page-cache drop-behind stopped; the page cache is left to the kernel from now on", e);
    } finally {
      if (started != null) {
        NativePageCache.closeQuietly(started.fd);
        started = null;
      }
    }
  }

  /** Bytes written back to the disk by this (also counted by {@link #droppedBytes()} once dropped). */
  public long writtenBackBytes() {
    return writtenBackBytes.get();
  }

  /** Bytes dropped from the page cache, after writing or reading. */
  public long droppedBytes() {
    return droppedBytes.get();
  }

  /** Chunks left to the kernel because the background thread was behind, or after closing. */
  public long skippedChunks() {
    return skippedChunks.get();
  }

  /** System calls that failed (the chunk is then left to the kernel). */
  public long failedCalls() {
    return failedCalls.get();
  }

  /** Chunks waiting for the background thread. */
  public int queuedChunks() {
    return queue.size();
  }

  /** Stops the background thread; chunks still queued are left to the kernel. Idempotent. */
  @Override
  public void close() {
    closed = true;
    if (thread != null) {
      thread.interrupt();
      try {
        thread.join(5000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    } else if (started != null) {
      NativePageCache.closeQuietly(started.fd);
      started = null;
    }
    queue.clear();
  }
}
