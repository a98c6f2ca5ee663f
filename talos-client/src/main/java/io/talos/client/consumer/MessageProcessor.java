package io.talos.client.consumer;

import java.util.List;

/**
 * Processes the messages of one partition for a {@link TalosConsumer}, like the SDK 2.0.2's
 * {@code MessageProcessor}: the consumer makes one instance per partition it takes over (from
 * its {@link MessageProcessorFactory}), calls {@link #init} once, {@link #process} for each batch
 * in offset order, and {@link #shutdown} once when it gives the partition up (rebalance, lost
 * lock, close).
 *
 * <p>All calls for one partition come one after the other (never concurrently), though not
 * always on the same thread; different partitions are processed in parallel. A batch is
 * delivered again (at least once) when {@code process} throws: the consumer logs the exception,
 * waits {@code fetch.backoff.ms} and hands the same messages again.
 */
public interface MessageProcessor {
  /**
   * @param partition the partition this instance serves
   * @param startOffset the offset of the first message it will see
   */
  void init(int partition, long startOffset);

  /**
   * @param messages one or more messages, in offset order, following the previous batch
   * @param checkpointer commits this partition's progress (needed when auto-commit is off)
   */
  void process(List<ConsumedMessage> messages, MessageCheckpointer checkpointer);

  /**
   * The partition is given up. With auto-commit, progress is committed after this returns (if
   * the lock is still held); a processor that commits itself may call the checkpointer here.
   */
  default void shutdown(MessageCheckpointer checkpointer) {}
}
