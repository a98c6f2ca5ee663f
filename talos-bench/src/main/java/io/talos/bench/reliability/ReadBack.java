package io.talos.bench.reliability;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.stream.IntStream;

/**
 * The messages of one partition as read back, in the order served: each one's offset and payload
 * sequence number ({@link AckLedger#seqOf}, -1 for bytes that are not one of ours), kept as runs
 * in which both go up by one (24 bytes a run). A partition whose messages were stored in producing
 * order without gaps reads back as one run, however many messages it holds, so checking a long
 * run's partitions takes no memory per message.
 *
 * <pre>
 *   run i:  messages firstIndex[i] .. firstIndex[i] + count[i] - 1 in served order,
 *           at offsets offset[i] + k, with sequence numbers seq[i] + k (k = 0 .. count[i] - 1)
 * </pre>
 *
 * <p>A message that is not one of ours ({@code seq < 0}) is a run of its own.
 *
 * <p>Not thread-safe: one reader fills it, then {@link AckLedger} checks it.
 */
final class ReadBack {
  private long[] offset = new long[4];
  private long[] seq = new long[4];
  private long[] count = new long[4];
  private int runs;
  private long size;

  void add(long o, long s) {
    int last = runs - 1;
    if (last >= 0 && s >= 0 && seq[last] >= 0 && o == offset[last] + count[last] && s == seq[last] + count[last]) {
      count[last]++;
    } else {
      if (runs == offset.length) {
        int capacity = runs + (runs >> 1) + 1;
        offset = Arrays.copyOf(offset, capacity);
        seq = Arrays.copyOf(seq, capacity);
        count = Arrays.copyOf(count, capacity);
      }
      offset[runs] = o;
      seq[runs] = s;
      count[runs] = 1;
      runs++;
    }
    size++;
  }

  long size() {
    return size;
  }

  int runs() {
    return runs;
  }

  long runOffset(int run) {
    return offset[run];
  }

  /** The first sequence number of the run (-1: one message that is not one of ours). */
  long runSeq(int run) {
    return seq[run];
  }

  long runCount(int run) {
    return count[run];
  }

  /**
   * The same messages ordered by offset, served order kept among equal offsets: this one when it
   * is in that order already (the normal case: no copy).
   */
  ReadBack byOffset() {
    boolean ascending = true;
    for (int r = 1; r < runs && ascending; r++) ascending = offset[r - 1] + count[r - 1] - 1 <= offset[r];
    if (ascending) return this;
    // A server that served offsets out of order: rare, so a copy per message is acceptable.
    List<long[]> all = new ArrayList<>();
    for (int r = 0; r < runs; r++) {
      for (long k = 0; k < count[r]; k++) all.add(new long[] {offset[r] + k, seq[r] < 0 ? seq[r] : seq[r] + k});
    }
    ReadBack sorted = new ReadBack();
    IntStream.range(0, all.size()).boxed().sorted(Comparator.comparingLong(i -> all.get(i)[0]))
        .forEach(i -> sorted.add(all.get(i)[0], all.get(i)[1]));
    return sorted;
  }

  /**
   * The sequence numbers (>= 0) read at least {@code times} times, as disjoint ascending intervals
   * {from, to (exclusive)}.
   */
  long[][] seqsReadAtLeast(int times) {
    int n = 0;
    long[] starts = new long[runs];
    long[] ends = new long[runs];
    for (int r = 0; r < runs; r++) {
      if (seq[r] < 0) continue;
      starts[n] = seq[r];
      ends[n++] = seq[r] + count[r];
    }
    Arrays.sort(starts, 0, n);
    Arrays.sort(ends, 0, n);
    List<long[]> out = new ArrayList<>();
    int i = 0, j = 0, covering = 0;
    while (i < n || j < n) {
      long at = Math.min(i < n ? starts[i] : Long.MAX_VALUE, ends[j]);
      while (i < n && starts[i] == at) {
        covering++;
        i++;
      }
      while (j < n && ends[j] == at) {
        covering--;
        j++;
      }
      if (j == n) break;
      long next = Math.min(i < n ? starts[i] : Long.MAX_VALUE, ends[j]);
      if (covering >= times) {
        long[] last = out.isEmpty() ? null : out.get(out.size() - 1);
        if (last != null && last[1] == at) {
          last[1] = next;
        } else {
          out.add(new long[] {at, next});
        }
      }
    }
    return out.toArray(new long[0][]);
  }

  /** Whether {@code v} is in one of the disjoint ascending intervals {@code iv}. */
  static boolean inIntervals(long[][] iv, long v) {
    int lo = 0, hi = iv.length - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      if (v < iv[mid][0]) {
        hi = mid - 1;
      } else if (v >= iv[mid][1]) {
        lo = mid + 1;
      } else {
        return true;
      }
    }
    return false;
  }

  /** The number of values in the disjoint intervals {@code iv}. */
  static long lengthOf(long[][] iv) {
    long n = 0;
    for (long[] i : iv) n += i[1] - i[0];
    return n;
  }
}
