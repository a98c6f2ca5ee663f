package io.talos.server.quota;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.talos.server.metadata.Credential;
import io.talos.server.metadata.MetadataStore;
import io.talos.server.metadata.RateQuota;
import io.talos.server.metadata.TopicRecord;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * Rate limits of puts and gets, with {@link TokenBucket}s: per partition (the node's defaults,
 * {@code quota.partition.put.bytes.per.sec} and {@code quota.partition.get.bytes.per.sec}), per
 * topic (its quota, {@code setTopicQuota}) and per account (the caller's user quota, {@code
 * setUserQuota}); topic and user quotas are cluster-wide, and this node enforces its {@link
 * QuotaShare} of them.
 *
 * <p>A request is admitted when every bucket that applies to it can pay within {@code
 * maxDelayMs}: it then takes its tokens from all of them (all or nothing, under one lock) and is
 * to be run after the longest wait ({@link Decision#delayMs}). Otherwise it takes nothing and is
 * to be answered with the quota error after {@code maxDelayMs} ({@link Decision#refusal}): a
 * client over its quota is slowed to the quota's rate and then told, never silently dropped, and
 * its refused requests do not eat into the quota. A put pays its bytes up front; a get pays one
 * request up front and its bytes after the read ({@link #chargeGet}), since they are known only
 * then: the next get waits for that debt.
 *
 * <p>Time comes from an injected nanosecond clock, so tests step it. Buckets are kept for at most
 * {@code maxBuckets} keys (least recently used dropped: a dropped bucket comes back full).
 * Thread-safe.
 */
public final class Throttle {
  /**
   * @param partitionPutBytesPerSec default write limit of one partition (0: none)
   * @param partitionGetBytesPerSec default read limit of one partition (0: none)
   * @param burstMs how much unused rate a bucket saves up, in ms of its rate
   * @param maxDelayMs longest a request is delayed; beyond it is refused after this long
   */
  public record Limits(long partitionPutBytesPerSec, long partitionGetBytesPerSec, long burstMs, long maxDelayMs,
      long maxBuckets) {}

  /**
   * What to do with a request: run it after {@code delayMs}, or (when {@code refusal} is set)
   * answer it with the quota error after {@code delayMs}.
   */
  public record Decision(long delayMs, String refusal) {
    public static final Decision NOW = new Decision(0, null);

    public boolean refused() {
      return refusal != null;
    }
  }

  private record Charge(String key, String what, double rate, long units) {}

  private final Limits limits;
  private final QuotaShare share;
  private final LongSupplier nanoClock;
  private final MetadataStore metadata;
  private final Cache<String, TokenBucket> buckets;

  public Throttle(Limits limits, QuotaShare share, LongSupplier nanoClock, MetadataStore metadata) {
    this.limits = limits;
    this.share = share;
    this.nanoClock = nanoClock;
    this.metadata = metadata;
    this.buckets = Caffeine.newBuilder().maximumSize(limits.maxBuckets()).expireAfterAccess(Duration.ofMinutes(10))
        .build();
  }

  public Limits limits() {
    return limits;
  }

  /**
   * The topic a put or get names, or null when it names none that exists (the service then
   * answers the error; nothing is charged).
   */
  public TopicRecord topicOf(io.talos.thrift.TopicAndPartition tap) {
    if (tap == null) return null;
    String resourceName = tap.isSetTopicTalosResourceName()
        ? tap.getTopicTalosResourceName().getTopicTalosResourceName() : null;
    String name = resourceName != null ? io.talos.common.TopicNames.topicNameOf(resourceName) : tap.getTopicName();
    if (name == null || name.isEmpty()) return null;
    TopicRecord topic = metadata.topic(name).orElse(null);
    if (topic == null || resourceName != null && !topic.resourceName().equals(resourceName)) return null;
    return topic;
  }

  /** Admission of a put of {@code bytes} message bytes to one partition. */
  public Decision admitPut(Credential caller, TopicRecord topic, int partition, long bytes) {
    List<Charge> charges = new ArrayList<>(6);
    if (limits.partitionPutBytesPerSec() > 0) {
      charges.add(new Charge("p/put/" + topic.resourceName() + "/" + partition, "the partition write limit "
          + limits.partitionPutBytesPerSec() + " bytes/s of partition " + partition + " of topic '" + topic.name()
          + "' (quota.partition.put.bytes.per.sec)", limits.partitionPutBytesPerSec(), bytes));
    }
    addQuota(charges, "topic '" + topic.name() + "'", "t/" + topic.resourceName(), topic.quota(), true, bytes,
        "setTopicQuota");
    addUser(charges, caller, true, bytes);
    return admit(charges);
  }

  /** Admission of a get from one partition: one request now, its bytes later ({@link #chargeGet}). */
  public Decision admitGet(Credential caller, TopicRecord topic, int partition) {
    List<Charge> charges = new ArrayList<>(6);
    if (limits.partitionGetBytesPerSec() > 0) {
      charges.add(new Charge("p/get/" + topic.resourceName() + "/" + partition, "the partition read limit "
          + limits.partitionGetBytesPerSec() + " bytes/s of partition " + partition + " of topic '" + topic.name()
          + "' (quota.partition.get.bytes.per.sec)", limits.partitionGetBytesPerSec(), 0));
    }
    addQuota(charges, "topic '" + topic.name() + "'", "t/" + topic.resourceName(), topic.quota(), false, 0,
        "setTopicQuota");
    addUser(charges, caller, false, 0);
    return admit(charges);
  }

  /** Charges the bytes a get returned to the buckets its admission checked. */
  public void chargeGet(Credential caller, TopicRecord topic, int partition, long bytes) {
    long now = nanoClock.getAsLong();
    if (limits.partitionGetBytesPerSec() > 0) {
      bucket("p/get/" + topic.resourceName() + "/" + partition, limits.partitionGetBytesPerSec(), now)
          .take(bytes, now);
    }
    List<Charge> charges = new ArrayList<>(4);
    addQuota(charges, "", "t/" + topic.resourceName(), topic.quota(), false, bytes, "");
    addUser(charges, caller, false, bytes);
    synchronized (this) {
      for (Charge c : charges) {
        if (c.key().contains("/getB@")) bucket(c.key(), c.rate(), now).take(bytes, now);
      }
    }
  }

  private void addUser(List<Charge> charges, Credential caller, boolean put, long bytes) {
    if (caller.ownerId() == null) return;
    RateQuota quota = metadata.userQuota(caller.ownerId()).orElse(null);
    if (quota != null) {
      addQuota(charges, "account '" + caller.ownerId() + "'", "u/" + caller.ownerId(), quota, put, bytes,
          "setUserQuota");
    }
  }

  private void addQuota(List<Charge> charges, String whose, String keyPrefix, RateQuota q, boolean put, long bytes,
      String setBy) {
    double fraction = share.fraction();
    long requests = put ? q.putRequestsPerSec() : q.getRequestsPerSec();
    long byteRate = put ? q.putBytesPerSec() : q.getBytesPerSec();
    String dir = put ? "put" : "get";
    if (requests > 0) {
      double rate = requests * fraction;
      charges.add(new Charge(keyPrefix + "/" + dir + "Q@" + rate, "the " + dir + " request quota " + requests
          + "/s of " + whose + " (" + setBy + ")", rate, 1));
    }
    if (byteRate > 0) {
      double rate = byteRate * fraction;
      charges.add(new Charge(keyPrefix + "/" + dir + "B@" + rate, "the " + dir + " byte quota " + byteRate
          + " bytes/s of " + whose + " (" + setBy + ")", rate, bytes));
    }
  }

  private TokenBucket bucket(String key, double rate, long now) {
    return buckets.get(key, k -> new TokenBucket(rate, limits.burstMs(), now));
  }

  private synchronized Decision admit(List<Charge> charges) {
    if (charges.isEmpty()) return Decision.NOW;
    long now = nanoClock.getAsLong();
    long waitNanos = 0;
    String slowest = null;
    List<TokenBucket> taken = new ArrayList<>(charges.size());
    for (Charge c : charges) {
      TokenBucket b = bucket(c.key(), c.rate(), now);
      taken.add(b);
      long w = b.waitNanos(c.units(), now);
      if (w > waitNanos) {
        waitNanos = w;
        slowest = c.what();
      }
    }
    long maxDelayNanos = limits.maxDelayMs() * 1_000_000L;
    if (waitNanos > maxDelayNanos) {
      return new Decision(limits.maxDelayMs(), "quota exceeded: over " + slowest + "; the request was held "
          + limits.maxDelayMs() + " ms (quota.throttle.max.delay.ms) and not served; send slower or ask an"
          + " operator for a larger quota");
    }
    for (int i = 0; i < charges.size(); i++) taken.get(i).take(charges.get(i).units(), now);
    return waitNanos == 0 ? Decision.NOW : new Decision((waitNanos + 999_999) / 1_000_000, null);
  }
}
