package io.talos.server.storage;

import java.io.IOException;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which segments of a log retention deletes, and deleting them safely.
 *
 * <p>Rules: segments expire oldest first, and only a prefix of the log ever goes (a segment
 * expires when its newest append timestamp is older than the cutoff; the first one that is not
 * stops the scan), so offsets stay contiguous. Only the current owner deletes: the ownership is
 * checked ({@link PartitionOwnership#check}) before each segment's files are deleted, so a server
 * that was taken over without noticing never deletes the new owner's segments (it is fenced
 * instead). Files are deleted oldest first and a failed delete (including {@code delete}
 * returning false) stops the pass: the failed segment and the newer ones stay in the log, so
 * the start offset never goes backwards and no gap appears after a restart.
 *
 * <p>Stateless; called by {@link PartitionLog#deleteExpiredSegments} under its append lock. The
 * caller removes the deleted segments from its list afterwards; a read that races with the delete
 * of an expired segment may fail with an I/O error on hdfs (the file is gone) and succeeds, with
 * {@link OffsetOutOfRangeException}, when retried.
 */
final class SegmentRetention {
  private static final Logger LOG = LoggerFactory.getLogger(SegmentRetention.class);

  private SegmentRetention() {}

  /** The outcome of a pass: how many of the oldest segments are gone, and why it stopped early. */
  record Result(int deleted, IOException failure) {}

  /** How many of the oldest segments, not counting the active (last) one, expired before {@code cutoffMs}. */
  static int expiredSealedSegments(List<LogSegment> segs, long cutoffMs) {
    int expired = 0;
    while (expired < segs.size() - 1 && segs.get(expired).maxAppendTimestampMs() < cutoffMs) expired++;
    return expired;
  }

  /**
   * Whether every sealed segment expired and so did the active one, which holds records: it must
   * then be rolled so that it can go too.
   */
  static boolean activeExpired(List<LogSegment> segs, int expiredSealed, long cutoffMs) {
    LogSegment a = segs.get(segs.size() - 1);
    return expiredSealed == segs.size() - 1 && a.hasRecords() && a.maxAppendTimestampMs() < cutoffMs;
  }

  /**
   * Deletes the files of {@code doomed} (the oldest segments of the log, oldest first), checking the
   * ownership before each, and stops at the first failure.
   *
   * @throws PartitionFencedException if another server owns the partition (before anything more
   *     is deleted)
   */
  static Result deleteOldestFirst(List<LogSegment> doomed, PartitionOwnership owner) throws IOException {
    int deleted = 0;
    for (LogSegment s : doomed) {
      owner.check();
      try {
        s.deleteFilesKeepingInput();
      } catch (IOException e) {
        LOG.warn("Retention could not delete {}; it and the newer segments stay until the next pass", s.path(), e);
        return new Result(deleted, e);
      }
      deleted++;
    }
    return new Result(deleted, null);
  }
}
