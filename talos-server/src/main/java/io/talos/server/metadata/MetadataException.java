package io.talos.server.metadata;

/** The backing store failed; the operation made no change. Retrying may succeed. */
public class MetadataException extends RuntimeException {
  public MetadataException(String message, Throwable cause) {
    super(message, cause);
  }
}
