package io.talos.bench.reliability;

import java.util.Arrays;

/**
 * A map from long keys to long values kept as runs in which both go up by one: the
 * acknowledgements of one partition (key an offset, value the message's sequence number), where
 * a batch's messages get consecutive offsets and carry consecutive sequence numbers, and the next
 * batch of the same producer usually continues both.
 *
 * <pre>
 *   run i:  keys  start[i] .. start[i] + count[i] - 1
 *           value of key k = value[i] + (k - start[i])
 * </pre>
 *
 * <p>Runs are sorted by start and never overlap, and a run never continues the one before it
 * (both its key and value would be the next ones): those are merged. So a producer whose batches
 * all succeed costs one run (24 bytes) however long it runs; every gap, overwrite or out-of-order
 * key costs one or two more. Keys arriving in ascending order take the constant-time path; an
 * overwritten or earlier key is found by binary search and may shift the arrays.
 *
 * <p>Not thread-safe ({@link AckLedger} synchronizes).
 */
final class AckRuns {
  /** What {@link #get} and {@link #put} return for a key not held. */
  static final long ABSENT = Long.MIN_VALUE;

  private long[] start = new long[4];
  private long[] value = new long[4];
  private long[] count = new long[4];
  private int runs;
  private long keys;

  /** Number of keys held. */
  long keys() {
    return keys;
  }

  /** Number of runs (how compact the map is). */
  int runs() {
    return runs;
  }

  long runStart(int run) {
    return start[run];
  }

  long runValue(int run) {
    return value[run];
  }

  long runCount(int run) {
    return count[run];
  }

  /** The value of {@code key}, or {@link #ABSENT}. */
  long get(long key) {
    int i = lastStartingAtOrBefore(key);
    return i >= 0 && key < end(i) ? value[i] + (key - start[i]) : ABSENT;
  }

  /** Maps {@code key} to {@code v}; returns the value it had, or {@link #ABSENT}. */
  long put(long key, long v) {
    if (runs == 0 || key >= end(runs - 1)) {
      int last = runs - 1;
      if (last >= 0 && key == end(last) && v == valueEnd(last)) {
        count[last]++;
      } else {
        insertRun(runs, key, v, 1);
      }
      keys++;
      return ABSENT;
    }
    int i = lastStartingAtOrBefore(key);
    long before = ABSENT;
    if (i >= 0 && key < end(i)) {
      before = value[i] + (key - start[i]);
      if (before == v) return before;
      removeKey(i, key);
    }
    insertKey(key, v);
    if (before == ABSENT) keys++;
    return before;
  }

  private long end(int run) {
    return start[run] + count[run];
  }

  private long valueEnd(int run) {
    return value[run] + count[run];
  }

  /** Index of the last run with start <= key, or -1. */
  private int lastStartingAtOrBefore(long key) {
    int i = Arrays.binarySearch(start, 0, runs, key);
    return i >= 0 ? i : -i - 2;
  }

  /** Takes {@code key} out of run {@code i}, which holds it: shrinks the run or splits it in two. */
  private void removeKey(int i, long key) {
    long k = key - start[i];
    if (count[i] == 1) {
      removeRun(i);
    } else if (k == 0) {
      start[i]++;
      value[i]++;
      count[i]--;
    } else if (k == count[i] - 1) {
      count[i]--;
    } else {
      insertRun(i + 1, key + 1, value[i] + k + 1, count[i] - k - 1);
      count[i] = k;
    }
  }

  /** Adds {@code key -> v} where no run holds {@code key}, merging with the runs on either side. */
  private void insertKey(long key, long v) {
    int p = lastStartingAtOrBefore(key) + 1; // position of the new run
    boolean joinsLeft = p > 0 && end(p - 1) == key && valueEnd(p - 1) == v;
    boolean joinsRight = p < runs && start[p] == key + 1 && value[p] == v + 1;
    if (joinsLeft && joinsRight) {
      count[p - 1] += 1 + count[p];
      removeRun(p);
    } else if (joinsLeft) {
      count[p - 1]++;
    } else if (joinsRight) {
      start[p]--;
      value[p]--;
      count[p]++;
    } else {
      insertRun(p, key, v, 1);
    }
  }

  private void insertRun(int at, long s, long v, long n) {
    if (runs == start.length) {
      int capacity = runs + (runs >> 1) + 1;
      start = Arrays.copyOf(start, capacity);
      value = Arrays.copyOf(value, capacity);
      count = Arrays.copyOf(count, capacity);
    }
    System.arraycopy(start, at, start, at + 1, runs - at);
    System.arraycopy(value, at, value, at + 1, runs - at);
    System.arraycopy(count, at, count, at + 1, runs - at);
    start[at] = s;
    value[at] = v;
    count[at] = n;
    runs++;
  }

  private void removeRun(int at) {
    System.arraycopy(start, at + 1, start, at, runs - at - 1);
    System.arraycopy(value, at + 1, value, at, runs - at - 1);
    System.arraycopy(count, at + 1, count, at, runs - at - 1);
    runs--;
  }
}
