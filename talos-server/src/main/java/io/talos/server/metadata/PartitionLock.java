package io.talos.server.metadata;

/**
 * A consumer-group lock on one partition: who holds it, when they last renewed it (ms of the
 * metadata store's own time, {@link MetadataStore#timeMs}), and its fencing token.
 *
 * <p>The fencing token is issued when a worker acquires the lock (it was free, expired or held by
 * another worker) and kept while the same worker renews it. Tokens of one partition lock only
 * grow, across releases too, so a smaller token than the lock's current one names a holder whose
 * lock was taken over: its offset commits are refused.
 */
public record PartitionLock(int partitionId, String workerId, long lastRenewMs, long fencingToken) {
  public boolean expired(long nowMs, long ttlMs) {
    return lastRenewMs + ttlMs <= nowMs;
  }
}
