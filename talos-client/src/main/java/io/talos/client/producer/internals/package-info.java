/**
 * Machinery of {@link io.talos.client.producer.TalosProducer}, not part of the API: the memory
 * bound ({@link io.talos.client.producer.internals.BufferMemory}), the per-partition batch queues
 * ({@link io.talos.client.producer.internals.RecordAccumulator}), the thread that sends them
 * ({@link io.talos.client.producer.internals.Sender}) and the metrics. May change without notice.
 */
package io.talos.client.producer.internals;
