package io.talos.server.storage;

import java.io.IOException;

/**
 * Where each partition's next offset is recorded outside its log directory (the metadata store),
 * so that a log whose files are gone is noticed instead of silently restarting at offset 0: a log
 * never hands out an offset below the recorded one (see {@link PartitionDataMissingException}).
 * The record is raised when the log opens, when a segment rolls (stored soon after, see {@link
 * #raiseNextOffsetSoon}) and at a clean close, so it may lag the log's end offset (by the active
 * segment, and by a roll not stored yet) but never exceeds it while the data is intact. Thread-safe.
 */
public interface NextOffsetStore {
  /** Records nothing and knows nothing: every log may start at offset 0 (tests, tools). */
  NextOffsetStore NONE = new NextOffsetStore() {
    @Override
    public long nextOffset(String topicResourceName, int partitionId) {
      return 0;
    }

    @Override
    public void raiseNextOffset(String topicResourceName, int partitionId, long nextOffset) {}
  };

  /** The recorded next offset of the partition, 0 if none was recorded. */
  long nextOffset(String topicResourceName, int partitionId) throws IOException;

  /** Raises the recorded next offset to {@code nextOffset}; a lower value leaves it unchanged. */
  void raiseNextOffset(String topicResourceName, int partitionId, long nextOffset) throws IOException;

  /**
   * Raises the recorded next offset like {@link #raiseNextOffset}, but may return before it is
   * stored (see {@link DeferredNextOffsets}): for a caller that must not wait for the store, such
   * as a segment roll on a put's thread. {@link #nextOffset} answers the raised value at once.
   * By default the raise is stored before this returns.
   */
  default void raiseNextOffsetSoon(String topicResourceName, int partitionId, long nextOffset) throws IOException {
    raiseNextOffset(topicResourceName, partitionId, nextOffset);
  }
}
