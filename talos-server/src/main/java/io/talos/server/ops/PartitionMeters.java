package io.talos.server.ops;

import com.codahale.metrics.Clock;
import com.codahale.metrics.Meter;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Put and get meters per partition (messages and bytes, with one-minute rates), for the ops API's
 * per-partition rates and the {@code topic}/{@code partition} labels of /metrics.
 *
 * <p>Cardinality cap: at most {@code maxPartitions} partitions get their own meters (the first
 * ones that see traffic); traffic of further partitions is counted in one overflow entry (topic
 * {@value #OVERFLOW_TOPIC}, partition -1) and {@link #overflowed()} says how many marks went there,
 * so that a server with many partitions cannot grow memory or the scrape without bound. Meters of
 * a deleted topic are dropped by {@link #removeTopic}.
 *
 * <p>Thread-safe; marking is lock-free once a partition's meters exist.
 */
public final class PartitionMeters {
  /** The topic label of the entry that counts traffic of partitions beyond the cap. */
  public static final String OVERFLOW_TOPIC = "_other";

  /** One partition's meters. Rates are per second over the last minute (exponentially weighted). */
  public static final class Meters {
    public final Meter putMessages;
    public final Meter putBytes;
    public final Meter getMessages;
    public final Meter getBytes;

    Meters(Clock clock) {
      putMessages = new Meter(clock);
      putBytes = new Meter(clock);
      getMessages = new Meter(clock);
      getBytes = new Meter(clock);
    }
  }

  public record Key(String topic, int partition) {}

  private final int maxPartitions;
  private final Clock clock;
  private final Map<Key, Meters> meters = new ConcurrentHashMap<>();
  private final Meters overflow;
  private final AtomicLong overflowed = new AtomicLong();

  public PartitionMeters(int maxPartitions) {
    this(maxPartitions, Clock.defaultClock());
  }

  /** @param clock the meters' tick source (tests step it) */
  public PartitionMeters(int maxPartitions, Clock clock) {
    if (maxPartitions < 0) throw new IllegalArgumentException("maxPartitions=" + maxPartitions);
    this.maxPartitions = maxPartitions;
    this.clock = clock;
    this.overflow = new Meters(clock);
  }

  public void markPut(String topic, int partition, long messages, long bytes) {
    Meters m = forPartition(topic, partition);
    m.putMessages.mark(messages);
    m.putBytes.mark(bytes);
  }

  public void markGet(String topic, int partition, long messages, long bytes) {
    Meters m = forPartition(topic, partition);
    m.getMessages.mark(messages);
    m.getBytes.mark(bytes);
  }

  /** The meters of a partition, or null if it has none (no traffic yet, or beyond the cap). */
  public Meters get(String topic, int partition) {
    return meters.get(new Key(topic, partition));
  }

  /** Every partition with its own meters (a snapshot view; iteration is weakly consistent). */
  public Map<Key, Meters> all() {
    return java.util.Collections.unmodifiableMap(meters);
  }

  /** The meters counting partitions beyond the cap. */
  public Meters overflow() {
    return overflow;
  }

  /** How many marks went to the overflow entry because the cap was reached. */
  public long overflowed() {
    return overflowed.get();
  }

  public int maxPartitions() {
    return maxPartitions;
  }

  /** Forgets a deleted topic's meters (a topic of the same name starts from zero). */
  public void removeTopic(String topic) {
    meters.keySet().removeIf(k -> k.topic().equals(topic));
  }

  private Meters forPartition(String topic, int partition) {
    Key key = new Key(topic, partition);
    Meters m = meters.get(key);
    if (m != null) return m;
    // The size check and the insert race: the cap may be exceeded by the number of concurrent
    // first marks, which is bounded by the request threads; good enough for a label cap.
    if (meters.size() >= maxPartitions) {
      overflowed.incrementAndGet();
      return overflow;
    }
    return meters.computeIfAbsent(key, k -> new Meters(clock));
  }
}
