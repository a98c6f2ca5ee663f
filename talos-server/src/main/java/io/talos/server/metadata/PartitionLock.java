package io.talos.server.metadata;

/** A consumer-group lock on one partition: who holds it and when they last renewed it (ms). */
public record PartitionLock(int partitionId, String workerId, long lastRenewMs) {
  public boolean expired(long nowMs, long ttlMs) {
    return lastRenewMs + ttlMs <= nowMs;
  }
}
