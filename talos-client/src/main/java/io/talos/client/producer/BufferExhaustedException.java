package io.talos.client.producer;

import io.talos.client.TalosException;

/**
 * Thrown by {@link TalosProducer#send} when the records waiting to be sent already take
 * {@code buffer.memory.bytes} and not enough of them were delivered (or failed) within
 * {@code max.block.ms}. The record was not accepted. Retriable: the buffer frees as earlier
 * records complete.
 */
public class BufferExhaustedException extends TalosException {
  private static final long serialVersionUID = 1L;

  public BufferExhaustedException(String message) {
    super(null, 0, true, message, null);
  }
}
