package io.talos.client.consumer;

import java.util.Arrays;
import java.util.Objects;

/**
 * One message read from a partition.
 *
 * @param offset the message's offset in its partition
 * @param payload the message bytes; not copied, treat as read-only
 * @param createTimestampMs when the producer created it (epoch ms), or -1 for messages written
 *     in the old version 1 format, which has no timestamp
 * @param appendTimestampMs when the server stored it (epoch ms), or -1 if the server did not say
 * @param sequenceNumber the producer's sequence number of the message, or null
 */
public record ConsumedMessage(long offset, byte[] payload, long createTimestampMs,
    long appendTimestampMs, String sequenceNumber) {

  public ConsumedMessage {
    Objects.requireNonNull(payload, "payload");
  }

  /** Compares payloads by content. */
  @Override
  public boolean equals(Object o) {
    return o instanceof ConsumedMessage m && offset == m.offset
        && createTimestampMs == m.createTimestampMs && appendTimestampMs == m.appendTimestampMs
        && Arrays.equals(payload, m.payload) && Objects.equals(sequenceNumber, m.sequenceNumber);
  }

  @Override
  public int hashCode() {
    return Objects.hash(offset, Arrays.hashCode(payload), createTimestampMs, appendTimestampMs,
        sequenceNumber);
  }

  /** Shows the payload's length, not its bytes. */
  @Override
  public String toString() {
    return "ConsumedMessage[offset=" + offset + ", payload=" + payload.length + " bytes, created="
        + createTimestampMs + ", appended=" + appendTimestampMs
        + (sequenceNumber == null ? "" : ", sequenceNumber=" + sequenceNumber) + "]";
  }
}
