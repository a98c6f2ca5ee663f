package io.talos.client.producer;

import java.util.Objects;

/**
 * A message for {@link TalosProducer#send}.
 *
 * @param key the partition key, or null. A record with a key goes to the partition its key hashes
 *     to (see {@link KeyHashPartitioner}), so records with the same key keep their order. The key
 *     chooses the partition only; it is not stored with the message.
 * @param value the payload, 1 byte to the client's {@code maxMessageBytes}. {@code send} copies
 *     it, so the caller may reuse the array once {@code send} returns.
 * @param partition the partition to write to, or null to let the producer's {@link Partitioner}
 *     choose; overrides the key
 * @param sequenceNumber the application's own id for the message (1 to 256 characters), stored
 *     with it and returned to consumers; null for none
 * @param createTimestampMs the message's creation time, epoch ms; {@link #NOW} for the time of
 *     {@code send}
 */
public record ProducerRecord(String key, byte[] value, Integer partition, String sequenceNumber,
    long createTimestampMs) {
  /** {@code createTimestampMs} value meaning "when it is sent". */
  public static final long NOW = Long.MIN_VALUE;

  public ProducerRecord {
    Objects.requireNonNull(value, "value");
    if (partition != null && partition < 0) {
      throw new IllegalArgumentException("partition must be >= 0, got " + partition);
    }
  }

  /** A keyless record; the partitioner chooses its partition. */
  public static ProducerRecord of(byte[] value) {
    return new ProducerRecord(null, value, null, null, NOW);
  }

  /** A record routed by its key. */
  public static ProducerRecord of(String key, byte[] value) {
    return new ProducerRecord(key, value, null, null, NOW);
  }

  /** A record for one given partition. */
  public static ProducerRecord toPartition(int partition, byte[] value) {
    return new ProducerRecord(null, value, partition, null, NOW);
  }

  /** Shows the value's length, not its bytes. */
  @Override
  public String toString() {
    return "ProducerRecord[" + (key == null ? "" : "key=" + key + ", ")
        + "value=" + value.length + " bytes"
        + (partition == null ? "" : ", partition=" + partition)
        + (sequenceNumber == null ? "" : ", sequenceNumber=" + sequenceNumber)
        + (createTimestampMs == NOW ? "" : ", created=" + createTimestampMs) + "]";
  }
}
