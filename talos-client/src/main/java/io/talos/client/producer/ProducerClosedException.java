package io.talos.client.producer;

import io.talos.client.TalosException;

/**
 * A record was dropped because {@link TalosProducer#close(java.time.Duration)} ran out of time
 * before it could be sent; it was not stored.
 */
public class ProducerClosedException extends TalosException {
  private static final long serialVersionUID = 1L;

  public ProducerClosedException(String message) {
    super(null, 0, false, message, null);
  }
}
