package io.talos.server.scheduling;

import java.util.List;

/**
 * A task that may share one run with the next tasks of its key: group commit of puts, where one
 * append and one flush persist several requests.
 *
 * <p>When a worker dequeues a mergeable task (the head), it looks at the tasks of the same key
 * waiting behind it in the same priority class, in FIFO order, and takes each one that the head
 * {@link #canMergeWith accepts}, while the batch stays within {@link PoolConfig#maxBatchCount()}
 * tasks and {@link PoolConfig#maxBatchBytes()} bytes. It stops at the first task of the key that
 * cannot join, so only tasks that would be served next for that key anyway join, and no two tasks
 * of a key are reordered. Tasks of other keys are passed over, not reordered among themselves.
 * A waiting task of the key that has expired is expired on the way and does not stop the scan.
 * The head always runs, even if it alone exceeds {@code maxBatchBytes}.
 *
 * <p>The pool then calls {@link #runBatch(List)} on the head, with the head first: a batch of one
 * is a batch too, and the pool never calls {@link #run()} on a mergeable task. If {@code
 * runBatch} throws, every task of that batch, and only of that batch, gets {@link
 * #fail(Throwable)} with what it threw.
 *
 * <p>Thread-safety: as {@link Task}; {@code canMergeWith} is called on the worker thread while
 * the worker's queue is locked, so it must be quick and must not call the pool.
 *
 * @param <T> the task type that {@link #runBatch} receives: every task this one accepts in {@link
 *     #canMergeWith} must be a {@code T}
 */
public interface MergeableTask<T extends MergeableTask<T>> extends Task {

  /** The bytes this task adds to a batch (its payload), counted against {@code maxBatchBytes}. */
  long sizeBytes();

  /**
   * Whether {@code next}, a later waiting task of the same key and priority class, may join a batch
   * headed by this task (for example: both are puts). Returning true promises {@code next} is a
   * {@code T}.
   */
  boolean canMergeWith(Task next);

  /**
   * Does the work of every task of {@code batch} (this task first, then the others in submission
   * order) in one go and answers each request exactly once, for example: one append of all their
   * messages, one flush, then one acknowledgement per request with its own offsets. Anything
   * thrown fails every task of the batch.
   *
   * @param batch 1 to {@code maxBatchCount} tasks of one key; owned by the pool, valid during the
   *     call only
   */
  void runBatch(List<T> batch) throws Exception;

  /** A mergeable task runs in batches only; the pool never calls this. */
  @Override
  @SuppressWarnings("unchecked")
  default void run() throws Exception {
    runBatch(List.of((T) this));
  }
}
