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
 * Sparse time index of one segment, for "the first message appended at or after time T": maps
 * record positions to the newest append timestamp of all records <em>before</em> them. An entry
 * is added for the segment's first record and then for a record that starts at least {@code
 * intervalBytes} after the previous entry. Since those timestamps never decrease along the file
 * (they are a running maximum, so a server clock that stepped back does not break the index), the
 * last entry whose timestamp is below T is a safe place to start scanning: every record before it
 * is older than T. {@link #startPosition} returns it; the segment scans forward from there to the
 * first record with an append timestamp at or after T.
 *
 * <p>The index covers a prefix {@code [0, coveredBytes)} of the segment. A segment created by
 * this server builds it while appending; any other segment (opened after a restart, written
 * before time indexes existed, or read through a read-only view) builds it on the first lookup by
 * scanning record headers, and later lookups extend it by scanning only the growth.
 *
 * <p>Persisted beside a sealed segment as {@code <segment name>.timeindex} when it covers the whole
 * segment (at seal, or after a lookup built it for a sealed segment of the writer):
 *
 * <pre>
 *  offset     size  field
 *  ---------  ----  ----------------------------------------------------------------
 *          0     4  magic                  "TTIX" (0x54544958)
 *          4     1  version                0x01
 *          5     8  baseOffset             must equal the segment's
 *         13     8  nextOffset             must equal the segment's (else the file is ignored)
 *         21     8  coveredBytes           must equal the segment's validBytes (else ignored)
 *         29     8  maxAppendTimestampMs   newest append time of the covered records, -1 if none
 *         37     4  entryCount             n
 *         41  24*n  entries                n x (timestampBefore i64, offset i64, position i64);
 *                                          positions and offsets strictly increasing, timestamps
 *                                          non-decreasing; the first entry is (-1, baseOffset, 0)
 *    41+24*n     4  crc                    CRC32C of bytes [0, 41+24*n)
 * </pre>
 *
 * Big-endian; written to {@code .timeindex.tmp} and renamed into place. A missing file, or one
 * that fails a check or does not match its segment, is ignored and the index is rebuilt by a
 * scan, so segments of older versions stay readable and the file is only ever an optimisation.
 *
 * <p>Thread-safe: every method synchronizes on the index; the scans that extend it run outside
 * the lock (see {@link LogSegment#offsetForTimestamp}) and add records one by one, each only if it
 * continues the covered prefix.
 */
public final class TimeIndex {
  private static final Logger LOG = LoggerFactory.getLogger(TimeIndex.class);

  static final String SUFFIX = ".timeindex";
  static final int MAGIC = 0x54544958;
  static final byte VERSION = 1;
  static final int HEADER_BYTES = 41;
  static final int ENTRY_BYTES = 24;
  static final int CRC_BYTES = 4;

  private final long baseOffset;
  private final int intervalBytes;
  private long[] timestamps = new long[16];
  private long[] offsets = new long[16];
  private long[] positions = new long[16];
  private int count;
  private long coveredBytes;
  private long coveredNextOffset;
  private long maxTimestampMs = -1;

  public TimeIndex(long baseOffset, int intervalBytes) {
    this.baseOffset = baseOffset;
    this.intervalBytes = intervalBytes;
    this.coveredNextOffset = baseOffset;
  }

  /** Bytes of the segment this index covers (a prefix). */
  public synchronized long coveredBytes() {
    return coveredBytes;
  }

  public synchronized int entryCount() {
    return count;
  }

  /**
   * Adds the records of one appended batch (one append timestamp) that starts at {@code
   * startPosition}, iff it continues the covered prefix; else does nothing (a later lookup scans).
   *
   * @param recordOffsets start offset of each record; {@code recordPositions} their positions
   *     within the batch
   * @return whether the records were added
   */
  public synchronized boolean addBatch(long startPosition, long[] recordOffsets, int[] recordPositions,
      long endPosition, long nextOffset, long appendTimestampMs) {
    if (startPosition != coveredBytes) return false;
    for (int i = 0; i < recordOffsets.length; i++) {
      maybeEntry(recordOffsets[i], startPosition + recordPositions[i]);
      maxTimestampMs = Math.max(maxTimestampMs, appendTimestampMs);
    }
    coveredBytes = endPosition;
    coveredNextOffset = nextOffset;
    return true;
  }

  /** Adds one scanned record at {@code position} iff it continues the covered prefix. */
  public synchronized boolean addRecord(long position, long offset, long nextOffset, long appendTimestampMs,
      int recordLength) {
    if (position != coveredBytes || offset != coveredNextOffset) return false;
    maybeEntry(offset, position);
    maxTimestampMs = Math.max(maxTimestampMs, appendTimestampMs);
    coveredBytes = position + recordLength;
    coveredNextOffset = nextOffset;
    return true;
  }

  private void maybeEntry(long offset, long position) {
    if (count > 0 && position - positions[count - 1] < intervalBytes) return;
    if (count == timestamps.length) {
      timestamps = Arrays.copyOf(timestamps, count * 2);
      offsets = Arrays.copyOf(offsets, count * 2);
      positions = Arrays.copyOf(positions, count * 2);
    }
    timestamps[count] = maxTimestampMs;
    offsets[count] = offset;
    positions[count] = position;
    count++;
  }

  /**
   * Where to start scanning for the first record appended at or after {@code timestampMs}: the
   * position of the last entry whose preceding records are all older, or 0.
   */
  public synchronized long startPosition(long timestampMs) {
    int lo = 0;
    int hi = count - 1;
    int found = -1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      if (timestamps[mid] < timestampMs) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found < 0 ? 0 : positions[found];
  }

  /**
   * Persists the index (via {@code path.tmp} and a rename). Only an index covering the whole
   * segment is written: {@code nextOffset} and {@code validBytes} are the segment's.
   */
  public synchronized void write(FileSystem fs, Path path, long nextOffset, long validBytes) throws IOException {
    if (coveredBytes != validBytes || coveredNextOffset != nextOffset) {
      throw new IllegalStateException("the time index covers " + coveredBytes + " of " + validBytes + " bytes");
    }
    int bodyBytes = HEADER_BYTES + count * ENTRY_BYTES;
    ByteBuffer b = ByteBuffer.allocate(bodyBytes + CRC_BYTES);
    b.putInt(MAGIC).put(VERSION).putLong(baseOffset).putLong(nextOffset).putLong(validBytes)
        .putLong(maxTimestampMs).putInt(count);
    for (int i = 0; i < count; i++) b.putLong(timestamps[i]).putLong(offsets[i]).putLong(positions[i]);
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
    if (!fs.rename(tmp, path)) throw new IOException("could not rename " + tmp + " to " + path);
  }

  /**
   * Reads the time index of a segment that holds {@code [baseOffset, nextOffset)} in {@code
   * validBytes} bytes.
   *
   * @return null when the file is missing, fails a check or describes another state of the segment
   */
  public static TimeIndex read(FileSystem fs, Path path, long baseOffset, long nextOffset, long validBytes,
      int intervalBytes) throws IOException {
    if (!fs.exists(path)) return null;
    long len = fs.getFileStatus(path).getLen();
    if (len < HEADER_BYTES + CRC_BYTES || len > Integer.MAX_VALUE
        || (len - HEADER_BYTES - CRC_BYTES) % ENTRY_BYTES != 0) {
      LOG.warn("Ignoring time index {}: size {} is not 45 + 24 * n; rebuilding it by a scan", path, len);
      return null;
    }
    byte[] bytes = new byte[(int) len];
    try (InputStream in = fs.open(path)) {
      in.readNBytes(bytes, 0, bytes.length);
    }
    try {
      return parse(bytes, baseOffset, nextOffset, validBytes, intervalBytes);
    } catch (CorruptRecordException e) {
      LOG.warn("Ignoring time index {}: {}; rebuilding it by a scan", path, e.getMessage());
      return null;
    }
  }

  private static TimeIndex parse(byte[] bytes, long base, long next, long validBytes, int intervalBytes)
      throws CorruptRecordException {
    ByteBuffer b = ByteBuffer.wrap(bytes);
    int bodyBytes = bytes.length - CRC_BYTES;
    CRC32C crc = new CRC32C();
    crc.update(bytes, 0, bodyBytes);
    if (b.getInt(bodyBytes) != (int) crc.getValue()) throw new CorruptRecordException("CRC32C mismatch");
    if (b.getInt() != MAGIC) throw new CorruptRecordException("bad magic");
    byte version = b.get();
    if (version != VERSION) throw new CorruptRecordException("unknown version " + version);
    long fileBase = b.getLong();
    long fileNext = b.getLong();
    long fileCovered = b.getLong();
    long maxTs = b.getLong();
    int count = b.getInt();
    if (fileBase != base || fileNext != next || fileCovered != validBytes) {
      throw new CorruptRecordException("describes offsets [" + fileBase + ", " + fileNext + ") in " + fileCovered
          + " bytes, the segment holds [" + base + ", " + next + ") in " + validBytes);
    }
    if (count != (bodyBytes - HEADER_BYTES) / ENTRY_BYTES) {
      throw new CorruptRecordException("entry count " + count + " disagrees with the file size");
    }
    TimeIndex index = new TimeIndex(base, intervalBytes);
    long prevTs = Long.MIN_VALUE;
    long prevOffset = base - 1;
    long prevPosition = -1;
    for (int i = 0; i < count; i++) {
      long ts = b.getLong();
      long o = b.getLong();
      long p = b.getLong();
      if (ts < prevTs || o <= prevOffset || o >= next || p <= prevPosition || p >= validBytes
          || (i == 0 && (o != base || p != 0))) {
        throw new CorruptRecordException("entry " + i + " (" + ts + ", " + o + " -> " + p + ") is out of order or range");
      }
      if (index.count == index.timestamps.length) {
        index.timestamps = Arrays.copyOf(index.timestamps, index.count * 2);
        index.offsets = Arrays.copyOf(index.offsets, index.count * 2);
        index.positions = Arrays.copyOf(index.positions, index.count * 2);
      }
      index.timestamps[i] = ts;
      index.offsets[i] = o;
      index.positions[i] = p;
      index.count++;
      prevTs = ts;
      prevOffset = o;
      prevPosition = p;
    }
    index.coveredBytes = validBytes;
    index.coveredNextOffset = next;
    index.maxTimestampMs = maxTs;
    return index;
  }
}
