/**
 * Request scheduling: the task pool that runs puts, gets and admin work off the Jetty threads.
 *
 * <p>A Jetty thread parses and authenticates a request, wraps the rest of the work in a {@link
 * io.talos.server.scheduling.Task} and {@link io.talos.server.scheduling.TaskPool#submit submits}
 * it; the submit answers at once with an {@link io.talos.server.scheduling.Admission} and the
 * Jetty thread is free again. The task answers its request itself when it runs, expires or
 * fails. Nothing here knows Thrift, HTTP or storage.
 *
 * <pre>
 *  Jetty threads            TaskPool                                  Workers (1 thread each)
 *  -------------            --------                                  -----------------------
 *  submit(task) --+--> closed? -> REJECTED_CLOSED
 *                 +--> waiting == maxWaitingTasks? -> REJECTED_FULL
 *                 +--> key table: key -> (worker, waiting+running)
 *                        key present  -> that worker (affinity)
 *                        key absent   -> WorkerSelector.select()     worker 0: [prio 0][prio 1][prio 2]
 *                      enqueue on the worker's queue of the task's   worker 1: [prio 0][prio 1][prio 2]
 *                      priority class -> ACCEPTED                    ...
 *
 *  Worker.runOnce(): head of the next non-empty queue, classes in turn (FIFO within a class;
 *                   the highest class first after the queues were empty)
 *     deadline passed          -> task.expire()                 (never runs)
 *     MergeableTask            -> + the next same-key mergeable tasks of that queue,
 *                                 bounded by maxBatchCount / maxBatchBytes -> runBatch(batch)
 *     otherwise                -> task.run()
 *     run/runBatch threw       -> fail(e) on each task of that run only; the worker goes on
 *  then the key table entry of the key is decremented (removed at zero: the key is free to move)
 * </pre>
 *
 * <p>Ordering: while a key has a task waiting or running, every new task of that key goes to the
 * same worker, so tasks of one key never run concurrently, and tasks of one key and one priority
 * class run in submission order. Tasks of one key in different priority classes are served with
 * their classes in turn, not by submission order.
 */
package io.talos.server.scheduling;
