package io.talos.server.scheduling;

import java.util.List;

/**
 * The 2.1.6 thread model: a free key goes to the worker with the least load, ties to the lowest
 * worker id, where a worker's load is its waiting tasks plus one while it runs a task. With the
 * pool's key affinity this gives "the worker that already has tasks of the key, otherwise the
 * least-loaded one". Work concentrates on few workers when load is light, and a key only waits
 * behind its own tasks or behind a short queue. Counting the running task keeps a new key off a
 * worker held by a long call (a stalled storage call holds its worker up to the request's
 * deadline) while another worker is idle.
 *
 * <p>Thread-safety: stateless, safe for concurrent use.
 */
public final class LeastLoadedWorkerSelector implements WorkerSelector {

  @Override
  public int select(Object key, List<Worker> workers) {
    int best = 0;
    int bestLoad = Integer.MAX_VALUE;
    for (int id = 0; id < workers.size(); id++) {
      Worker w = workers.get(id);
      int load = w.waitingTasks() + (w.isRunning() ? 1 : 0);
      if (load < bestLoad) { // strictly less: ties keep the lower id
        best = id;
        bestLoad = load;
        if (load == 0) break;
      }
    }
    return best;
  }

  @Override
  public String toString() {
    return LEAST_LOADED;
  }
}
