package io.talos.client.producer;

/**
 * Told the outcome of one {@link TalosProducer#send}. Runs on one of the producer's I/O threads,
 * for the records of one partition in the order they were sent: keep it short and never block in
 * it (in particular, do not call {@link TalosProducer#flush} from it). An exception it throws is
 * logged and otherwise ignored.
 */
@FunctionalInterface
public interface Callback {
  /**
   * @param metadata where the record was stored, or null when it failed
   * @param exception null on success; else why the record was not stored: a
   *     {@link io.talos.client.TalosException} (its {@code errorCode()} is the server's wire code
   *     when the server refused the record), a {@link DeliveryTimeoutException} when retrying
   *     ran out of {@code delivery.timeout.ms}, or a {@link ProducerClosedException}
   */
  void onCompletion(RecordMetadata metadata, Exception exception);
}
