/** Writing messages: {@link io.talos.client.producer.SimpleProducer}, one partition, synchronous. */
package io.talos.client.producer;
