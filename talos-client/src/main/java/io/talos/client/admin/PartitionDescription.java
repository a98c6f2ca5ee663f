package io.talos.client.admin;

/**
 * The state of one partition, as part of a {@link TopicDescription}.
 *
 * @param startOffset offset of the oldest retained message
 * @param endOffset offset of the newest message, inclusive, as Talos servers report it; an empty
 *     partition has {@code endOffset = startOffset - 1}
 * @param messageCount messages currently retained
 * @param messageBytes bytes currently retained
 */
public record PartitionDescription(int partitionId, long startOffset, long endOffset,
    long messageCount, long messageBytes) {}
