package io.talos.client;

import io.talos.client.admin.ConsumerGroupAdmin;
import io.talos.client.admin.TalosAdmin;
import io.talos.client.admin.TopicDescription;
import io.talos.client.consumer.ConsumerConfig;
import io.talos.client.consumer.MessageProcessorFactory;
import io.talos.client.consumer.SimpleConsumer;
import io.talos.client.consumer.TalosConsumer;
import io.talos.client.internals.TalosRpc;
import io.talos.client.producer.ProducerConfig;
import io.talos.client.producer.SimpleProducer;
import io.talos.client.producer.TalosProducer;
import io.talos.thrift.ErrorCode;
import java.util.Objects;

/**
 * The entry point: one connection pool to a Talos server, shared by the admin, producers and
 * consumers made from it.
 *
 * <pre>{@code
 * TalosClientConfig config = TalosClientConfig.builder()
 *     .endpoint("http://127.0.0.1:8080")
 *     .credentialFile(Path.of("data/admin-credential.properties"))
 *     .build();
 * try (TalosClient client = TalosClient.create(config)) {
 *   client.admin().createTopic("orders", 4);
 *   SimpleProducer producer = client.producer("orders", 0);
 *   producer.put(List.of("hello".getBytes(UTF_8)));
 *   List<ConsumedMessage> got = client.consumer("orders", 0).fetch(SimpleConsumer.START_OFFSET, 100);
 * }
 * }</pre>
 *
 * <p>Thread-safe, and so is everything made from it. Closing the client makes every later call
 * through it or its producers, consumers and admin fail with {@link IllegalStateException}.
 */
public final class TalosClient implements AutoCloseable {
  private final TalosRpc rpc;
  private final TalosAdmin admin;
  private final ConsumerGroupAdmin groups;

  private TalosClient(TalosRpc rpc) {
    this.rpc = rpc;
    this.admin = new TalosAdmin(rpc);
    this.groups = new ConsumerGroupAdmin(rpc, admin);
  }

  /** Makes a client; no request is sent until the first operation. */
  public static TalosClient create(TalosClientConfig config) {
    return new TalosClient(new TalosRpc(Objects.requireNonNull(config, "config")));
  }

  public TalosClientConfig config() {
    return rpc.config();
  }

  /** Topic administration; the same instance on every call. */
  public TalosAdmin admin() {
    return admin;
  }

  /**
   * A producer for one partition. Looks the topic up once ({@code describeTopic}) to learn its
   * resource name; if the topic is later deleted and created again, make a new producer.
   *
   * @throws TalosException {@code TOPIC_NOT_EXIST}, or {@code PARTITION_NOT_EXIST} when the
   *     topic has no such partition
   */
  public SimpleProducer producer(String topicName, int partitionId) {
    TopicDescription topic = describePartition(topicName, partitionId);
    return new SimpleProducer(rpc, topic.name(), topic.resourceName(), partitionId);
  }

  /**
   * An asynchronous, batching producer for a whole topic (see {@link TalosProducer}). Looks the
   * topic up once ({@code describeTopic}) for its resource name and partition count; the count
   * is refreshed every {@code metadata.refresh.interval.ms}. Close the producer before the
   * client.
   *
   * @throws TalosException {@code TOPIC_NOT_EXIST} if there is no such topic
   * @throws io.talos.common.config.ConfigException if {@code delivery.timeout.ms} is shorter than
   *     {@code linger.ms} + {@code requestTimeoutMs}
   */
  public TalosProducer producer(String topicName, ProducerConfig config) {
    return new TalosProducer(rpc, admin.describeTopic(topicName), config);
  }

  /**
   * A consumer for one partition; looks the topic up once, like {@link #producer}.
   *
   * @throws TalosException {@code TOPIC_NOT_EXIST} or {@code PARTITION_NOT_EXIST}
   */
  public SimpleConsumer consumer(String topicName, int partitionId) {
    TopicDescription topic = describePartition(topicName, partitionId);
    return new SimpleConsumer(rpc, topic.name(), topic.resourceName(), partitionId);
  }

  /** Consumer-group inspection and offset resets; the same instance on every call. */
  public ConsumerGroupAdmin consumerGroups() {
    return groups;
  }

  /**
   * A member of consumer group {@code group} reading the whole topic, processing each partition
   * it holds with its own {@link io.talos.client.consumer.MessageProcessor} from
   * {@code factory} (see {@link TalosConsumer}). Registers with the group at once and starts
   * balancing in the background. Close the consumer before the client.
   *
   * @throws TalosException {@code TOPIC_NOT_EXIST}, or the registration's failure
   */
  public TalosConsumer consumer(String topicName, String group, ConsumerConfig config,
      MessageProcessorFactory factory) {
    return new TalosConsumer(rpc, admin, admin.describeTopic(topicName), group, config,
        Objects.requireNonNull(factory, "factory"));
  }

  /** A member of consumer group {@code group} in poll mode ({@link TalosConsumer#poll}). */
  public TalosConsumer consumer(String topicName, String group, ConsumerConfig config) {
    return new TalosConsumer(rpc, admin, admin.describeTopic(topicName), group, config, null);
  }

  /** Closes every pooled connection at once: calls in progress fail promptly, later ones throw. Idempotent. */
  @Override
  public void close() {
    rpc.close();
  }

  private TopicDescription describePartition(String topicName, int partitionId) {
    if (partitionId < 0) {
      throw new IllegalArgumentException("partition id must be >= 0, got " + partitionId);
    }
    TopicDescription topic = admin.describeTopic(topicName);
    if (partitionId >= topic.partitionCount()) {
      throw new TalosException(ErrorCode.PARTITION_NOT_EXIST, "topic '" + topicName + "' has "
          + topic.partitionCount() + " partitions (0 to " + (topic.partitionCount() - 1)
          + "); there is no partition " + partitionId);
    }
    return topic;
  }
}
