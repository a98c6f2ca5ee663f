package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.xiaomi.infra.galaxy.rpc.thrift.Credential;
import com.xiaomi.infra.galaxy.rpc.thrift.UserType;
import com.xiaomi.infra.galaxy.talos.admin.TalosAdmin;
import com.xiaomi.infra.galaxy.talos.client.SimpleTopicAbnormalCallback;
import com.xiaomi.infra.galaxy.talos.client.TalosClientConfig;
import com.xiaomi.infra.galaxy.talos.consumer.MessageCheckpointer;
import com.xiaomi.infra.galaxy.talos.consumer.MessageProcessor;
import com.xiaomi.infra.galaxy.talos.consumer.SimpleConsumer;
import com.xiaomi.infra.galaxy.talos.consumer.TalosConsumer;
import com.xiaomi.infra.galaxy.talos.consumer.TalosConsumerConfig;
import com.xiaomi.infra.galaxy.talos.producer.SimplePartitioner;
import com.xiaomi.infra.galaxy.talos.producer.SimpleProducer;
import com.xiaomi.infra.galaxy.talos.producer.TalosProducer;
import com.xiaomi.infra.galaxy.talos.producer.TalosProducerConfig;
import com.xiaomi.infra.galaxy.talos.producer.UserMessageCallback;
import com.xiaomi.infra.galaxy.talos.producer.UserMessageResult;
import com.xiaomi.infra.galaxy.talos.thrift.CreateTopicRequest;
import com.xiaomi.infra.galaxy.talos.thrift.DeleteTopicRequest;
import com.xiaomi.infra.galaxy.talos.thrift.DescribeTopicRequest;
import com.xiaomi.infra.galaxy.talos.thrift.ErrorCode;
import com.xiaomi.infra.galaxy.talos.thrift.GalaxyTalosException;
import com.xiaomi.infra.galaxy.talos.thrift.GetPartitionOffsetRequest;
import com.xiaomi.infra.galaxy.talos.thrift.GetTopicOffsetRequest;
import com.xiaomi.infra.galaxy.talos.thrift.Message;
import com.xiaomi.infra.galaxy.talos.thrift.MessageAndOffset;
import com.xiaomi.infra.galaxy.talos.thrift.OffsetInfo;
import com.xiaomi.infra.galaxy.talos.thrift.Topic;
import com.xiaomi.infra.galaxy.talos.thrift.TopicAndPartition;
import com.xiaomi.infra.galaxy.talos.thrift.TopicAttribute;
import com.xiaomi.infra.galaxy.talos.thrift.TopicInfo;
import com.xiaomi.infra.galaxy.talos.thrift.TopicTalosResourceName;
import io.talos.server.metadata.PartitionLock;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The unmodified public Talos SDK 2.0.2 against a real server over HTTP: admin, SimpleProducer,
 * SimpleConsumer, offsets, TalosProducer and a TalosConsumer group of two workers.
 */
class OfficialSdkEndToEndTest {
  @TempDir
  static Path dataDir;

  static TalosServer server;
  static Properties clientProps;
  static Credential credential;
  static TalosAdmin admin;

  @BeforeAll
  static void start() throws Exception {
    server = TestServers.start(dataDir);
    clientProps = new Properties();
    clientProps.setProperty("galaxy.talos.service.endpoint", server.endpoint().toString());
    credential = new Credential().setType(UserType.APP_SECRET)
        .setSecretKeyId(server.adminCredential().secretKeyId())
        .setSecretKey(server.adminCredential().secretKey());
    admin = new TalosAdmin(new TalosClientConfig(clientProps), credential);
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private static TopicTalosResourceName create(String name, int partitions) throws Exception {
    TopicInfo info = admin.createTopic(new CreateTopicRequest(name,
        new TopicAttribute().setPartitionNumber(partitions).setMessageRetentionSecs(3600))).getTopicInfo();
    assertEquals(name, info.getTopicName());
    return info.getTopicTalosResourceName();
  }

  private static Message message(String text) {
    return new Message(ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)));
  }

  private static String text(MessageAndOffset m) {
    return new String(m.getMessage().getMessage(), StandardCharsets.UTF_8);
  }

  @Test
  void adminCreatesDescribesListsAndDeletesTopics() throws Exception {
    TopicTalosResourceName rn = create("sdk-admin", 3);
    Topic topic = admin.describeTopic(new DescribeTopicRequest("sdk-admin"));
    assertEquals(rn, topic.getTopicInfo().getTopicTalosResourceName());
    assertEquals(3, topic.getTopicAttribute().getPartitionNumber());
    assertEquals(3, topic.getTopicState().getPartitionStatesSize());
    assertTrue(admin.listTopic().stream().anyMatch(t -> t.getTopicName().equals("sdk-admin")));

    GalaxyTalosException exists = assertThrows(GalaxyTalosException.class, () -> create("sdk-admin", 1));
    assertEquals(ErrorCode.TOPIC_EXIST, exists.getErrorCode());

    admin.deleteTopic(new DeleteTopicRequest(rn));
    GalaxyTalosException gone = assertThrows(GalaxyTalosException.class,
        () -> admin.describeTopic(new DescribeTopicRequest("sdk-admin")));
    assertEquals(ErrorCode.TOPIC_NOT_EXIST, gone.getErrorCode());
  }

  @Test
  void badTopicParametersGetTheSdkErrorCodes() {
    GalaxyTalosException zero = assertThrows(GalaxyTalosException.class, () -> create("sdk-zero", 0));
    assertEquals(ErrorCode.INVALID_TOPIC_PARAMS, zero.getErrorCode());
    assertTrue(zero.getErrMsg().contains("partition count 0"), zero.getErrMsg());
    GalaxyTalosException many = assertThrows(GalaxyTalosException.class, () -> create("sdk-many", 100_000));
    assertEquals(ErrorCode.INVALID_TOPIC_PARAMS, many.getErrorCode());
  }

  @Test
  void simpleProducerAndSimpleConsumerRoundTripWithEveryCompression() throws Exception {
    TopicTalosResourceName rn = create("sdk-simple", 2);
    TopicAndPartition tp = new TopicAndPartition("sdk-simple", rn, 1);
    int expected = 0;
    for (String compression : List.of("NONE", "SNAPPY", "GZIP")) {
      Properties p = new Properties();
      p.putAll(clientProps);
      p.setProperty("galaxy.talos.producer.compression.type", compression);
      SimpleProducer producer = new SimpleProducer(new TalosProducerConfig(p), tp, credential);
      List<Message> batch = new ArrayList<>();
      for (int i = 0; i < 50; i++) batch.add(message(compression + "-" + i));
      producer.putMessageList(batch);
      expected += 50;
    }
    SimpleConsumer consumer = new SimpleConsumer(new TalosConsumerConfig(clientProps), tp, credential);
    List<String> got = new ArrayList<>();
    long offset = 0;
    while (got.size() < expected) {
      List<MessageAndOffset> page = consumer.fetchMessage(offset, 40);
      assertFalse(page.isEmpty(), "no messages at offset " + offset);
      for (MessageAndOffset m : page) {
        assertEquals(offset, m.getMessageOffset());
        got.add(text(m));
        offset++;
      }
    }
    assertEquals("NONE-0", got.get(0));
    assertEquals("SNAPPY-0", got.get(50));
    assertEquals("GZIP-49", got.get(149));
    // Reading from the middle of a block trims the block's head.
    assertEquals("SNAPPY-7", text(consumer.fetchMessage(57, 1).get(0)));
    // Caught up: nothing, no error.
    assertTrue(consumer.fetchMessage(expected, 10).isEmpty());

    OffsetInfo partitionOffset = admin.getPartitionOffset(new GetPartitionOffsetRequest(tp));
    assertEquals(0, partitionOffset.getStartOffset());
    assertEquals(expected - 1, partitionOffset.getEndOffset());
    List<OffsetInfo> topicOffsets = admin.getTopicOffset(new GetTopicOffsetRequest(rn));
    assertEquals(2, topicOffsets.size());
    assertEquals(-1, topicOffsets.get(0).getEndOffset(), "empty partition 0");
    assertEquals(expected - 1, topicOffsets.get(1).getEndOffset());

    long beyond = expected + 5;
    GalaxyTalosException outOfRange = assertThrows(GalaxyTalosException.class,
        () -> consumer.fetchMessage(beyond, 10));
    assertEquals(ErrorCode.MESSAGE_OFFSET_OUT_OF_RANGE, outOfRange.getErrorCode());
  }

  @Test
  void talosProducerAndAConsumerGroupOfTwoWorkersDeliverEveryMessageInOrder() throws Exception {
    int partitions = 4;
    int total = 4000;
    TopicTalosResourceName rn = create("sdk-group", partitions);
    String group = "group1";

    // partition → offset → payload, and which worker consumed each partition
    Map<Integer, ConcurrentSkipListMap<Long, String>> consumed = new ConcurrentHashMap<>();
    Map<Integer, Set<String>> consumersOfPartition = new ConcurrentHashMap<>();
    AtomicInteger workerIds = new AtomicInteger();
    List<TalosConsumer> workers = new ArrayList<>();
    for (int w = 0; w < 2; w++) {
      String worker = "worker-" + workerIds.incrementAndGet();
      workers.add(new TalosConsumer(group, new TalosConsumerConfig(clientProps), credential, rn,
          () -> new MessageProcessor() {
            private int partition;

            @Override
            public void init(TopicAndPartition tp, long startOffset) {
              partition = tp.getPartitionId();
            }

            @Override
            public void process(List<MessageAndOffset> messages, MessageCheckpointer checkpointer) {
              for (MessageAndOffset m : messages) {
                // Redelivery after a hand-over is allowed (at least once): keyed by offset.
                consumed.computeIfAbsent(partition, k -> new ConcurrentSkipListMap<>()).put(m.getMessageOffset(), text(m));
                consumersOfPartition.computeIfAbsent(partition, k -> ConcurrentHashMap.newKeySet()).add(worker);
              }
            }

            @Override
            public void shutdown(MessageCheckpointer checkpointer) {}
          }, new SimpleTopicAbnormalCallback()));
    }
    try {
      // The SDK balances every 10 s: wait until the two workers hold two partitions each.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
      while (!balanced(rn, group, partitions)) {
        assertTrue(System.nanoTime() < deadline, "workers did not split the partitions: "
            + server.metadata().partitionLocks(group, rn.getTopicTalosResourceName()));
        Thread.sleep(200);
      }

      AtomicInteger acked = new AtomicInteger();
      AtomicInteger failed = new AtomicInteger();
      Map<Integer, List<String>> sent = new TreeMap<>();
      TalosProducer producer = new TalosProducer(new TalosProducerConfig(clientProps), credential, rn,
          new SimpleTopicAbnormalCallback(), new UserMessageCallback() {
            @Override
            public void onSuccess(UserMessageResult result) {
              acked.addAndGet(result.getMessageList().size());
            }

            @Override
            public void onError(UserMessageResult result) {
              failed.addAndGet(result.getMessageList().size());
            }
          });
      // Each payload names its key and its sequence number within the key.
      // One key per partition, found with the SDK's own partitioner, so every partition gets data.
      SimplePartitioner partitioner = new SimplePartitioner();
      String[] keyOf = new String[partitions];
      for (int j = 0, found = 0; found < partitions; j++) {
        int target = partitioner.partition("key" + j, partitions);
        if (keyOf[target] == null) {
          keyOf[target] = "key" + j;
          found++;
        }
      }
      Map<Integer, AtomicInteger> seq = new TreeMap<>();
      for (int i = 0; i < total; i++) {
        int p = i % partitions;
        int s = seq.computeIfAbsent(p, k -> new AtomicInteger()).getAndIncrement();
        String payload = p + "-" + s;
        Message m = message(payload).setPartitionKey(keyOf[p]);
        sent.computeIfAbsent(p, k -> new ArrayList<>()).add(payload);
        producer.addUserMessage(List.of(m));
      }
      producer.shutdown();
      long ackDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (acked.get() + failed.get() < total && System.nanoTime() < ackDeadline) Thread.sleep(50);
      assertEquals(0, failed.get(), "producer errors");
      assertEquals(total, acked.get());

      long consumeDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (consumedCount(consumed) < total && System.nanoTime() < consumeDeadline) Thread.sleep(100);
      assertEquals(total, consumedCount(consumed), "messages consumed");
      // Each key routes to one partition; in offset order, each key's payloads are its send order.
      Map<Integer, List<String>> receivedByKey = new TreeMap<>();
      consumed.forEach((partition, byOffset) -> byOffset.values().forEach(payload ->
          receivedByKey.computeIfAbsent(Integer.parseInt(payload.split("-")[0]), k -> new ArrayList<>()).add(payload)));
      assertEquals(sent, receivedByKey);
      Set<String> allWorkers = ConcurrentHashMap.newKeySet();
      consumersOfPartition.values().forEach(allWorkers::addAll);
      assertEquals(2, allWorkers.size(), "both workers consumed: " + consumersOfPartition);
    } finally {
      workers.forEach(TalosConsumer::shutDown);
    }
  }

  private static boolean balanced(TopicTalosResourceName rn, String group, int partitions) {
    Map<Integer, PartitionLock> locks = server.metadata().partitionLocks(group, rn.getTopicTalosResourceName());
    if (locks.size() != partitions) return false;
    Map<String, Integer> perWorker = new TreeMap<>();
    locks.values().forEach(l -> perWorker.merge(l.workerId(), 1, Integer::sum));
    return perWorker.size() == 2 && perWorker.values().stream().allMatch(c -> c == partitions / 2);
  }

  private static int consumedCount(Map<Integer, ConcurrentSkipListMap<Long, String>> consumed) {
    return consumed.values().stream().mapToInt(Map::size).sum();
  }
}
