package io.talos.client.producer;

/**
 * Chooses the partition of a record that names none ({@link ProducerRecord#partition()} null).
 * Set one with {@link ProducerConfig.Builder#partitioner(Partitioner)}, or by class name in
 * {@link ProducerConfig#PARTITIONER} (a public class with a public no-argument constructor).
 *
 * <p>Must be thread-safe: {@link #partition} runs on the threads calling {@code send},
 * {@link #onBatchClosed} on those and on the producer's sender thread.
 */
public interface Partitioner {
  /**
   * @param partitionCount the topic's current partition count, at least 1; it grows when the
   *     producer learns that the topic grew
   * @return a partition from 0 to {@code partitionCount - 1}; anything else fails the record with
   *     {@link IllegalStateException}
   */
  int partition(ProducerRecord record, int partitionCount);

  /**
   * The batch being filled for {@code partition} was closed: it is full or is being sent, so
   * records appended to the partition from now on go to a new batch. Sticky partitioners move
   * on to another partition here. The default does nothing.
   */
  default void onBatchClosed(int partition, int partitionCount) {}
}
