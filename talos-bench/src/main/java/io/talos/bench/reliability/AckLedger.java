package io.talos.bench.reliability;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Every message a server acknowledged, by partition and offset, and the check of a read-back
 * against them.
 *
 * <p>Payloads are 16-byte ids (partition, sequence number within the producer of that
 * partition); a payload's sequence number gives its producing order. An offset acknowledged twice
 * with different payloads is an offset handed out twice: the first message counts as lost.
 *
 * <p>Thread-safe (synchronized): producers of different partitions record concurrently.
 */
final class AckLedger {
  private final Map<Integer, TreeMap<Long, Long>> acked = new HashMap<>();
  private long acknowledged;
  private long reusedOffsets;

  static byte[] payload(int partition, long seq) {
    return ByteBuffer.allocate(16).putLong(partition).putLong(seq).array();
  }

  /** The sequence number of a payload written by {@link #payload}, or -1 for other bytes. */
  static long seqOf(byte[] payload, int partition) {
    if (payload.length != 16) return -1;
    ByteBuffer b = ByteBuffer.wrap(payload);
    return b.getLong() == partition ? b.getLong() : -1;
  }

  private final Map<Integer, java.util.TreeSet<Long>> ackedSeqs = new HashMap<>();

  /**
   * Records that {@code seq} of {@code partition} was acknowledged without an offset (the
   * official SDK's answer carries none); checked by {@link #verifyBySeq}.
   */
  synchronized void ackSeq(int partition, long seq) {
    acknowledged++;
    ackedSeqs.computeIfAbsent(partition, p -> new java.util.TreeSet<>()).add(seq);
  }

  /**
   * Checks a read-back against acknowledgements without offsets: each acknowledged message must be
   * read once, in producing order.
   */
  synchronized Check verifyBySeq(int partition, List<Read> reads) {
    java.util.TreeSet<Long> expected = ackedSeqs.getOrDefault(partition, new java.util.TreeSet<>());
    Map<Long, Integer> timesSeen = new HashMap<>();
    long reordered = 0, max = -1;
    for (Read r : reads) {
      if (r.seq() < 0) continue;
      timesSeen.merge(r.seq(), 1, Integer::sum);
      if (expected.contains(r.seq())) {
        if (r.seq() < max) reordered++;
        max = Math.max(max, r.seq());
      }
    }
    long readBack = 0, lost = 0, duplicated = 0;
    for (long seq : expected) {
      int n = timesSeen.getOrDefault(seq, 0);
      if (n == 0) {
        lost++;
      } else {
        readBack++;
        if (n > 1) duplicated++;
      }
    }
    return new Check(expected.size(), readBack, lost, duplicated, reordered, 0);
  }

  /** Payloads of {@code partition} read more than once, acknowledged or not. */
  static long storedTwice(List<Read> reads) {
    Map<Long, Integer> timesSeen = new HashMap<>();
    long twice = 0;
    for (Read r : reads) {
      if (r.seq() >= 0 && timesSeen.merge(r.seq(), 1, Integer::sum) == 2) twice++;
    }
    return twice;
  }

  /** Records that {@code seq} of {@code partition} was acknowledged at {@code offset}. */
  synchronized void ack(int partition, long offset, long seq) {
    acknowledged++;
    Long before = acked.computeIfAbsent(partition, p -> new TreeMap<>()).put(offset, seq);
    if (before != null && before != seq) reusedOffsets++;
  }

  synchronized long acknowledged() {
    return acknowledged;
  }

  /** Offsets acknowledged twice for different messages so far. */
  synchronized long reusedOffsets() {
    return reusedOffsets;
  }

  /** The highest acknowledged offset of a partition, or -1. */
  synchronized long lastAcked(int partition) {
    TreeMap<Long, Long> m = acked.get(partition);
    return m == null || m.isEmpty() ? -1 : m.lastKey();
  }

  /** What a read-back of one partition must be checked against. */
  synchronized Map<Long, Long> ackedOf(int partition) {
    return new TreeMap<>(acked.getOrDefault(partition, new TreeMap<>()));
  }

  /** A message as read back: its offset and payload sequence number (-1: not one of ours). */
  record Read(long offset, long seq) {}

  /** The counts of a verification; {@code refused} are acknowledged offsets the server refused to serve. */
  record Check(long acknowledged, long readBack, long lost, long duplicated, long reordered, long refused) {
    Check plus(Check o) {
      return new Check(acknowledged + o.acknowledged, readBack + o.readBack, lost + o.lost,
          duplicated + o.duplicated, reordered + o.reordered, refused + o.refused);
    }

    static final Check ZERO = new Check(0, 0, 0, 0, 0, 0);
  }

  /**
   * Checks what was read from {@code partition} (every message from its start, in the order
   * served) against the acknowledgements: each acknowledged message must be at its offset, once,
   * in producing order. Offsets in {@code refusedOffsets} were refused with a clear error.
   */
  synchronized Check verify(int partition, List<Read> reads, java.util.Set<Long> refusedOffsets) {
    TreeMap<Long, Long> expected = acked.getOrDefault(partition, new TreeMap<>());
    Map<Long, Long> seqAt = new HashMap<>();
    Map<Long, Integer> timesSeen = new HashMap<>();
    for (Read r : reads) {
      seqAt.put(r.offset(), r.seq());
      if (r.seq() >= 0) timesSeen.merge(r.seq(), 1, Integer::sum);
    }
    long readBack = 0, lost = 0, duplicated = 0, refused = 0;
    for (Map.Entry<Long, Long> e : expected.entrySet()) {
      Long got = seqAt.get(e.getKey());
      if (got != null && got.equals(e.getValue())) {
        readBack++;
        if (timesSeen.getOrDefault(e.getValue(), 0) > 1) duplicated++;
      } else if (got == null && refusedOffsets.contains(e.getKey())) {
        refused++;
      } else {
        lost++;
      }
    }
    // reordered: an acknowledged message served after one produced later
    java.util.Set<Long> ackedSeqs = new java.util.HashSet<>(expected.values());
    List<Long> servedAcked = new ArrayList<>();
    for (Read r : reads) if (ackedSeqs.contains(r.seq())) servedAcked.add(r.seq());
    long reordered = 0, max = -1;
    for (long s : servedAcked) {
      if (s < max) reordered++;
      max = Math.max(max, s);
    }
    return new Check(expected.size(), readBack, lost, duplicated, reordered, refused);
  }
}
