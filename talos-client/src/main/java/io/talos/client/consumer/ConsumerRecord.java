package io.talos.client.consumer;

import java.util.Objects;

/**
 * A message returned by {@link TalosConsumer#poll}, with the partition it came from.
 *
 * @param partition the partition
 * @param message the message (offset, payload, timestamps, sequence number)
 */
public record ConsumerRecord(int partition, ConsumedMessage message) {
  public ConsumerRecord {
    Objects.requireNonNull(message, "message");
  }

  public long offset() {
    return message.offset();
  }

  /** Not copied; treat as read-only. */
  public byte[] payload() {
    return message.payload();
  }
}
