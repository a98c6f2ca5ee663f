package io.talos.client.producer;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Spreads records over all partitions in turn (0, 1, ..., n-1, 0, ...), keyed or not: even load,
 * no per-key order. Thread-safe.
 */
public final class RoundRobinPartitioner implements Partitioner {
  private final AtomicInteger next = new AtomicInteger();

  @Override
  public int partition(ProducerRecord record, int partitionCount) {
    return Math.floorMod(next.getAndIncrement(), partitionCount);
  }
}
