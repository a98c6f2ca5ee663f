/**
 * Machinery of {@link io.talos.client.consumer.TalosConsumer}, not part of the API: the SDK's
 * balancing rule ({@link io.talos.client.consumer.internals.GroupBalancer}), the per-partition
 * reading loop ({@link io.talos.client.consumer.internals.PartitionReader}) and the metrics. May
 * change without notice.
 */
package io.talos.client.consumer.internals;
