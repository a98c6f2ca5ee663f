package io.talos.client.consumer;

/**
 * Commits a partition's progress for the group: the committed offset is the offset of the last
 * message the group has finished (the Talos convention; reading resumes after it).
 */
public interface MessageCheckpointer {
  /**
   * Commits the last message of the batch being (or last) processed.
   *
   * @return false when the server refused because this worker no longer holds the partition
   */
  boolean checkpoint();

  /**
   * Commits {@code offset}, which must lie between the last committed offset and the last
   * message handed to the processor.
   *
   * @return false when the server refused because this worker no longer holds the partition
   * @throws IllegalArgumentException for an offset outside that range
   */
  boolean checkpoint(long offset);
}
