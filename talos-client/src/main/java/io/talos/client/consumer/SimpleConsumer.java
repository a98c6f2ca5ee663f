package io.talos.client.consumer;

import io.talos.client.TalosClient;
import io.talos.client.TalosClientConfig;
import io.talos.client.TalosException;
import io.talos.client.codec.CorruptMessageBlockException;
import io.talos.client.codec.MessageBlockDecoder;
import io.talos.client.internals.TalosRpc;
import io.talos.thrift.GetMessageRequest;
import io.talos.thrift.GetMessageResponse;
import io.talos.thrift.MessageOffset;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicTalosResourceName;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Reads messages from one partition by offset, synchronously, without consumer-group state: the
 * caller keeps its position, typically {@code lastMessage.offset() + 1}.
 *
 * <p>The server answers with whole message blocks, so the first block may begin before the
 * requested offset and the last may run past {@code maxMessages}; {@link #fetch} trims both
 * ends, so that what it returns starts at the requested offset (or later, if older messages
 * are gone) and holds at most {@code maxMessages} messages, in offset order.
 *
 * <p>Thread-safe.
 */
public final class SimpleConsumer {
  /** Requested offset meaning "the oldest retained message". */
  public static final long START_OFFSET = MessageOffset.START_OFFSET.getValue();
  /** Requested offset meaning "the newest messages", as the server defines it. */
  public static final long LATEST_OFFSET = MessageOffset.LATEST_OFFSET.getValue();
  /** {@code maxMessages} of {@link #fetch(long)}. */
  public static final int DEFAULT_MAX_MESSAGES = 1000;

  private final TalosRpc rpc;
  private final TalosClientConfig config;
  private final TopicAndPartition source;
  private final String clientId;
  private final AtomicLong nextRequest = new AtomicLong(1);

  /** For {@link TalosClient}; applications use {@link TalosClient#consumer}. */
  public SimpleConsumer(TalosRpc rpc, String topicName, String topicResourceName,
      int partitionId) {
    this.rpc = rpc;
    this.config = rpc.config();
    this.source = new TopicAndPartition(topicName, new TopicTalosResourceName(topicResourceName),
        partitionId);
    this.clientId = "talos-consumer-" + System.currentTimeMillis() + "-"
        + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16);
  }

  /** {@link #fetch(long, int)} of up to {@value #DEFAULT_MAX_MESSAGES} messages. */
  public List<ConsumedMessage> fetch(long offset) {
    return fetch(offset, DEFAULT_MAX_MESSAGES);
  }

  /**
   * Reads messages starting at {@code offset}, asking the server for at most
   * {@code maxFetchBytes} bytes.
   *
   * @param offset an offset &gt;= 0, {@link #START_OFFSET} or {@link #LATEST_OFFSET}
   * @param maxMessages at least 1
   * @return messages in offset order, the first at {@code offset} or later; empty when there is
   *     nothing at {@code offset} yet (the caller has caught up)
   * @throws IllegalArgumentException for an offset below -2 or maxMessages below 1
   * @throws TalosException e.g. {@code MESSAGE_OFFSET_OUT_OF_RANGE} for an offset that is no
   *     longer retained or not yet written, or {@link CorruptMessageBlockException}
   */
  public List<ConsumedMessage> fetch(long offset, int maxMessages) {
    return fetch(offset, maxMessages, 0).messages();
  }

  /**
   * What a {@link #fetch(long, int, long) long-poll fetch} got: the messages, and how long the
   * server held the request ({@code waitedMs}), or -1 when the server does not hold requests
   * (a server of the original protocol, or one with long poll turned off): its empty answers come
   * at once, so the caller must pause before fetching again.
   */
  public record Fetched(List<ConsumedMessage> messages, long waitedMs) {
    /** Whether the server held an empty answer for a good part of the wait asked for. */
    public boolean serverWaited(long maxWaitMs) {
      return waitedMs >= 0 && waitedMs >= maxWaitMs / 2;
    }
  }

  /**
   * As {@link #fetch(long, int)}, asking the server to hold the request up to {@code maxWaitMs}
   * when there is nothing at {@code offset} yet (long poll, a Talos server extension): the answer
   * comes as soon as a message is appended, or empty when the wait ends. The server caps the wait
   * (its {@code message.get.wait.max.ms}) and ends it before the request's deadline, so keep
   * {@code maxWaitMs} below the client's {@code requestTimeoutMs}.
   *
   * @param maxWaitMs 0 to answer at once
   */
  public Fetched fetch(long offset, int maxMessages, long maxWaitMs) {
    if (maxWaitMs < 0 || maxWaitMs > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("maxWaitMs must be between 0 and " + Integer.MAX_VALUE + ", got " + maxWaitMs);
    }
    if (offset < 0 && offset != START_OFFSET && offset != LATEST_OFFSET) {
      throw new IllegalArgumentException("offset must be >= 0, START_OFFSET (-1) or"
          + " LATEST_OFFSET (-2), got " + offset);
    }
    if (maxMessages < 1) {
      throw new IllegalArgumentException("maxMessages must be >= 1, got " + maxMessages);
    }
    GetMessageRequest request = new GetMessageRequest(source, offset,
        clientId + "#" + nextRequest.getAndIncrement())
        .setMaxGetMessageNumber(maxMessages)
        .setMaxGetMessageBytes(config.maxFetchBytes())
        .setTimeoutTimestamp(rpc.nowMs() + config.requestTimeoutMs());
    if (maxWaitMs > 0) request.setMaxWaitMs((int) maxWaitMs);
    GetMessageResponse response = rpc.message(request.getTopicAndPartition(), c -> c.getMessage(request));
    long waited = response.isSetWaitedMs() ? response.getWaitedMs() : -1;
    if (response.getMessageBlocks() == null || response.getMessageBlocks().isEmpty()) {
      return new Fetched(List.of(), waited);
    }
    List<ConsumedMessage> all = MessageBlockDecoder.decode(response.getMessageBlocks());
    int from = 0;
    if (offset >= 0) {
      while (from < all.size() && all.get(from).offset() < offset) from++;
    }
    int to = (int) Math.min(all.size(), (long) from + maxMessages);
    return new Fetched(from == 0 && to == all.size() ? all : new ArrayList<>(all.subList(from, to)), waited);
  }

  public String topicName() {
    return source.getTopicName();
  }

  public String topicResourceName() {
    return source.getTopicTalosResourceName().getTopicTalosResourceName();
  }

  public int partitionId() {
    return source.getPartitionId();
  }
}
