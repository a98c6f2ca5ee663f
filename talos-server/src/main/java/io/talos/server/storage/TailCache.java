package io.talos.server.storage;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Recently appended bytes of the segments of a server's partition logs, bounded in bytes, so that
 * consumers near the tail are served from memory instead of the file system (on hdfs every read
 * of a segment still being written costs a NameNode and a DataNode round trip, and an input stream
 * only sees the length the file had when it was opened).
 *
 * <p>What is cached: each successful append puts its batch (the exact bytes written, a contiguous
 * range of the segment file) after they were flushed and before the log publishes them to readers.
 * A read of {@code [position, position + len)} of a segment is served when consecutive cached
 * batches cover the whole range; otherwise the caller reads the file. Eviction is oldest append
 * first across all segments, which keeps the newest data of every partition. A batch larger than
 * the capacity is not cached. A segment's batches are dropped when it is closed or deleted.
 *
 * <p>Thread-safe: one lock, held to find or change entries; {@code read} copies the bytes after
 * releasing it (cached arrays are never changed).
 */
public final class TailCache {
  /** Holds nothing; for logs opened without a shared cache. */
  public static final TailCache DISABLED = new TailCache(0);

  private record Key(Object segment, long position) {}

  private final long capacityBytes;
  private final Map<Object, TreeMap<Long, byte[]>> bySegment = new HashMap<>();
  private final ArrayDeque<Key> insertionOrder = new ArrayDeque<>();
  private long sizeBytes;
  private long hits;
  private long misses;

  /** @param capacityBytes most bytes held; 0 disables the cache */
  public TailCache(long capacityBytes) {
    if (capacityBytes < 0) throw new IllegalArgumentException("capacityBytes=" + capacityBytes + " must be >= 0");
    this.capacityBytes = capacityBytes;
  }

  /**
   * Caches {@code bytes} as the content of {@code segment} at {@code position}; the array must not
   * be changed afterwards. Evicts the oldest batches to stay within the capacity.
   */
  public synchronized void put(Object segment, long position, byte[] bytes) {
    if (bytes.length == 0 || bytes.length > capacityBytes) return;
    byte[] previous = bySegment.computeIfAbsent(segment, s -> new TreeMap<>()).put(position, bytes);
    if (previous != null) {
      sizeBytes -= previous.length;
    } else {
      insertionOrder.addLast(new Key(segment, position));
    }
    sizeBytes += bytes.length;
    while (sizeBytes > capacityBytes) {
      Key oldest = insertionOrder.pollFirst();
      TreeMap<Long, byte[]> chunks = bySegment.get(oldest.segment());
      if (chunks == null) continue;
      byte[] evicted = chunks.remove(oldest.position());
      if (evicted != null) sizeBytes -= evicted.length;
      if (chunks.isEmpty()) bySegment.remove(oldest.segment());
    }
  }

  /**
   * Copies {@code [position, position + len)} of {@code segment} into {@code buf} if the cache
   * holds all of it.
   *
   * @return whether it did; on false {@code buf} may have been partly written
   */
  public boolean read(Object segment, long position, byte[] buf, int off, int len) {
    ByteBuffer[] pieces = find(segment, position, len);
    if (pieces == null) return false;
    int at = off;
    for (ByteBuffer p : pieces) {
      int n = p.remaining();
      p.get(buf, at, n);
      at += n;
    }
    return true;
  }

  /** As {@link #read(Object, long, byte[], int, int)}, into {@code buf[0, len)} (its position and limit are ignored and kept). */
  public boolean read(Object segment, long position, ByteBuffer buf, int len) {
    ByteBuffer[] pieces = find(segment, position, len);
    if (pieces == null) return false;
    ByteBuffer dst = buf.duplicate().clear();
    int at = 0;
    for (ByteBuffer p : pieces) {
      int n = p.remaining();
      dst.put(at, p, p.position(), n);
      at += n;
    }
    return true;
  }

  /**
   * Views of the cached batches that together hold {@code [position, position + len)} of
   * {@code segment}, in order, or null if the cache does not hold all of it. The cached arrays
   * never change once put, so only finding them needs the lock; the copy (up to a fetch's
   * megabytes) is made after it is released, not while every other partition's reads and appends
   * wait for it.
   */
  private synchronized ByteBuffer[] find(Object segment, long position, int len) {
    TreeMap<Long, byte[]> chunks = bySegment.get(segment);
    if (chunks == null) {
      misses++;
      return null;
    }
    List<ByteBuffer> pieces = new ArrayList<>(2);
    long pos = position;
    long end = position + len;
    while (pos < end) {
      Map.Entry<Long, byte[]> e = chunks.floorEntry(pos);
      if (e == null || e.getKey() + e.getValue().length <= pos) {
        misses++;
        return null;
      }
      int from = (int) (pos - e.getKey());
      int n = (int) Math.min(e.getValue().length - from, end - pos);
      pieces.add(ByteBuffer.wrap(e.getValue(), from, n));
      pos += n;
    }
    hits++;
    return pieces.toArray(new ByteBuffer[0]);
  }

  /** Drops every cached batch of {@code segment}. */
  public synchronized void remove(Object segment) {
    TreeMap<Long, byte[]> chunks = bySegment.remove(segment);
    if (chunks == null) return;
    for (byte[] b : chunks.values()) sizeBytes -= b.length;
    insertionOrder.removeIf(k -> k.segment() == segment);
  }

  public long capacityBytes() {
    return capacityBytes;
  }

  public synchronized long sizeBytes() {
    return sizeBytes;
  }

  /** Reads served entirely from the cache. */
  public synchronized long hits() {
    return hits;
  }

  /** Reads the cache could not serve (the caller went to the file system). */
  public synchronized long misses() {
    return misses;
  }
}
