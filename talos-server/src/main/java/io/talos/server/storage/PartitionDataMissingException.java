package io.talos.server.storage;

import java.io.IOException;

/**
 * The partition's log ends below the next offset recorded for it in the metadata store: its
 * directory is missing or was emptied, or segments holding handed-out offsets are gone. Not
 * retriable: the partition stays unavailable (and never hands out an offset below the recorded
 * one) until the data is restored or an operator resets the partition, accepting the loss.
 */
public final class PartitionDataMissingException extends IOException {
  public PartitionDataMissingException(String message) {
    super(message);
  }
}
