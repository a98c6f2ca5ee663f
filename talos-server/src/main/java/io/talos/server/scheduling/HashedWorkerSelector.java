package io.talos.server.scheduling;

import java.util.List;

/**
 * The 2.1.5 thread model, kept as a baseline: each key always goes to the worker its hash names,
 * whatever the load, so a busy worker keeps receiving the keys hashed to it while others idle.
 *
 * <p>Thread-safety: stateless, safe for concurrent use.
 */
public final class HashedWorkerSelector implements WorkerSelector {

  @Override
  public int select(Object key, List<Worker> workers) {
    return Math.floorMod(spread(key.hashCode()), workers.size());
  }

  /** Mixes the high bits into the low ones, as {@code HashMap} does, for poor hashCodes. */
  static int spread(int h) {
    return h ^ (h >>> 16);
  }

  @Override
  public String toString() {
    return HASHED;
  }
}
