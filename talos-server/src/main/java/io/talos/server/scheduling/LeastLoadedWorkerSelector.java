package io.talos.server.scheduling;

import java.util.List;

/**
 * The 2.1.6 thread model: a free key goes to the worker with the fewest waiting tasks (queue
 * length; the task a worker is running does not count), ties to the lowest worker id. With the
 * pool's key affinity this gives "the worker that already has tasks of the key, otherwise the
 * least-loaded one". Work concentrates on few workers when load is light, and a key only waits
 * behind its own tasks or behind a short queue.
 *
 * <p>Thread-safety: stateless, safe for concurrent use.
 */
public final class LeastLoadedWorkerSelector implements WorkerSelector {

  @Override
  public int select(Object key, List<Worker> workers) {
    int best = 0;
    int bestWaiting = Integer.MAX_VALUE;
    for (int id = 0; id < workers.size(); id++) {
      int waiting = workers.get(id).waitingTasks();
      if (waiting < bestWaiting) { // strictly fewer: ties keep the lower id
        best = id;
        bestWaiting = waiting;
        if (waiting == 0) break;
      }
    }
    return best;
  }

  @Override
  public String toString() {
    return LEAST_LOADED;
  }
}
