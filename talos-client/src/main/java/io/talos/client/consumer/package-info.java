/**
 * Reading messages: {@link io.talos.client.consumer.SimpleConsumer}, one partition, by offset;
 * {@link io.talos.client.consumer.TalosConsumer}, a consumer-group member on the Talos SDK 2.0.2's
 * group protocol, with a {@link io.talos.client.consumer.MessageProcessor} per partition or
 * {@link io.talos.client.consumer.TalosConsumer#poll}.
 */
package io.talos.client.consumer;
