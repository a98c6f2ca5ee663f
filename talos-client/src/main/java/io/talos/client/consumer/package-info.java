/** Reading messages: {@link io.talos.client.consumer.SimpleConsumer}, one partition, by offset. */
package io.talos.client.consumer;
