package io.talos.client.producer;

import io.talos.client.TalosClient;
import io.talos.client.TalosClientConfig;
import io.talos.client.TalosException;
import io.talos.client.codec.MessageBlockEncoder;
import io.talos.client.internals.TalosRpc;
import io.talos.thrift.MessageBlock;
import io.talos.thrift.PutMessageRequest;
import io.talos.thrift.PutMessageResponse;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicTalosResourceName;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Writes messages to one partition, synchronously: {@link #put} returns once the server has
 * acknowledged storing every message of the call. When it throws, the messages may or may not
 * be stored: not when the server refused the put with an error code (e.g.
 * {@code TOPIC_NOT_EXIST}), perhaps after a timeout or a lost connection (see
 * {@link TalosException}).
 *
 * <p>One put is one request. Its messages are checked first (1 byte to
 * {@code maxMessageBytes} each, else {@link IllegalArgumentException} and nothing is sent), then
 * serialized into message blocks of about {@code maxBlockBytes} uncompressed bytes each,
 * compressed by {@code compressionType}. The request carries the sequence id
 * {@code <clientId>#<n>}, n counting from 1 per producer, and the deadline now +
 * {@code requestTimeoutMs}.
 *
 * <p>Thread-safe. Puts from several threads are independent requests: each is stored in order and
 * contiguously, but concurrent puts may be stored in either order.
 */
public final class SimpleProducer {
  private final TalosRpc rpc;
  private final TalosClientConfig config;
  private final TopicAndPartition target;
  private final String clientId;
  private final AtomicLong nextRequest = new AtomicLong(1);

  /** For {@link TalosClient}; applications use {@link TalosClient#producer}. */
  public SimpleProducer(TalosRpc rpc, String topicName, String topicResourceName,
      int partitionId) {
    this.rpc = rpc;
    this.config = rpc.config();
    this.target = new TopicAndPartition(topicName, new TopicTalosResourceName(topicResourceName),
        partitionId);
    this.clientId = "talos-producer-" + System.currentTimeMillis() + "-"
        + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16);
  }

  /**
   * Puts payloads as messages created now, without sequence numbers. An empty list sends
   * nothing.
   *
   * @throws IllegalArgumentException if a payload is empty or larger than
   *     {@code maxMessageBytes}
   * @throws TalosException if the server refuses the put or cannot be reached
   */
  public PutResult put(List<byte[]> payloads) {
    List<ProducerMessage> messages = new ArrayList<>(payloads.size());
    for (byte[] payload : payloads) messages.add(ProducerMessage.of(payload));
    return putMessages(messages);
  }

  /**
   * Puts messages. An empty list sends nothing.
   *
   * @throws IllegalArgumentException if a payload is empty or larger than
   *     {@code maxMessageBytes}, or a sequence number is empty or longer than 256 characters
   * @throws TalosException if the server refuses the put or cannot be reached
   */
  public PutResult putMessages(List<ProducerMessage> messages) {
    if (messages.isEmpty()) return new PutResult(0, 0, OptionalLong.empty());
    int maxBytes = config.maxMessageBytes();
    for (int i = 0; i < messages.size(); i++) {
      int length = Objects.requireNonNull(messages.get(i), "message " + i).payload().length;
      if (length < 1 || length > maxBytes) {
        throw new IllegalArgumentException("message " + i + " has " + length + " bytes; allowed: 1 to "
            + maxBytes + " (" + TalosClientConfig.MAX_MESSAGE_BYTES + ")");
      }
    }
    List<MessageBlock> blocks = encode(messages, rpc.nowMs());
    PutMessageRequest request = new PutMessageRequest(target, blocks, messages.size(),
        clientId + "#" + nextRequest.getAndIncrement())
        .setTimeoutTimestamp(rpc.nowMs() + config.requestTimeoutMs());
    PutMessageResponse response = rpc.message(request.getTopicAndPartition(), c -> c.putMessage(request));
    return new PutResult(messages.size(), blocks.size(), response.isSetStartMessageOffset()
        ? OptionalLong.of(response.getStartMessageOffset()) : OptionalLong.empty());
  }

  public String topicName() {
    return target.getTopicName();
  }

  public String topicResourceName() {
    return target.getTopicTalosResourceName().getTopicTalosResourceName();
  }

  public int partitionId() {
    return target.getPartitionId();
  }

  /** The prefix of this producer's request sequence ids. */
  public String clientId() {
    return clientId;
  }

  /**
   * Encodes the messages into blocks of at most {@code maxBlockBytes} serialized bytes (a message
   * larger than that alone in its block). Each block's buffer is sized exactly before its first
   * message is copied in: growing it by doubling copied and zeroed about twice the block again.
   */
  private List<MessageBlock> encode(List<ProducerMessage> messages, long nowMs) {
    int maxBlockBytes = config.maxBlockBytes();
    int n = messages.size();
    int[] sizes = new int[n];
    for (int i = 0; i < n; i++) {
      ProducerMessage m = messages.get(i);
      sizes[i] = MessageBlockEncoder.serializedSize(m.payload().length, m.sequenceNumber());
    }
    MessageBlockEncoder encoder = new MessageBlockEncoder(config.compressionType(), 1);
    List<MessageBlock> blocks = new ArrayList<>();
    for (int first = 0; first < n; ) {
      long bytes = sizes[first];
      int end = first + 1;
      while (end < n && bytes + sizes[end] <= maxBlockBytes) bytes += sizes[end++];
      encoder.growTo((int) bytes);
      for (int i = first; i < end; i++) {
        ProducerMessage m = messages.get(i);
        long created = m.createTimestampMs() == ProducerMessage.NOW ? nowMs : m.createTimestampMs();
        encoder.add(m.payload(), created, m.sequenceNumber());
      }
      blocks.add(encoder.finish());
      first = end;
    }
    return blocks;
  }
}
