package io.talos.client.codec;

import io.talos.client.TalosException;

/**
 * A message block's payload does not hold the messages its header announces: it does not
 * decompress, ends early, or has a message of an unknown serialization version. Fetching the
 * same block again gives the same bytes, so this is not retriable.
 */
public final class CorruptMessageBlockException extends TalosException {
  private static final long serialVersionUID = 1L;

  public CorruptMessageBlockException(String message, Throwable cause) {
    super(null, 0, false, message, cause);
  }
}
