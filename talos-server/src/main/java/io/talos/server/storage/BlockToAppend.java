package io.talos.server.storage;

/**
 * A block as a producer sent it, before the log assigns its offset and append time.
 *
 * @param messageBlockSize the client's declared uncompressed size, or -1
 * @param createTimestampMs the client's create time, or -1
 */
public record BlockToAppend(int messageCount, int compressionType, int messageBlockSize,
    long createTimestampMs, byte[] payload) {}
