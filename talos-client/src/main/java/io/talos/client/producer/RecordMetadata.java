package io.talos.client.producer;

/**
 * Where a record sent by {@link TalosProducer} was stored.
 *
 * @param topic the topic name
 * @param partition the partition it was stored in
 * @param offset its offset in the partition, or {@link #UNKNOWN_OFFSET} when the server does not
 *     report offsets (servers of the original Talos protocol; Talos servers do)
 * @param timestampMs the record's create timestamp as stored with it, epoch ms (the time of
 *     {@code send} unless the record gave its own)
 */
public record RecordMetadata(String topic, int partition, long offset, long timestampMs) {
  public static final long UNKNOWN_OFFSET = -1;

  public boolean hasOffset() {
    return offset != UNKNOWN_OFFSET;
  }
}
