package io.talos.server.storage;

import java.io.InterruptedIOException;

/**
 * A storage operation (typically opening a partition, which on hdfs may wait for lease recovery)
 * did not finish by the deadline of the request waiting for it. The operation itself goes on in
 * the background; the request may be retried.
 */
public class StorageDeadlineException extends InterruptedIOException {
  public StorageDeadlineException(String message) {
    super(message);
  }
}
