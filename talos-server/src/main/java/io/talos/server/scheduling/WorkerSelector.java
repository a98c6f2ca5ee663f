package io.talos.server.scheduling;

import java.util.List;
import java.util.Locale;

/**
 * Chooses the worker for a task whose key has no task waiting or running in the pool.
 *
 * <p>Key affinity is not the selector's business: while a key has a task waiting or running, the
 * {@link TaskPool} sends every new task of that key to the same worker whatever the selector, so
 * no selector can break the ordering guarantees. The selector is asked only when a key is free,
 * and its answer holds until the key is free again.
 *
 * <p>Thread-safety: implementations must be safe for concurrent calls from every submitting
 * thread; {@link #select} runs while the key's entry in the pool's key table is locked, so it must
 * be quick, must not block and must not call the pool.
 */
public interface WorkerSelector {

  /** Configuration name of {@link LeastLoadedWorkerSelector}. */
  String LEAST_LOADED = "least-loaded";
  /** Configuration name of {@link HashedWorkerSelector}. */
  String HASHED = "hashed";

  /**
   * @param key the task's key, never null
   * @param workers every worker of the pool, indexed by id (0 to size-1); their {@link
   *     Worker#waitingTasks()} are read live and may change during the call
   * @return the id of the chosen worker, in {@code [0, workers.size())}
   */
  int select(Object key, List<Worker> workers);

  /** The selector configured by {@code name}: {@value #LEAST_LOADED} or {@value #HASHED}. */
  static WorkerSelector named(String name) {
    switch (name.trim().toLowerCase(Locale.ROOT)) {
      case LEAST_LOADED:
        return new LeastLoadedWorkerSelector();
      case HASHED:
        return new HashedWorkerSelector();
      default:
        throw new IllegalArgumentException(
            "Unknown worker selector '" + name + "': must be " + LEAST_LOADED + " or " + HASHED);
    }
  }
}
