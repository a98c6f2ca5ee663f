package io.talos.client.producer;

import java.util.Objects;

/**
 * A message to put, with the optional fields the wire format carries.
 *
 * @param payload 1 byte to {@code maxMessageBytes} (at most 10 MiB); not copied until sent
 * @param sequenceNumber the application's own id for the message (1 to 256 characters), stored
 *     with it and returned to consumers; null for none
 * @param createTimestampMs the message's creation time, epoch ms; {@link #NOW} to use the time
 *     of the put
 */
public record ProducerMessage(byte[] payload, String sequenceNumber, long createTimestampMs) {
  /** {@code createTimestampMs} value meaning "when it is put". */
  public static final long NOW = Long.MIN_VALUE;

  public ProducerMessage {
    Objects.requireNonNull(payload, "payload");
  }

  /** A message created when it is put, without a sequence number. */
  public static ProducerMessage of(byte[] payload) {
    return new ProducerMessage(payload, null, NOW);
  }

  /** A message created when it is put, with a sequence number. */
  public static ProducerMessage of(byte[] payload, String sequenceNumber) {
    return new ProducerMessage(payload, sequenceNumber, NOW);
  }

  /** Shows the payload's length, not its bytes. */
  @Override
  public String toString() {
    return "ProducerMessage[payload=" + payload.length + " bytes"
        + (sequenceNumber == null ? "" : ", sequenceNumber=" + sequenceNumber)
        + (createTimestampMs == NOW ? "" : ", created=" + createTimestampMs) + "]";
  }
}
