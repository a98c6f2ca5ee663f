/**
 * Writing messages. {@link io.talos.client.producer.TalosProducer}: asynchronous, batching,
 * partitioning, retrying, one topic (configured by
 * {@link io.talos.client.producer.ProducerConfig}; see docs/clients.md).
 * {@link io.talos.client.producer.SimpleProducer}: one partition, synchronous, one request per
 * call.
 */
package io.talos.client.producer;
