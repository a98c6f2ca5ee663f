package io.talos.client.admin;

/**
 * One partition of a consumer group, as {@link ConsumerGroupAdmin#describe} reports it.
 *
 * @param partitionId the partition
 * @param owner the worker holding a live lock on it, or null
 * @param committedOffset the group's committed offset (its last finished message), or -1
 * @param endOffset the partition's newest offset (inclusive), or -1 when it could not be read
 * @param lag messages after the committed one: {@code endOffset - max(committedOffset,
 *     startOffset - 1)}, never negative
 */
public record GroupPartitionState(int partitionId, String owner, long committedOffset,
    long endOffset, long lag) {}
