package io.talos.server.storage;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.zip.CRC32C;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sparse offset index of one segment: maps the start offset of some records to their byte position
 * in the segment file. An entry is added for a record that starts at least {@code intervalBytes}
 * after the previous entry's position (the segment start counts as an implicit entry {@code
 * baseOffset -> 0}). {@link #lookup} returns the position of the last entry at or before an
 * offset; the caller scans forward from there to the record that contains the offset.
 *
 * <p>Kept in memory while the segment is open and persisted beside it as {@code
 * <20-digit baseOffset>.index} when the segment is sealed (rolled or closed), together with the
 * segment's seal summary so that opening a log does not have to scan sealed segments:
 *
 * <pre>
 *  offset     size  field
 *  ---------  ----  ----------------------------------------------------------------
 *          0     4  magic                  "TIDX" (0x54494458)
 *          4     1  version                0x01
 *          5     8  baseOffset             must equal the segment's
 *         13     8  nextOffset             offset after the segment's last record
 *         21     8  validBytes             bytes of whole records at the start of the .log; any
 *                                          bytes after them are the tail of a failed append
 *         29     8  maxAppendTimestampMs   newest append time in the segment, -1 if none
 *         37     4  entryCount             n
 *         41  16*n  entries                n x (offset i64, position i64), both strictly increasing
 *    41+16*n     4  crc                    CRC32C of bytes [0, 41+16*n)
 * </pre>
 *
 * Big-endian. The file is written to {@code .index.tmp} and renamed into place. A missing file or
 * one that fails any check is ignored (and logged) and the segment is scanned instead.
 *
 * <p>Thread-safety: one writer thread calls {@link #maybeAppend}; any number of threads may call
 * {@link #lookup} concurrently. Entries are append-only and published through a volatile
 * snapshot, so a reader sees a prefix of the entries, which is still a correct (sparser) index.
 */
public final class OffsetIndex {
  private static final Logger LOG = LoggerFactory.getLogger(OffsetIndex.class);

  static final int MAGIC = 0x54494458;
  static final byte VERSION = 1;
  static final int HEADER_BYTES = 41;
  static final int ENTRY_BYTES = 16;
  static final int CRC_BYTES = 4;

  /** What a persisted index says about its sealed segment. */
  public record Seal(long baseOffset, long nextOffset, long validBytes, long maxAppendTimestampMs) {}

  /** An index read back from disk with the seal summary stored beside it. */
  public record Persisted(Seal seal, OffsetIndex index) {}

  private record Entries(long[] offsets, long[] positions, int count) {}

  private final long baseOffset;
  private final int intervalBytes;
  private volatile Entries entries;
  /** Position of the newest entry, 0 for the implicit first one; writer thread only. */
  private long lastEntryPosition;

  public OffsetIndex(long baseOffset, int intervalBytes) {
    this(baseOffset, intervalBytes, new Entries(new long[16], new long[16], 0));
  }

  private OffsetIndex(long baseOffset, int intervalBytes, Entries entries) {
    if (intervalBytes < 1) throw new IllegalArgumentException("intervalBytes=" + intervalBytes + " must be >= 1");
    this.baseOffset = baseOffset;
    this.intervalBytes = intervalBytes;
    this.entries = entries;
    this.lastEntryPosition = entries.count == 0 ? 0 : entries.positions[entries.count - 1];
  }

  /**
   * Called for every record appended to the segment, in order, after it is durable.
   *
   * @param offset the record's start offset
   * @param position the record's byte position in the segment file
   */
  public void maybeAppend(long offset, long position) {
    if (position - lastEntryPosition < intervalBytes) return;
    Entries e = entries;
    long[] offsets = e.offsets;
    long[] positions = e.positions;
    if (e.count == offsets.length) {
      // copy: readers holding the old snapshot keep reading the old arrays unchanged
      offsets = Arrays.copyOf(offsets, offsets.length * 2);
      positions = Arrays.copyOf(positions, positions.length * 2);
    }
    offsets[e.count] = offset;
    positions[e.count] = position;
    entries = new Entries(offsets, positions, e.count + 1);
    lastEntryPosition = position;
  }

  /** @return the position of the last entry whose offset is {@code <= offset}, or 0 */
  public long lookup(long offset) {
    Entries e = entries;
    int i = Arrays.binarySearch(e.offsets, 0, e.count, offset);
    if (i >= 0) return e.positions[i];
    int floor = -i - 2;
    return floor < 0 ? 0 : e.positions[floor];
  }

  public int entryCount() {
    return entries.count;
  }

  public long baseOffset() {
    return baseOffset;
  }

  /**
   * Persists this index and {@code seal} to {@code path} (via {@code path.tmp} and a rename).
   * Writer thread only, after the last append to the segment.
   */
  public void write(FileSystem fs, Path path, Seal seal) throws IOException {
    if (seal.baseOffset() != baseOffset) {
      throw new IllegalArgumentException("seal base offset " + seal.baseOffset() + " != index base offset " + baseOffset);
    }
    Entries e = entries;
    int bodyBytes = HEADER_BYTES + e.count * ENTRY_BYTES;
    ByteBuffer b = ByteBuffer.allocate(bodyBytes + CRC_BYTES);
    b.putInt(MAGIC).put(VERSION).putLong(baseOffset).putLong(seal.nextOffset()).putLong(seal.validBytes())
        .putLong(seal.maxAppendTimestampMs()).putInt(e.count);
    for (int i = 0; i < e.count; i++) {
      b.putLong(e.offsets[i]).putLong(e.positions[i]);
    }
    CRC32C crc = new CRC32C();
    crc.update(b.array(), 0, bodyBytes);
    b.putInt((int) crc.getValue());

    Path tmp = new Path(path.getParent(), path.getName() + ".tmp");
    try (FSDataOutputStream out = fs.create(tmp, true)) {
      out.write(b.array());
    }
    if (fs.exists(path) && !fs.delete(path, false) && fs.exists(path)) {
      throw new IOException("could not delete the old " + path + " to replace it");
    }
    if (!fs.rename(tmp, path)) {
      throw new IOException("could not rename " + tmp + " to " + path);
    }
  }

  /**
   * Reads the index of the segment based at {@code baseOffset}.
   *
   * @return null when the file is missing or fails a check (the reason is logged)
   */
  public static Persisted read(FileSystem fs, Path path, long baseOffset, int intervalBytes) throws IOException {
    if (!fs.exists(path)) return null;
    long len = fs.getFileStatus(path).getLen();
    String problem = null;
    Persisted result = null;
    if (len < HEADER_BYTES + CRC_BYTES || len > Integer.MAX_VALUE
        || (len - HEADER_BYTES - CRC_BYTES) % ENTRY_BYTES != 0) {
      problem = "size " + len + " is not 45 + 16 * n";
    } else {
      byte[] bytes = new byte[(int) len];
      try (InputStream in = fs.open(path)) {
        in.readNBytes(bytes, 0, bytes.length);
      }
      try {
        result = parse(bytes, baseOffset, intervalBytes);
      } catch (CorruptRecordException e) {
        problem = e.getMessage();
      }
    }
    if (problem != null) {
      LOG.warn("Ignoring index {}: {}; the segment will be scanned instead", path, problem);
    }
    return result;
  }

  private static Persisted parse(byte[] bytes, long expectedBase, int intervalBytes) throws CorruptRecordException {
    ByteBuffer b = ByteBuffer.wrap(bytes);
    int bodyBytes = bytes.length - CRC_BYTES;
    CRC32C crc = new CRC32C();
    crc.update(bytes, 0, bodyBytes);
    if (b.getInt(bodyBytes) != (int) crc.getValue()) throw new CorruptRecordException("CRC32C mismatch");
    if (b.getInt() != MAGIC) throw new CorruptRecordException("bad magic");
    byte version = b.get();
    if (version != VERSION) throw new CorruptRecordException("unknown version " + version);
    long base = b.getLong();
    long next = b.getLong();
    long validBytes = b.getLong();
    long maxTs = b.getLong();
    int count = b.getInt();
    if (base != expectedBase) {
      throw new CorruptRecordException("base offset " + base + " != " + expectedBase + " of its segment");
    }
    if (next < base || validBytes < 0) {
      throw new CorruptRecordException("nextOffset " + next + " / validBytes " + validBytes + " invalid");
    }
    if (count != (bodyBytes - HEADER_BYTES) / ENTRY_BYTES) {
      throw new CorruptRecordException("entry count " + count + " disagrees with the file size");
    }
    long[] offsets = new long[Math.max(count, 16)];
    long[] positions = new long[Math.max(count, 16)];
    long prevOffset = base;
    long prevPosition = 0;
    for (int i = 0; i < count; i++) {
      long o = b.getLong();
      long p = b.getLong();
      if (o <= prevOffset || o >= next || p <= prevPosition || p >= validBytes) {
        throw new CorruptRecordException("entry " + i + " (" + o + " -> " + p + ") is out of order or range");
      }
      offsets[i] = o;
      positions[i] = p;
      prevOffset = o;
      prevPosition = p;
    }
    return new Persisted(new Seal(base, next, validBytes, maxTs),
        new OffsetIndex(base, intervalBytes, new Entries(offsets, positions, count)));
  }
}
