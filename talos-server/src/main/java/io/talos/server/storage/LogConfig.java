package io.talos.server.storage;

import java.util.ArrayList;
import java.util.List;

/**
 * Settings of every partition log of a server. Immutable; the constructor validates all fields at
 * once and names each bad one with its value and what is allowed.
 *
 * @param segmentBytes roll the active segment before an append that would make it larger than
 *     this (a single append larger than this still goes into an empty segment)
 * @param segmentMs roll the active segment before an append when its first append is at least this
 *     old, by the log's {@link java.time.Clock}
 * @param indexIntervalBytes bytes of records between two entries of the sparse {@link OffsetIndex};
 *     a read scans at most about this much before reaching its block
 * @param durability when an append is acknowledged
 * @param maxBlockBytes largest payload of one block an append accepts (a sanity limit; the front
 *     end should refuse larger blocks first)
 * @param leaseRecoveryTimeoutMs on file systems with leases (hdfs), how long opening a log waits
 *     for the lease of a segment left open by a crashed server to be recovered
 * @param readerRefreshMs least time between two listings of a partition by its read-only {@link
 *     PartitionReader} (0: every read beyond its known end lists again)
 * @param producerStateMaxProducers idempotent produce: producers remembered per partition (see
 *     {@link ProducerState})
 * @param producerStateExpiryMs idempotent produce: a producer without a put for this long (by
 *     append time) is forgotten; also how far back opening a log reads to rebuild the state
 */
public record LogConfig(long segmentBytes, long segmentMs, int indexIntervalBytes, Durability durability,
    int maxBlockBytes, long leaseRecoveryTimeoutMs, long readerRefreshMs, int producerStateMaxProducers,
    long producerStateExpiryMs) {

  public static final long DEFAULT_SEGMENT_BYTES = 256L * 1024 * 1024;
  public static final long DEFAULT_SEGMENT_MS = 60 * 60 * 1000L;
  public static final int DEFAULT_INDEX_INTERVAL_BYTES = 4096;
  public static final Durability DEFAULT_DURABILITY = Durability.FLUSH;
  public static final int DEFAULT_MAX_BLOCK_BYTES = 16 * 1024 * 1024;
  public static final long DEFAULT_LEASE_RECOVERY_TIMEOUT_MS = 60_000L;
  public static final long DEFAULT_READER_REFRESH_MS = 500L;
  public static final int DEFAULT_PRODUCER_STATE_MAX_PRODUCERS = 1000;
  public static final long DEFAULT_PRODUCER_STATE_EXPIRY_MS = 15 * 60 * 1000L;

  /** The settings before idempotent produce, with its defaults. */
  public LogConfig(long segmentBytes, long segmentMs, int indexIntervalBytes, Durability durability,
      int maxBlockBytes, long leaseRecoveryTimeoutMs, long readerRefreshMs) {
    this(segmentBytes, segmentMs, indexIntervalBytes, durability, maxBlockBytes, leaseRecoveryTimeoutMs,
        readerRefreshMs, DEFAULT_PRODUCER_STATE_MAX_PRODUCERS, DEFAULT_PRODUCER_STATE_EXPIRY_MS);
  }

  public LogConfig {
    List<String> errors = new ArrayList<>();
    if (segmentBytes < 1) errors.add("segmentBytes=" + segmentBytes + " must be >= 1");
    if (segmentMs < 1) errors.add("segmentMs=" + segmentMs + " must be >= 1");
    if (indexIntervalBytes < 1) errors.add("indexIntervalBytes=" + indexIntervalBytes + " must be >= 1");
    if (durability == null) errors.add("durability must be set (FLUSH or SYNC)");
    if (maxBlockBytes < 0 || maxBlockBytes > RecordFormat.MAX_PAYLOAD_BYTES) {
      errors.add("maxBlockBytes=" + maxBlockBytes + " must be between 0 and MAX_PAYLOAD_BYTES="
          + RecordFormat.MAX_PAYLOAD_BYTES);
    }
    if (leaseRecoveryTimeoutMs < 0) {
      errors.add("leaseRecoveryTimeoutMs=" + leaseRecoveryTimeoutMs + " must be >= 0");
    }
    if (readerRefreshMs < 0) errors.add("readerRefreshMs=" + readerRefreshMs + " must be >= 0");
    if (producerStateMaxProducers < 1) {
      errors.add("producerStateMaxProducers=" + producerStateMaxProducers + " must be >= 1");
    }
    if (producerStateExpiryMs < 1) errors.add("producerStateExpiryMs=" + producerStateExpiryMs + " must be >= 1");
    if (!errors.isEmpty()) {
      throw new IllegalArgumentException("invalid log config: " + String.join("; ", errors));
    }
  }

  public static LogConfig defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    return new Builder().segmentBytes(segmentBytes).segmentMs(segmentMs)
        .indexIntervalBytes(indexIntervalBytes).durability(durability).maxBlockBytes(maxBlockBytes)
        .leaseRecoveryTimeoutMs(leaseRecoveryTimeoutMs).readerRefreshMs(readerRefreshMs)
        .producerStateMaxProducers(producerStateMaxProducers).producerStateExpiryMs(producerStateExpiryMs);
  }

  /** Starts at the defaults; not thread-safe. */
  public static final class Builder {
    private long segmentBytes = DEFAULT_SEGMENT_BYTES;
    private long segmentMs = DEFAULT_SEGMENT_MS;
    private int indexIntervalBytes = DEFAULT_INDEX_INTERVAL_BYTES;
    private Durability durability = DEFAULT_DURABILITY;
    private int maxBlockBytes = DEFAULT_MAX_BLOCK_BYTES;
    private long leaseRecoveryTimeoutMs = DEFAULT_LEASE_RECOVERY_TIMEOUT_MS;
    private long readerRefreshMs = DEFAULT_READER_REFRESH_MS;
    private int producerStateMaxProducers = DEFAULT_PRODUCER_STATE_MAX_PRODUCERS;
    private long producerStateExpiryMs = DEFAULT_PRODUCER_STATE_EXPIRY_MS;

    private Builder() {}

    public Builder segmentBytes(long v) {
      segmentBytes = v;
      return this;
    }

    public Builder segmentMs(long v) {
      segmentMs = v;
      return this;
    }

    public Builder indexIntervalBytes(int v) {
      indexIntervalBytes = v;
      return this;
    }

    public Builder durability(Durability v) {
      durability = v;
      return this;
    }

    public Builder maxBlockBytes(int v) {
      maxBlockBytes = v;
      return this;
    }

    public Builder leaseRecoveryTimeoutMs(long v) {
      leaseRecoveryTimeoutMs = v;
      return this;
    }

    public Builder readerRefreshMs(long v) {
      readerRefreshMs = v;
      return this;
    }

    public Builder producerStateMaxProducers(int v) {
      producerStateMaxProducers = v;
      return this;
    }

    public Builder producerStateExpiryMs(long v) {
      producerStateExpiryMs = v;
      return this;
    }

    /** @throws IllegalArgumentException naming every invalid field */
    public LogConfig build() {
      return new LogConfig(segmentBytes, segmentMs, indexIntervalBytes, durability, maxBlockBytes,
          leaseRecoveryTimeoutMs, readerRefreshMs, producerStateMaxProducers, producerStateExpiryMs);
    }
  }
}
