package io.talos.client.producer;

import io.talos.client.codec.CompressionType;
import io.talos.common.config.ConfigDef;
import io.talos.common.config.ConfigDef.Type;
import io.talos.common.config.ConfigDef.Validator;
import io.talos.common.config.ConfigException;
import java.lang.reflect.InvocationTargetException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;

/**
 * Settings of a {@link TalosProducer}. Every key is declared once in {@link #DEFINITION} with its
 * type, default, allowed range and a doc line; the {@link Builder} and {@link #fromProperties}
 * both validate against it and report every bad key at once in a {@link ConfigException}.
 * Connection settings (endpoint, credential, {@code requestTimeoutMs}, {@code maxMessageBytes})
 * come from the {@link io.talos.client.TalosClientConfig} of the client the producer is made
 * from. docs/clients.md lists the keys with their defaults.
 *
 * <p>Immutable and thread-safe (a {@link Partitioner} instance given to the builder is shared).
 */
public final class ProducerConfig {
  public static final String BATCH_MAX_RECORDS = "batch.max.records";
  public static final String BATCH_MAX_BYTES = "batch.max.bytes";
  public static final String LINGER_MS = "linger.ms";
  public static final String COMPRESSION_TYPE = "compression.type";
  public static final String BUFFER_MEMORY_BYTES = "buffer.memory.bytes";
  public static final String MAX_BLOCK_MS = "max.block.ms";
  public static final String DELIVERY_TIMEOUT_MS = "delivery.timeout.ms";
  public static final String RETRIES = "retries";
  public static final String ENABLE_IDEMPOTENCE = "enable.idempotence";
  public static final String RETRY_BACKOFF_MS = "retry.backoff.ms";
  public static final String RETRY_BACKOFF_MAX_MS = "retry.backoff.max.ms";
  public static final String MAX_IN_FLIGHT_REQUESTS = "max.in.flight.requests";
  public static final String METADATA_REFRESH_INTERVAL_MS = "metadata.refresh.interval.ms";
  public static final String PARTITIONER = "partitioner";

  /** {@link #PARTITIONER} value for {@link KeyHashPartitioner}. */
  public static final String PARTITIONER_KEY_HASH = "key_hash";
  /** {@link #PARTITIONER} value for {@link RoundRobinPartitioner}. */
  public static final String PARTITIONER_ROUND_ROBIN = "round_robin";

  /** Largest {@link #BATCH_MAX_BYTES}: well under the server's default limits on a put block. */
  public static final int MAX_BATCH_BYTES = 16 * 1024 * 1024;

  /** Every key, its default, range and meaning. */
  public static final ConfigDef DEFINITION = new ConfigDef()
      .section("Batching")
      .define(BATCH_MAX_RECORDS, Type.INT, 1000, Validator.between(1, 100_000),
          "A partition's batch is sent once it holds this many records (one batch is one put"
              + " request with one message block).")
      .define(BATCH_MAX_BYTES, Type.INT, 1024 * 1024, Validator.between(1, MAX_BATCH_BYTES),
          "A partition's batch is sent once its serialized, uncompressed records reach this many"
              + " bytes; a larger record makes a batch of its own.")
      .define(LINGER_MS, Type.LONG, 5L, Validator.between(0, 3_600_000),
          "How long a batch that is not full waits for more records before it is sent;"
              + " 0 sends as soon as a request slot is free.")
      .define(COMPRESSION_TYPE, Type.STRING, CompressionType.NONE.name(),
          Validator.oneOf("NONE", "SNAPPY", "GZIP"),
          "Compression of each batch's message block: NONE, SNAPPY or GZIP.")
      .section("Memory")
      .define(BUFFER_MEMORY_BYTES, Type.LONG, 32L * 1024 * 1024,
          Validator.between(1024, 64L * 1024 * 1024 * 1024),
          "Most bytes of records (serialized size) waiting or in flight; send blocks while it is"
              + " reached.")
      .define(MAX_BLOCK_MS, Type.LONG, 60_000L, Validator.between(0, 3_600_000),
          "Longest send blocks waiting for buffer space before it throws"
              + " BufferExhaustedException; 0 fails at once.")
      .section("Delivery")
      .define(DELIVERY_TIMEOUT_MS, Type.LONG, 120_000L, Validator.between(1, 86_400_000),
          "Upper bound on the time from send to success or failure, waiting and retries"
              + " included; must be at least linger.ms + the client's requestTimeoutMs.")
      .define(RETRIES, Type.INT, Integer.MAX_VALUE, Validator.atLeast(0),
          "Most times a batch is sent again after a retriable error (delivery.timeout.ms"
              + " usually ends retrying first).")
      .define(ENABLE_IDEMPOTENCE, Type.BOOLEAN, true, null,
          "Idempotent produce: the producer gets a producer id from the server and numbers its"
              + " batches per partition, so a batch sent again after a lost answer is stored once"
              + " and answered with its first offsets. false sends plain puts (at least once).")
      .define(RETRY_BACKOFF_MS, Type.LONG, 100L, Validator.between(1, 600_000),
          "Wait before the first retry of a batch; doubles with each further retry.")
      .define(RETRY_BACKOFF_MAX_MS, Type.LONG, 1_000L, Validator.between(1, 600_000),
          "Longest wait between two retries of a batch.")
      // 16: a put's round trip is long next to the time to fill a batch under load, and the
      // producer pipelines one batch per partition (Kafka's producer carries every partition's
      // batch in each of its 5 requests); 4 left a 16-partition producer waiting on round trips.
      .define(MAX_IN_FLIGHT_REQUESTS, Type.INT, 16, Validator.between(1, 256),
          "Most put requests in flight at once, each for a different partition (a partition has"
              + " at most one, which keeps its records in order under retries).")
      .section("Partitioning")
      .define(PARTITIONER, Type.STRING, PARTITIONER_KEY_HASH, Validator.nonEmpty(),
          "How records without a partition are placed: key_hash (murmur2 of the key; keyless"
              + " records sticky per batch), round_robin, or the class name of a Partitioner"
              + " with a public no-argument constructor.")
      .define(METADATA_REFRESH_INTERVAL_MS, Type.LONG, 60_000L,
          Validator.between(100, 86_400_000),
          "How often the producer asks the server for the topic's partition count, to start"
              + " using partitions added to the topic.");

  private final Map<String, Object> values;
  private final Partitioner partitionerInstance;

  private ProducerConfig(Map<String, Object> values, Partitioner partitionerInstance) {
    this.values = Map.copyOf(values);
    this.partitionerInstance = partitionerInstance;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** All defaults. */
  public static ProducerConfig defaults() {
    return builder().build();
  }

  /**
   * Reads the keys of {@link #DEFINITION}; absent ones take their defaults.
   *
   * @throws ConfigException naming every unknown key and every bad value
   */
  public static ProducerConfig fromProperties(Properties properties) {
    Map<String, Object> parsed = DEFINITION.parse(properties);
    Builder builder = builder();
    parsed.forEach((name, value) -> {
      if (value != null) builder.values.put(name, value);
    });
    return builder.build();
  }

  public int batchMaxRecords() {
    return (Integer) values.get(BATCH_MAX_RECORDS);
  }

  public int batchMaxBytes() {
    return (Integer) values.get(BATCH_MAX_BYTES);
  }

  public long lingerMs() {
    return (Long) values.get(LINGER_MS);
  }

  public CompressionType compressionType() {
    return CompressionType.valueOf((String) values.get(COMPRESSION_TYPE));
  }

  public long bufferMemoryBytes() {
    return (Long) values.get(BUFFER_MEMORY_BYTES);
  }

  public long maxBlockMs() {
    return (Long) values.get(MAX_BLOCK_MS);
  }

  public long deliveryTimeoutMs() {
    return (Long) values.get(DELIVERY_TIMEOUT_MS);
  }

  public int retries() {
    return (Integer) values.get(RETRIES);
  }

  public boolean enableIdempotence() {
    return (Boolean) values.get(ENABLE_IDEMPOTENCE);
  }

  public long retryBackoffMs() {
    return (Long) values.get(RETRY_BACKOFF_MS);
  }

  public long retryBackoffMaxMs() {
    return (Long) values.get(RETRY_BACKOFF_MAX_MS);
  }

  public int maxInFlightRequests() {
    return (Integer) values.get(MAX_IN_FLIGHT_REQUESTS);
  }

  public long metadataRefreshIntervalMs() {
    return (Long) values.get(METADATA_REFRESH_INTERVAL_MS);
  }

  /** The {@link #PARTITIONER} setting as given (a name or a class name). */
  public String partitionerName() {
    return (String) values.get(PARTITIONER);
  }

  /**
   * A partitioner as configured: the instance given to the builder, else a new
   * {@link KeyHashPartitioner}, {@link RoundRobinPartitioner} or instance of the named class.
   */
  public Partitioner newPartitioner() {
    if (partitionerInstance != null) return partitionerInstance;
    String name = partitionerName();
    if (name.equals(PARTITIONER_KEY_HASH)) return new KeyHashPartitioner();
    if (name.equals(PARTITIONER_ROUND_ROBIN)) return new RoundRobinPartitioner();
    return instantiate(name);
  }

  /** A builder holding this configuration's values, to derive a changed copy. */
  public Builder toBuilder() {
    Builder b = builder();
    b.values.putAll(values);
    b.partitioner = partitionerInstance;
    return b;
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("ProducerConfig{");
    String sep = "";
    for (String name : DEFINITION.keys().keySet()) {
      sb.append(sep).append(name).append('=').append(values.get(name));
      sep = ", ";
    }
    if (partitionerInstance != null) sb.append(", partitioner instance=").append(partitionerInstance);
    return sb.append('}').toString();
  }

  private static Partitioner instantiate(String className) {
    try {
      Class<?> c = Class.forName(className, true, Thread.currentThread().getContextClassLoader() != null
          ? Thread.currentThread().getContextClassLoader() : ProducerConfig.class.getClassLoader());
      if (!Partitioner.class.isAssignableFrom(c)) {
        throw new ConfigException(PARTITIONER + "=" + className + ": the class does not implement "
            + Partitioner.class.getName());
      }
      return (Partitioner) c.getConstructor().newInstance();
    } catch (ClassNotFoundException e) {
      throw new ConfigException(PARTITIONER + "=" + className + ": must be "
          + PARTITIONER_KEY_HASH + ", " + PARTITIONER_ROUND_ROBIN
          + " or the name of a Partitioner class on the class path (no such class)");
    } catch (NoSuchMethodException | IllegalAccessException | InstantiationException e) {
      throw new ConfigException(PARTITIONER + "=" + className
          + ": the class needs a public no-argument constructor (" + e + ")");
    } catch (InvocationTargetException e) {
      throw new ConfigException(PARTITIONER + "=" + className + ": its constructor failed: "
          + e.getCause());
    }
  }

  /** Collects settings; {@link #build} validates them all. Not thread-safe. */
  public static final class Builder {
    private final Map<String, Object> values = new LinkedHashMap<>();
    private Partitioner partitioner;

    private Builder() {}

    public Builder batchMaxRecords(int records) {
      return set(BATCH_MAX_RECORDS, records);
    }

    public Builder batchMaxBytes(int bytes) {
      return set(BATCH_MAX_BYTES, bytes);
    }

    public Builder lingerMs(long ms) {
      return set(LINGER_MS, ms);
    }

    public Builder compressionType(CompressionType type) {
      return set(COMPRESSION_TYPE, Objects.requireNonNull(type, "type").name());
    }

    public Builder bufferMemoryBytes(long bytes) {
      return set(BUFFER_MEMORY_BYTES, bytes);
    }

    public Builder maxBlockMs(long ms) {
      return set(MAX_BLOCK_MS, ms);
    }

    public Builder deliveryTimeoutMs(long ms) {
      return set(DELIVERY_TIMEOUT_MS, ms);
    }

    public Builder retries(int retries) {
      return set(RETRIES, retries);
    }

    public Builder enableIdempotence(boolean enable) {
      return set(ENABLE_IDEMPOTENCE, enable);
    }

    public Builder retryBackoffMs(long ms) {
      return set(RETRY_BACKOFF_MS, ms);
    }

    public Builder retryBackoffMaxMs(long ms) {
      return set(RETRY_BACKOFF_MAX_MS, ms);
    }

    public Builder maxInFlightRequests(int requests) {
      return set(MAX_IN_FLIGHT_REQUESTS, requests);
    }

    public Builder metadataRefreshIntervalMs(long ms) {
      return set(METADATA_REFRESH_INTERVAL_MS, ms);
    }

    /** {@link #PARTITIONER_KEY_HASH}, {@link #PARTITIONER_ROUND_ROBIN} or a class name. */
    public Builder partitioner(String name) {
      this.partitioner = null;
      return set(PARTITIONER, name);
    }

    /** Uses this instance (shared, so thread-safe) instead of the {@link #PARTITIONER} key. */
    public Builder partitioner(Partitioner instance) {
      this.partitioner = Objects.requireNonNull(instance, "instance");
      return set(PARTITIONER, instance.getClass().getName());
    }

    /**
     * Validates every setting against {@link #DEFINITION}, and that
     * {@code retry.backoff.max.ms >= retry.backoff.ms}; a partitioner class name is loaded here.
     *
     * @throws ConfigException naming every invalid setting
     */
    public ProducerConfig build() {
      Map<String, Object> resolved = new LinkedHashMap<>();
      List<String> errors = new ArrayList<>();
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
      Object backoff = resolved.get(RETRY_BACKOFF_MS);
      Object backoffMax = resolved.get(RETRY_BACKOFF_MAX_MS);
      if (backoff != null && backoffMax != null && (Long) backoffMax < (Long) backoff) {
        errors.add(RETRY_BACKOFF_MAX_MS + "=" + backoffMax + ": must be >= " + RETRY_BACKOFF_MS
            + " (" + backoff + ")");
      }
      if (!errors.isEmpty()) {
        throw new ConfigException("invalid Talos producer configuration: " + String.join("; ", errors));
      }
      ProducerConfig config = new ProducerConfig(resolved, partitioner);
      if (partitioner == null) config.newPartitioner(); // a bad class name fails here, not in send
      return config;
    }

    private Builder set(String name, Object value) {
      values.put(name, value);
      return this;
    }
  }
}
