package io.talos.server.storage;

import java.io.IOException;

/**
 * Another server took over the partition: it claimed a newer owner epoch (see {@link
 * PartitionOwnership}). The log that throws this never acknowledges another append and serves no more
 * reads; the caller should tell its client to retry elsewhere. Nothing of the append that found
 * out was acknowledged.
 */
public class PartitionFencedException extends IOException {
  public PartitionFencedException(String message) {
    super(message);
  }
}
