package io.talos.bench.reliability;

import java.util.Arrays;
import java.util.Comparator;
import java.util.stream.IntStream;

/**
 * The messages of one partition as read back, in the order served: each one's offset and payload
 * sequence number ({@link AckLedger#seqOf}, -1 for bytes that are not one of ours). Two parallel
 * growing arrays, 16 bytes a message, so a read-back of tens of millions of messages fits the
 * harness's heap.
 *
 * <p>Not thread-safe: one reader fills it, then {@link AckLedger} checks it.
 */
final class ReadBack {
  private long[] offsets = new long[16];
  private long[] seqs = new long[16];
  private int size;

  void add(long offset, long seq) {
    if (size == offsets.length) {
      int capacity = size + (size >> 1);
      offsets = Arrays.copyOf(offsets, capacity);
      seqs = Arrays.copyOf(seqs, capacity);
    }
    offsets[size] = offset;
    seqs[size] = seq;
    size++;
  }

  int size() {
    return size;
  }

  long offset(int i) {
    return offsets[i];
  }

  long seq(int i) {
    return seqs[i];
  }

  /**
   * The indices of the messages in ascending offset order, served order kept among equal offsets;
   * null when the messages were served in that order already (the normal case: no copy).
   */
  int[] orderByOffset() {
    boolean ascending = true;
    for (int i = 1; i < size && ascending; i++) ascending = offsets[i - 1] <= offsets[i];
    if (ascending) return null;
    // A server that served offsets out of order: rare, so boxing is acceptable; the sort is stable.
    return IntStream.range(0, size).boxed().sorted(Comparator.comparingLong(i -> offsets[i]))
        .mapToInt(Integer::intValue).toArray();
  }

  /** The sequence numbers (>= 0) read more than once, ascending, each once. */
  long[] seqsReadMoreThanOnce() {
    long[] sorted = sortedSeqs();
    long[] twice = new long[0];
    int n = 0;
    for (int i = 1; i < sorted.length; i++) {
      if (sorted[i] == sorted[i - 1] && (n == 0 || twice[n - 1] != sorted[i])) {
        if (n == twice.length) twice = Arrays.copyOf(twice, 2 * n + 1);
        twice[n++] = sorted[i];
      }
    }
    return Arrays.copyOf(twice, n);
  }

  /** The sequence numbers (>= 0) read, ascending, with repeats. */
  long[] sortedSeqs() {
    long[] sorted = Arrays.stream(seqs, 0, size).filter(s -> s >= 0).toArray();
    Arrays.sort(sorted);
    return sorted;
  }
}
