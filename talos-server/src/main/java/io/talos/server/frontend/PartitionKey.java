package io.talos.server.frontend;

/**
 * The scheduling key of a put or get: the partition as the request names it. Computed on the
 * Jetty thread without a metadata lookup; all tasks of one partition go to one pool worker, in
 * order.
 */
record PartitionKey(String topicName, int partitionId) {}
