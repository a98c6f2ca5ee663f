package io.talos.server.storage;

import java.io.IOException;

/**
 * Bytes of a log segment or index that should hold a whole, valid record do not: bad magic, a
 * length out of bounds or past the end of the readable data, or a CRC32C mismatch. Thrown by reads
 * that reach acknowledged data which can no longer be decoded; recovery catches it to find where a
 * torn tail starts.
 */
public class CorruptRecordException extends IOException {
  public CorruptRecordException(String message) {
    super(message);
  }
}
