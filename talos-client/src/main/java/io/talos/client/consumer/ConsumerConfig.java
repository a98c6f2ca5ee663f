package io.talos.client.consumer;

import io.talos.common.config.ConfigDef;
import io.talos.common.config.ConfigDef.Type;
import io.talos.common.config.ConfigDef.Validator;
import io.talos.common.config.ConfigException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * Settings of a {@link TalosConsumer}. Every key is declared once in {@link #DEFINITION} with its
 * type, default, allowed range and a doc line; the {@link Builder} and {@link #fromProperties}
 * validate against it and report every bad key at once in a {@link ConfigException}.
 * Connection settings (endpoint, credential, {@code requestTimeoutMs}, {@code maxFetchBytes})
 * come from the client's {@link io.talos.client.TalosClientConfig}. docs/clients.md lists the
 * keys with their defaults. Immutable and thread-safe.
 */
public final class ConsumerConfig {
  public static final String START_FROM = "start.from";
  public static final String START_OFFSET = "start.offset";
  public static final String START_TIMESTAMP_MS = "start.timestamp.ms";
  public static final String FETCH_MAX_WAIT_MS = "fetch.max.wait.ms";
  public static final String AUTO_OFFSET_RESET = "auto.offset.reset";
  public static final String ENABLE_AUTO_COMMIT = "enable.auto.commit";
  public static final String AUTO_COMMIT_INTERVAL_MS = "auto.commit.interval.ms";
  public static final String AUTO_COMMIT_MESSAGES = "auto.commit.messages";
  public static final String MAX_FETCH_RECORDS = "max.fetch.records";
  public static final String FETCH_BACKOFF_MS = "fetch.backoff.ms";
  public static final String PROCESSOR_THREADS = "processor.threads";
  public static final String MAX_POLL_BUFFERED_RECORDS = "max.poll.buffered.records";
  public static final String WORKER_CHECK_INTERVAL_MS = "worker.check.interval.ms";
  public static final String RENEW_INTERVAL_MS = "renew.interval.ms";
  public static final String METADATA_REFRESH_INTERVAL_MS = "metadata.refresh.interval.ms";
  public static final String WORKER_ID = "worker.id";

  /** Where a partition's reading starts when this consumer takes it over. */
  public enum StartFrom {
    /** After the group's committed offset; {@code auto.offset.reset} if none is committed. */
    COMMITTED,
    /** The oldest retained message. */
    EARLIEST,
    /** Messages written from now on. */
    LATEST,
    /** {@code start.offset} (the same offset for every partition). */
    OFFSET,
    /**
     * The first message appended at or after {@code start.timestamp.ms} (a Talos server
     * extension: servers of the original protocol refuse it).
     */
    TIMESTAMP
  }

  /** What to do when there is no committed offset, or the position is not in the partition. */
  public enum OffsetReset {
    /** Go to the oldest retained message. */
    EARLIEST,
    /** Go to the partition's end. */
    LATEST,
    /** Stop reading the partition and report the error (poll throws it; else it is logged). */
    NONE
  }

  /** Every key, its default, range and meaning. */
  public static final ConfigDef DEFINITION = new ConfigDef()
      .section("Position and offsets")
      .define(START_FROM, Type.STRING, StartFrom.COMMITTED.name(),
          Validator.oneOf("COMMITTED", "EARLIEST", "LATEST", "OFFSET", "TIMESTAMP"),
          "Where reading a newly assigned partition starts: COMMITTED (after the group's committed"
              + " offset), EARLIEST, LATEST, OFFSET (start.offset) or TIMESTAMP (start.timestamp.ms).")
      .define(START_OFFSET, Type.LONG, 0L, Validator.atLeast(0),
          "The offset to start at when start.from is OFFSET.")
      .define(START_TIMESTAMP_MS, Type.LONG, 0L, Validator.atLeast(0),
          "When start.from is TIMESTAMP: start at each partition's first message appended at or"
              + " after this time (epoch ms, the server's append time); a partition with none starts"
              + " at its end.")
      .define(AUTO_OFFSET_RESET, Type.STRING, OffsetReset.EARLIEST.name(),
          Validator.oneOf("EARLIEST", "LATEST", "NONE"),
          "Where to go when nothing is committed or the position is out of the partition's range:"
              + " EARLIEST, LATEST, or NONE (stop the partition and report the error).")
      .define(ENABLE_AUTO_COMMIT, Type.BOOLEAN, true, null,
          "Commit the offset of the last processed message automatically (by interval and by"
              + " count); false leaves committing to the application.")
      .define(AUTO_COMMIT_INTERVAL_MS, Type.LONG, 5_000L, Validator.between(1, 3_600_000),
          "With auto-commit: commit a partition's progress at least this often.")
      .define(AUTO_COMMIT_MESSAGES, Type.INT, 10_000, Validator.between(1, 100_000_000),
          "With auto-commit: commit a partition's progress after this many processed messages.")
      .section("Fetching and processing")
      .define(MAX_FETCH_RECORDS, Type.INT, 1000, Validator.between(1, 100_000),
          "Most messages one get request asks for (one batch handed to a MessageProcessor).")
      .define(FETCH_BACKOFF_MS, Type.LONG, 200L, Validator.between(1, 60_000),
          "Pause before fetching a partition again after it had nothing new or a fetch failed"
              + " (with long poll: only after a failure, or when the server does not hold gets).")
      .define(FETCH_MAX_WAIT_MS, Type.LONG, 5_000L, Validator.between(0, 600_000),
          "Long poll: a fetch that finds nothing new asks the server to hold it up to this long"
              + " until a message arrives (a Talos server extension; servers without it answer at"
              + " once and the consumer falls back to fetch.backoff.ms). 0 turns it off. Must be"
              + " less than the client's requestTimeoutMs.")
      .define(PROCESSOR_THREADS, Type.INT, 8, Validator.between(1, 1024),
          "Threads that fetch and process partitions; a partition is on at most one at a time.")
      .define(MAX_POLL_BUFFERED_RECORDS, Type.INT, 10_000, Validator.between(1, 10_000_000),
          "poll() mode: most fetched messages waiting for poll(); fetching pauses at this bound.")
      .section("Group membership")
      .define(WORKER_CHECK_INTERVAL_MS, Type.LONG, 10_000L, Validator.between(100, 600_000),
          "How often the consumer reads the group's workers and rebalances (the SDK 2.0.2 uses"
              + " 10 s).")
      .define(RENEW_INTERVAL_MS, Type.LONG, 7_000L, Validator.between(100, 600_000),
          "How often the worker registration and partition locks are renewed; must be well under"
              + " the server's consumer.lock.ttl.ms.")
      .define(METADATA_REFRESH_INTERVAL_MS, Type.LONG, 60_000L, Validator.between(100, 86_400_000),
          "How often the topic's partition count and end offsets (for lag) are read.")
      .define(WORKER_ID, Type.STRING, "", null,
          "This member's worker id in the group (1 to 256 characters); empty makes a unique one.");

  private final Map<String, Object> values;

  private ConsumerConfig(Map<String, Object> values) {
    this.values = Map.copyOf(values);
  }

  public static Builder builder() {
    return new Builder();
  }

  public static ConsumerConfig defaults() {
    return builder().build();
  }

  /**
   * Reads the keys of {@link #DEFINITION}; absent ones take their defaults.
   *
   * @throws ConfigException naming every unknown key and every bad value
   */
  public static ConsumerConfig fromProperties(Properties properties) {
    Map<String, Object> parsed = DEFINITION.parse(properties);
    Builder builder = builder();
    parsed.forEach((name, value) -> {
      if (value != null) builder.values.put(name, value);
    });
    return builder.build();
  }

  public StartFrom startFrom() {
    return StartFrom.valueOf((String) values.get(START_FROM));
  }

  public long startOffset() {
    return (Long) values.get(START_OFFSET);
  }

  public long startTimestampMs() {
    return (Long) values.get(START_TIMESTAMP_MS);
  }

  /** Long-poll wait of a fetch that found nothing; 0 when long poll is off. */
  public long fetchMaxWaitMs() {
    return (Long) values.get(FETCH_MAX_WAIT_MS);
  }

  public OffsetReset autoOffsetReset() {
    return OffsetReset.valueOf((String) values.get(AUTO_OFFSET_RESET));
  }

  public boolean autoCommit() {
    return (Boolean) values.get(ENABLE_AUTO_COMMIT);
  }

  public long autoCommitIntervalMs() {
    return (Long) values.get(AUTO_COMMIT_INTERVAL_MS);
  }

  public int autoCommitMessages() {
    return (Integer) values.get(AUTO_COMMIT_MESSAGES);
  }

  public int maxFetchRecords() {
    return (Integer) values.get(MAX_FETCH_RECORDS);
  }

  public long fetchBackoffMs() {
    return (Long) values.get(FETCH_BACKOFF_MS);
  }

  public int processorThreads() {
    return (Integer) values.get(PROCESSOR_THREADS);
  }

  public int maxPollBufferedRecords() {
    return (Integer) values.get(MAX_POLL_BUFFERED_RECORDS);
  }

  public long workerCheckIntervalMs() {
    return (Long) values.get(WORKER_CHECK_INTERVAL_MS);
  }

  public long renewIntervalMs() {
    return (Long) values.get(RENEW_INTERVAL_MS);
  }

  public long metadataRefreshIntervalMs() {
    return (Long) values.get(METADATA_REFRESH_INTERVAL_MS);
  }

  /** The configured worker id, or empty for a generated one. */
  public String workerId() {
    return (String) values.get(WORKER_ID);
  }

  public Builder toBuilder() {
    Builder b = builder();
    b.values.putAll(values);
    return b;
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("ConsumerConfig{");
    String sep = "";
    for (String name : DEFINITION.keys().keySet()) {
      sb.append(sep).append(name).append('=').append(values.get(name));
      sep = ", ";
    }
    return sb.append('}').toString();
  }

  /** Collects settings; {@link #build} validates them all. Not thread-safe. */
  public static final class Builder {
    private final Map<String, Object> values = new LinkedHashMap<>();

    private Builder() {}

    public Builder startFrom(StartFrom from) {
      return set(START_FROM, from.name());
    }

    /** Starts every newly assigned partition at {@code offset} ({@code start.from=OFFSET}). */
    public Builder startOffset(long offset) {
      set(START_FROM, StartFrom.OFFSET.name());
      return set(START_OFFSET, offset);
    }

    /**
     * Starts every newly assigned partition at its first message appended at or after {@code
     * epochMs} ({@code start.from=TIMESTAMP}).
     */
    public Builder startTimestampMs(long epochMs) {
      set(START_FROM, StartFrom.TIMESTAMP.name());
      return set(START_TIMESTAMP_MS, epochMs);
    }

    /** Long-poll wait of a fetch ({@code fetch.max.wait.ms}); 0 turns long poll off. */
    public Builder fetchMaxWaitMs(long ms) {
      return set(FETCH_MAX_WAIT_MS, ms);
    }

    public Builder autoOffsetReset(OffsetReset reset) {
      return set(AUTO_OFFSET_RESET, reset.name());
    }

    public Builder autoCommit(boolean enabled) {
      return set(ENABLE_AUTO_COMMIT, enabled);
    }

    public Builder autoCommitIntervalMs(long ms) {
      return set(AUTO_COMMIT_INTERVAL_MS, ms);
    }

    public Builder autoCommitMessages(int messages) {
      return set(AUTO_COMMIT_MESSAGES, messages);
    }

    public Builder maxFetchRecords(int records) {
      return set(MAX_FETCH_RECORDS, records);
    }

    public Builder fetchBackoffMs(long ms) {
      return set(FETCH_BACKOFF_MS, ms);
    }

    public Builder processorThreads(int threads) {
      return set(PROCESSOR_THREADS, threads);
    }

    public Builder maxPollBufferedRecords(int records) {
      return set(MAX_POLL_BUFFERED_RECORDS, records);
    }

    public Builder workerCheckIntervalMs(long ms) {
      return set(WORKER_CHECK_INTERVAL_MS, ms);
    }

    public Builder renewIntervalMs(long ms) {
      return set(RENEW_INTERVAL_MS, ms);
    }

    public Builder metadataRefreshIntervalMs(long ms) {
      return set(METADATA_REFRESH_INTERVAL_MS, ms);
    }

    public Builder workerId(String id) {
      return set(WORKER_ID, id);
    }

    /** Sets a key by name, as {@link #fromProperties} would (the value is validated by build). */
    public Builder set(String name, Object value) {
      if (value instanceof String s && (name.equals(START_FROM) || name.equals(AUTO_OFFSET_RESET))) {
        value = s.toUpperCase(Locale.ROOT);
      }
      values.put(name, value);
      return this;
    }

    /** @throws ConfigException naming every invalid setting */
    public ConsumerConfig build() {
      Map<String, Object> resolved = new LinkedHashMap<>();
      List<String> errors = new ArrayList<>();
      for (String name : values.keySet()) {
        if (!DEFINITION.keys().containsKey(name)) errors.add(name + ": unknown key");
      }
      for (ConfigDef.Key key : DEFINITION.keys().values()) {
        Object value = values.containsKey(key.name()) ? values.get(key.name()) : key.defaultValue();
        String problem = value == null ? "is not set"
            : key.validator() == null ? null : key.validator().check(value);
        if (problem != null) {
          errors.add(key.name() + "=" + value + ": " + problem);
          continue;
        }
        resolved.put(key.name(), value);
      }
      Object id = resolved.get(WORKER_ID);
      if (id instanceof String s && s.length() > 256) {
        errors.add(WORKER_ID + ": must be at most 256 characters, got " + s.length());
      }
      if (!errors.isEmpty()) {
        throw new ConfigException("invalid Talos consumer configuration: " + String.join("; ", errors));
      }
      return new ConsumerConfig(resolved);
    }
  }
}
