package io.talos.client.producer;

import io.talos.client.TalosException;

/**
 * A record was not acknowledged within {@code delivery.timeout.ms} of its {@code send}: it waited
 * in the buffer, or its batch failed with retriable errors, for that long. The cause is the last
 * error of the batch, if it was sent at all. The record may still have been stored when a request
 * timed out (the server may have acted on it).
 */
public class DeliveryTimeoutException extends TalosException {
  private static final long serialVersionUID = 1L;

  public DeliveryTimeoutException(String message, Throwable lastError) {
    super(null, 0, false, message, lastError);
  }
}
