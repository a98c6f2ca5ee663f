package io.talos.bench.reliability;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.LongConsumer;

/**
 * Every message a server acknowledged, by partition and offset, and the check of a read-back
 * against them.
 *
 * <p>Payloads are 16-byte ids (partition, sequence number within the producer of that
 * partition); a payload's sequence number gives its producing order. An offset acknowledged twice
 * with different payloads is an offset handed out twice: the first message counts as lost.
 *
 * <p>Memory: the acknowledgements of a partition are kept as runs of consecutive offsets carrying
 * consecutive sequence numbers ({@link AckRuns}), 24 bytes a run, so a run of any length costs
 * about as much as one message: a producer whose puts all succeed adds nothing per message, and
 * each failed put or offset handed out again adds a run or two. A read-back ({@link ReadBack})
 * is kept as runs the same way, so a check of a partition read back in order is as small.
 *
 * <p>Thread-safe (synchronized): producers of different partitions record concurrently.
 */
final class AckLedger {
  private static final AckRuns NONE = new AckRuns();

  /** offset -> sequence number, per partition. */
  private final Map<Integer, AckRuns> byOffset = new HashMap<>();
  /** sequence number -> itself, per partition: acknowledgements without an offset. */
  private final Map<Integer, AckRuns> bySeq = new HashMap<>();
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

  /** Records that {@code seq} of {@code partition} was acknowledged at {@code offset}. */
  synchronized void ack(int partition, long offset, long seq) {
    acknowledged++;
    long before = byOffset.computeIfAbsent(partition, p -> new AckRuns()).put(offset, seq);
    if (before != AckRuns.ABSENT && before != seq) reusedOffsets++;
  }

  /**
   * Records that {@code seq} of {@code partition} was acknowledged without an offset (the
   * official SDK's answer carries none); checked by {@link #verifyBySeq}.
   */
  synchronized void ackSeq(int partition, long seq) {
    acknowledged++;
    bySeq.computeIfAbsent(partition, p -> new AckRuns()).put(seq, seq);
  }

  synchronized long acknowledged() {
    return acknowledged;
  }

  /** Offsets acknowledged twice for different messages so far. */
  synchronized long reusedOffsets() {
    return reusedOffsets;
  }

  /** Calls {@code action} with the sequence number of every message acknowledged at an offset of {@code partition}. */
  synchronized void forEachAckedSeq(int partition, LongConsumer action) {
    AckRuns runs = byOffset.getOrDefault(partition, NONE);
    for (int r = 0; r < runs.runs(); r++) {
      for (long k = 0; k < runs.runCount(r); k++) action.accept(runs.runValue(r) + k);
    }
  }

  /** Sequence numbers (>= 0) read more than once, acknowledged or not. */
  static long storedTwice(ReadBack reads) {
    return ReadBack.lengthOf(reads.seqsReadAtLeast(2));
  }

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
   *
   * <ul>
   *   <li>read back: the message served at its acknowledged offset (the last one served there, if
   *       the offset was served twice) is the acknowledged one;
   *   <li>duplicated: such a message whose payload was read more than once, at any offset;
   *   <li>refused: nothing served at the offset, and the offset is in {@code refusedOffsets};
   *   <li>lost: any other acknowledged message (missing, or other bytes at its offset);
   *   <li>reordered: a read of an acknowledged payload after a read of a higher acknowledged
   *       sequence number, in served order.
   * </ul>
   */
  synchronized Check verify(int partition, ReadBack reads, Set<Long> refusedOffsets) {
    AckRuns expected = byOffset.getOrDefault(partition, NONE);
    ReadBack sorted = reads.byOffset();
    long[][] readTwice = reads.seqsReadAtLeast(2);
    long readBack = 0, lost = 0, duplicated = 0, refused = 0;
    int run = 0; // the next read in offset order: the k-th of run
    long k = 0;
    for (int r = 0; r < expected.runs(); r++) {
      for (long i = 0; i < expected.runCount(r); i++) {
        long offset = expected.runStart(r) + i;
        long seq = expected.runValue(r) + i;
        long got = AckRuns.ABSENT; // the last message served at offset
        while (run < sorted.runs()) {
          long o = sorted.runOffset(run) + k;
          if (o > offset) break;
          if (o == offset) got = sorted.runSeq(run) < 0 ? sorted.runSeq(run) : sorted.runSeq(run) + k;
          if (++k == sorted.runCount(run)) {
            run++;
            k = 0;
          }
        }
        if (got == seq) {
          readBack++;
          if (ReadBack.inIntervals(readTwice, seq)) duplicated++;
        } else if (got == AckRuns.ABSENT && refusedOffsets.contains(offset)) {
          refused++;
        } else {
          lost++;
        }
      }
    }
    long[][] ackedSeqs = valueIntervals(expected);
    long reordered = 0, max = -1;
    for (int r = 0; r < reads.runs(); r++) {
      if (reads.runSeq(r) < 0) continue;
      for (long i = 0; i < reads.runCount(r); i++) {
        long s = reads.runSeq(r) + i;
        if (!ReadBack.inIntervals(ackedSeqs, s)) continue;
        if (s < max) reordered++;
        max = Math.max(max, s);
      }
    }
    return new Check(expected.keys(), readBack, lost, duplicated, reordered, refused);
  }

  /**
   * Checks a read-back against acknowledgements without offsets: each acknowledged message must be
   * read once, in producing order.
   */
  synchronized Check verifyBySeq(int partition, ReadBack reads) {
    AckRuns expected = bySeq.getOrDefault(partition, NONE);
    long reordered = 0, max = -1;
    for (int r = 0; r < reads.runs(); r++) {
      if (reads.runSeq(r) < 0) continue;
      for (long i = 0; i < reads.runCount(r); i++) {
        long s = reads.runSeq(r) + i;
        if (expected.get(s) == AckRuns.ABSENT) continue;
        if (s < max) reordered++;
        max = Math.max(max, s);
      }
    }
    long[][] readOnce = reads.seqsReadAtLeast(1);
    long[][] readTwice = reads.seqsReadAtLeast(2);
    long readBack = 0, lost = 0, duplicated = 0;
    for (int r = 0; r < expected.runs(); r++) {
      for (long i = 0; i < expected.runCount(r); i++) {
        long seq = expected.runStart(r) + i;
        if (!ReadBack.inIntervals(readOnce, seq)) {
          lost++;
        } else {
          readBack++;
          if (ReadBack.inIntervals(readTwice, seq)) duplicated++;
        }
      }
    }
    return new Check(expected.keys(), readBack, lost, duplicated, reordered, 0);
  }

  /** The values of {@code runs} as disjoint intervals {from, to (exclusive)}, ascending. */
  private static long[][] valueIntervals(AckRuns runs) {
    long[][] iv = new long[runs.runs()][];
    for (int r = 0; r < runs.runs(); r++) iv[r] = new long[] {runs.runValue(r), runs.runValue(r) + runs.runCount(r)};
    Arrays.sort(iv, (a, b) -> Long.compare(a[0], b[0]));
    int n = 0;
    for (long[] i : iv) {
      if (n > 0 && i[0] <= iv[n - 1][1]) {
        iv[n - 1][1] = Math.max(iv[n - 1][1], i[1]);
      } else {
        iv[n++] = i;
      }
    }
    return Arrays.copyOf(iv, n);
  }
}
