package io.talos.server.quota;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.server.metadata.Credential;
import io.talos.server.metadata.MetadataStore;
import io.talos.server.metadata.MvStoreMetadataStore;
import io.talos.server.metadata.RateQuota;
import io.talos.server.metadata.TopicRecord;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The throttle on a stepped clock: a producer sending at three times its quota is admitted at
 * the quota's rate (±10%) and the rest is refused after the delay bound, never dropped silently;
 * another account on the same topic's other partition is not delayed at all.
 */
class ThrottleTest {
  private static final long QUOTA = 100_000; // bytes/s
  private static final long MAX_DELAY_MS = 500;

  @Test
  void producerAtThreeTimesItsQuotaGetsTheQuotaRateAndTheQuotaErrorOthersAreUnaffected(@TempDir Path dir) {
    AtomicLong nanos = new AtomicLong(1_000_000_000L);
    try (MetadataStore store = MvStoreMetadataStore.open(dir)) {
      store.putUserQuota("greedy", new RateQuota(-1, -1, -1, QUOTA, -1, -1));
      Throttle throttle = new Throttle(new Throttle.Limits(10 * QUOTA, 0, 1000, MAX_DELAY_MS, 1000),
          QuotaShare.fixed(1.0), nanos::get, store);
      Credential greedy = new Credential("TK1", "s", "greedy", false);
      Credential polite = new Credential("TK2", "s", "polite", false);
      TopicRecord topic = new TopicRecord("t", "o#t#1", "o", 2, 3600, Map.of(), 0, 0);

      // 3x the quota: 30 puts of 10 kB per second, for 60 s, each answered when its decision says.
      long admittedBytes = 0;
      int refused = 0;
      long longestDelayMs = 0;
      long windowStart = 10L * 1_000_000_000L; // after 10 s: the initial burst is spent
      long admittedInWindow = 0;
      Deque<Long> politeDelays = new ArrayDeque<>();
      for (int i = 0; i < 60 * 30; i++) {
        nanos.addAndGet(1_000_000_000L / 30);
        Throttle.Decision d = throttle.admitPut(greedy, topic, 0, 10_000);
        if (d.refused()) {
          refused++;
          assertEquals(MAX_DELAY_MS, d.delayMs(), "refused after the bound");
          assertTrue(d.refusal().contains("setUserQuota"), d.refusal());
        } else {
          admittedBytes += 10_000;
          longestDelayMs = Math.max(longestDelayMs, d.delayMs());
          if (nanos.get() - 1_000_000_000L >= windowStart) admittedInWindow += 10_000;
        }
        if (i % 10 == 0) politeDelays.add(throttle.admitPut(polite, topic, 1, 1_000).delayMs());
      }
      double rate = admittedInWindow / 50.0;
      assertTrue(rate >= QUOTA * 0.9 && rate <= QUOTA * 1.1, "admitted " + rate + " bytes/s, quota " + QUOTA);
      assertTrue(refused > 0, "over the quota some requests are refused");
      assertTrue(longestDelayMs <= MAX_DELAY_MS, "delays stay within the bound: " + longestDelayMs);
      assertTrue(admittedBytes > 0);
      for (long d : politeDelays) assertEquals(0, d, "another account is never delayed");
    }
  }

  @Test
  void partitionDefaultLimitAndTopicQuotaApplyAndTheShareDividesTheTopicQuota(@TempDir Path dir) {
    AtomicLong nanos = new AtomicLong(0);
    try (MetadataStore store = MvStoreMetadataStore.open(dir)) {
      Throttle throttle = new Throttle(new Throttle.Limits(1000, 0, 1000, 100, 1000), QuotaShare.fixed(0.5),
          nanos::get, store);
      Credential c = new Credential("TK1", "s", "a", false);
      TopicRecord topic = new TopicRecord("t", "o#t#1", "o", 1, 3600, Map.of(), 0, 0);
      assertFalse(throttle.admitPut(c, topic, 0, 1000).refused()); // the burst
      Throttle.Decision d = throttle.admitPut(c, topic, 0, 50);
      assertEquals(50, d.delayMs(), "50 bytes at 1000 bytes/s"); // partition limit, not shared
      assertTrue(throttle.admitPut(c, topic, 0, 1000).refused());
      // A topic quota of 200 requests/s, half of it here: 100/s, burst 100.
      TopicRecord limited = topic.withQuota(new RateQuota(-1, 200, -1, -1, -1, -1));
      int admitted = 0;
      for (int i = 0; i < 300; i++) if (!throttle.admitPut(c, limited, 1, 0).refused()) admitted++;
      assertTrue(admitted >= 100 && admitted <= 111, "admitted " + admitted); // burst + what 100 ms of delay allows
    }
  }

  @Test
  void aRequestLargerThanTheBucketIsAdmittedWhenTheBucketIsFullAndTheNextOnesPayItsDebt() {
    long second = 1_000_000_000L;
    TokenBucket bucket = new TokenBucket(1000, 1000, 0); // 1000 units/s, holds 1000
    assertEquals(0, bucket.waitNanos(5000, 0), "a full bucket admits a request of 5x its capacity at once");
    bucket.take(5000, 0);
    assertEquals(4 * second, bucket.waitNanos(1, 0), 2_000_000,
        "the next request waits until the 4000 units of debt are paid");
    assertEquals(second, bucket.waitNanos(5000, 4 * second), 1_000_000,
        "another large one waits until the bucket is full again, not for its whole size");
  }
}
