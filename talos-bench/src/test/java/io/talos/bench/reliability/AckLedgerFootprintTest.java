package io.talos.bench.reliability;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.lang.ref.Reference;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Heap an {@link AckLedger} retains per acknowledged message, measured (used heap after full
 * collections, with and without the ledger) for three patterns of acknowledgements over 4
 * partitions. The bounds of the first two are far above what the run-length ledger takes and far
 * below the 88 bytes of a ledger with a map entry per message, so they fail on one that keeps entries.
 * Prints its measurements (docs/reliability.md quotes them).
 */
class AckLedgerFootprintTest {
  private static final int MESSAGES = 2_000_000;
  private static final int PARTITIONS = 4;

  /** Batches of 100 with contiguous offsets and sequence numbers (the soak, a producer that never fails). */
  @Test
  void shouldKeepContiguousBatchesInAlmostNoMemory() {
    double perMessage = bytesPerMessage("contiguous batches of 100", ledger -> {
      long[] next = new long[PARTITIONS];
      for (long i = 0; i < MESSAGES / 100; i++) {
        int p = (int) (i % PARTITIONS);
        for (int k = 0; k < 100; k++) ledger.ack(p, next[p] + k, next[p] + k);
        next[p] += 100;
      }
    });
    assertTrue(perMessage < 1, perMessage + " bytes per message");
  }

  /**
   * Batches of 1-20; one put in 50 fails (its sequence numbers are never acknowledged, its offsets
   * stored or not): the crash cycles' pattern, a run per failed put.
   */
  @Test
  void shouldKeepBatchesWithFailedPutsInAFewBytes() {
    double perMessage = bytesPerMessage("batches of 1-20, one put in 50 failed", ledger -> {
      Random random = new Random(1);
      long[] offset = new long[PARTITIONS];
      long[] seq = new long[PARTITIONS];
      long acked = 0;
      while (acked < MESSAGES) {
        int p = random.nextInt(PARTITIONS);
        int n = 1 + random.nextInt(20);
        if (random.nextInt(50) == 0) {
          seq[p] += n;
          if (random.nextBoolean()) offset[p] += n;
          continue;
        }
        for (int k = 0; k < n; k++) ledger.ack(p, offset[p] + k, seq[p] + k);
        offset[p] += n;
        seq[p] += n;
        acked += n;
      }
    });
    assertTrue(perMessage < 4, perMessage + " bytes per message");
  }

  /**
   * The worst case: no acknowledgement continues another (every other offset), one run each: 24
   * bytes, up to half as much again of array growth, and the collector's rounding of such large
   * arrays (G1 gives each whole regions): 38-51 bytes measured.
   */
  @Test
  void shouldKeepUnmergeableAcknowledgementsInARunEach() {
    double perMessage = bytesPerMessage("no two acknowledgements contiguous", ledger -> {
      for (long i = 0; i < MESSAGES; i++) {
        long k = i / PARTITIONS;
        ledger.ack((int) (i % PARTITIONS), 2 * k, k);
      }
    });
    assertTrue(perMessage < 64, perMessage + " bytes per message");
  }

  private interface Fill {
    void into(AckLedger ledger);
  }

  private static double bytesPerMessage(String pattern, Fill fill) {
    long before = usedAfterGc();
    AckLedger ledger = new AckLedger();
    fill.into(ledger);
    long after = usedAfterGc();
    assertTrue(ledger.acknowledged() >= MESSAGES);
    double perMessage = (double) (after - before) / ledger.acknowledged();
    Reference.reachabilityFence(ledger);
    System.out.printf("AckLedger footprint, %s: %,d messages, %,d bytes retained, %.2f bytes per message%n",
        pattern, ledger.acknowledged(), after - before, perMessage);
    return perMessage;
  }

  private static long usedAfterGc() {
    for (int i = 0; i < 3; i++) System.gc();
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }
}
