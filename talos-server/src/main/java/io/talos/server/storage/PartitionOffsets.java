package io.talos.server.storage;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LeaseRecoverable;
import org.apache.hadoop.fs.Path;

/**
 * The offsets and size of one partition, as describeTopic and the offset calls report them,
 * known without keeping the partition's log open: taken from an open {@link PartitionLog}, kept
 * from one when {@link PartitionLogs} closed it, or {@link #read read} from the directory listing
 * and the newest segment's index (one small file read and closed at once, no segment opened).
 *
 * @param startOffset first readable offset
 * @param endOffset the offset the next appended message gets
 * @param sizeBytes bytes of the segments; when read from the listing, the file lengths of the
 *     sealed segments (a torn tail left by a crash counts) and the valid bytes of the newest
 */
public record PartitionOffsets(long startOffset, long endOffset, long sizeBytes) {
  /** A partition that has no directory yet: nothing was ever appended. */
  public static final PartitionOffsets EMPTY = new PartitionOffsets(0, 0, 0);

  public static PartitionOffsets of(ReadablePartition log) {
    // endOffset first: a concurrent roll or retention can only move startOffset up to it.
    long end = log.endOffset();
    return new PartitionOffsets(Math.min(log.startOffset(), end), end, log.sizeBytes());
  }

  private record SegmentFile(long baseOffset, long epoch, FileStatus status) {}

  /**
   * The offsets of the partition in {@code dir}, from its listing alone where that is exact: the
   * newest segment must be sealed (its index valid, as after a clean close) or, on a file system
   * without leases, empty. Otherwise (a segment left open by a crash or by another server, several
   * segments with one base offset) null: only recovery ({@link PartitionLog#open}) knows.
   */
  public static PartitionOffsets read(FileSystem fs, Path dir, int indexIntervalBytes) throws IOException {
    FileStatus[] listing;
    try {
      listing = fs.listStatus(dir);
    } catch (FileNotFoundException e) {
      return EMPTY;
    }
    List<SegmentFile> segments = new ArrayList<>();
    for (FileStatus st : listing) {
      String name = st.getPath().getName();
      if (!st.isFile() || !name.endsWith(LogSegment.LOG_SUFFIX)) continue;
      SegmentFile f = parse(name.substring(0, name.length() - LogSegment.LOG_SUFFIX.length()), st);
      if (f == null) return null;
      segments.add(f);
    }
    if (segments.isEmpty()) return null;
    segments.sort(Comparator.comparingLong(SegmentFile::baseOffset));
    for (int i = 1; i < segments.size(); i++) {
      if (segments.get(i).baseOffset() == segments.get(i - 1).baseOffset()) return null;
    }
    SegmentFile newest = segments.get(segments.size() - 1);
    long sealedBytes = 0;
    for (int i = 0; i < segments.size() - 1; i++) sealedBytes += segments.get(i).status().getLen();
    long start = segments.get(0).baseOffset();
    OffsetIndex.Persisted index = OffsetIndex.read(fs,
        LogSegment.indexPath(dir, newest.baseOffset(), newest.epoch()), newest.baseOffset(), indexIntervalBytes);
    if (index != null && index.seal().validBytes() <= newest.status().getLen()) {
      return new PartitionOffsets(start, index.seal().nextOffset(), sealedBytes + index.seal().validBytes());
    }
    // hdfs reports a stale length for a file still being written: only an index is trusted there.
    if (!(fs instanceof LeaseRecoverable) && newest.status().getLen() == 0) {
      return new PartitionOffsets(start, newest.baseOffset(), sealedBytes);
    }
    return null;
  }

  /** {@code <20 digits>} or {@code <20 digits>-<20 digits>}; null if neither. */
  private static SegmentFile parse(String stem, FileStatus st) {
    String[] parts = stem.split("-", -1);
    if (parts.length > 2) return null;
    for (String p : parts) {
      if (p.length() != 20 || !p.chars().allMatch(Character::isDigit)) return null;
    }
    try {
      return new SegmentFile(Long.parseLong(parts[0]), parts.length == 2 ? Long.parseLong(parts[1]) : 0, st);
    } catch (NumberFormatException e) {
      return null;
    }
  }
}
