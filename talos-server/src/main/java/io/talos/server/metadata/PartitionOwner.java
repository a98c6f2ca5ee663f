package io.talos.server.metadata;

/**
 * Who owns one partition and under which epoch: the fencing token of partition ownership,
 * raised by {@link MetadataStore#bumpPartitionEpoch}.
 */
public record PartitionOwner(int partitionId, String ownerId, long epoch) {}
