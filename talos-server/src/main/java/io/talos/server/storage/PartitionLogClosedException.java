package io.talos.server.storage;

import java.io.IOException;

/**
 * The partition log was closed (idle, over {@code storage.open.logs.max}, released to another
 * node, deleted, or the server is stopping) before the call touched it: nothing was read or
 * written. The caller may open the partition's log again and repeat the call there.
 */
public class PartitionLogClosedException extends IOException {
  public PartitionLogClosedException(String message) {
    super(message);
  }
}
