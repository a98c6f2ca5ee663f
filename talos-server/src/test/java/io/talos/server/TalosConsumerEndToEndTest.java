package io.talos.server;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.codahale.metrics.Gauge;
import com.xiaomi.infra.galaxy.rpc.thrift.Credential;
import com.xiaomi.infra.galaxy.rpc.thrift.UserType;
import com.xiaomi.infra.galaxy.talos.client.SimpleTopicAbnormalCallback;
import com.xiaomi.infra.galaxy.talos.consumer.MessageCheckpointer;
import com.xiaomi.infra.galaxy.talos.consumer.TalosConsumerConfig;
import com.xiaomi.infra.galaxy.talos.thrift.MessageAndOffset;
import com.xiaomi.infra.galaxy.talos.thrift.TopicAndPartition;
import io.talos.client.TalosClient;
import io.talos.client.TalosClientConfig;
import io.talos.client.TalosException;
import io.talos.client.admin.GroupPartitionState;
import io.talos.client.consumer.ConsumedMessage;
import io.talos.client.consumer.ConsumerConfig;
import io.talos.client.consumer.ConsumerConfig.OffsetReset;
import io.talos.client.consumer.ConsumerConfig.StartFrom;
import io.talos.client.consumer.ConsumerRecord;
import io.talos.client.consumer.MessageProcessor;
import io.talos.client.consumer.TalosConsumer;
import io.talos.client.producer.ProducerConfig;
import io.talos.client.producer.ProducerRecord;
import io.talos.client.producer.TalosProducer;
import io.talos.thrift.ErrorCode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The group {@link TalosConsumer} against a real server over HTTP: a group mixing it with the
 * official SDK 2.0.2's TalosConsumer, serial per-partition processing, commits, start positions,
 * out-of-range resets, poll mode, lag metrics and the group admin.
 */
class TalosConsumerEndToEndTest {
  @TempDir
  static Path dataDir;

  static TalosServer server;
  static TalosClient client;

  @BeforeAll
  static void start() throws Exception {
    server = TestServers.start(dataDir);
    client = TalosClient.create(TalosClientConfig.builder()
        .endpoint(server.endpoint().toString())
        .credentialFile(dataDir.resolve("admin-credential.properties"))
        .build());
  }

  @AfterAll
  static void stop() {
    client.close();
    server.close();
  }

  /** Fast group checks so tests converge quickly. */
  private static ConsumerConfig.Builder fast() {
    return ConsumerConfig.builder().workerCheckIntervalMs(200).renewIntervalMs(1000)
        .fetchBackoffMs(20).metadataRefreshIntervalMs(200);
  }

  private static void produce(String topic, int count, String prefix) throws Exception {
    try (TalosProducer p = client.producer(topic, ProducerConfig.builder()
        .partitioner(ProducerConfig.PARTITIONER_ROUND_ROBIN).build())) {
      for (int i = 0; i < count; i++) p.send(ProducerRecord.of((prefix + i).getBytes(UTF_8)));
      p.flush();
    }
  }

  private static void await(String what, long seconds, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (!condition.getAsBoolean()) {
      assertTrue(System.nanoTime() < deadline, "timed out waiting for " + what);
      Thread.sleep(50);
    }
  }

  private static long committed(String topic, String group, int partition) {
    return client.consumerGroups().describe(topic, group).get(partition).committedOffset();
  }

  /** Records what a processor saw, and fails the test on overlapping or out-of-order calls. */
  static final class Recorder {
    final Map<Integer, ConcurrentSkipListMap<Long, String>> seen = new ConcurrentHashMap<>();
    final List<String> violations = Collections.synchronizedList(new ArrayList<>());
    final AtomicInteger concurrentMax = new AtomicInteger();
    final AtomicInteger running = new AtomicInteger();

    MessageProcessor processor() {
      return new MessageProcessor() {
        final AtomicBoolean busy = new AtomicBoolean();
        int partition;
        long expected;

        @Override
        public void init(int partition, long startOffset) {
          this.partition = partition;
          this.expected = startOffset;
        }

        @Override
        public void process(List<ConsumedMessage> messages,
            io.talos.client.consumer.MessageCheckpointer checkpointer) {
          if (!busy.compareAndSet(false, true)) violations.add("overlap on " + partition);
          concurrentMax.accumulateAndGet(running.incrementAndGet(), Math::max);
          try {
            Thread.sleep(2); // widen the window for overlaps
            for (ConsumedMessage m : messages) {
              if (m.offset() != expected) violations.add(partition + ": got " + m.offset() + ", expected " + expected);
              expected = m.offset() + 1;
              seen.computeIfAbsent(partition, k -> new ConcurrentSkipListMap<>())
                  .put(m.offset(), new String(m.payload(), UTF_8));
            }
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          } finally {
            running.decrementAndGet();
            busy.set(false);
          }
        }
      };
    }

    int count() {
      return seen.values().stream().mapToInt(Map::size).sum();
    }
  }

  @Test
  void mixedGroupWithTheOfficialSdkBalancesAndDeliversEveryMessage() throws Exception {
    int partitions = 6;
    client.admin().createTopic("mixed", partitions);
    String group = "mixed-group";
    Map<String, Map<Integer, Set<Long>>> byWorker = new ConcurrentHashMap<>();
    Recorder ours = new Recorder();
    List<TalosConsumer> ourWorkers = new ArrayList<>();
    List<com.xiaomi.infra.galaxy.talos.consumer.TalosConsumer> sdkWorkers = new ArrayList<>();
    Properties sdkProps = new Properties();
    sdkProps.setProperty("galaxy.talos.service.endpoint", server.endpoint().toString());
    Credential credential = new Credential().setType(UserType.APP_SECRET)
        .setSecretKeyId(server.adminCredential().secretKeyId())
        .setSecretKey(server.adminCredential().secretKey());
    Map<Integer, ConcurrentSkipListMap<Long, String>> sdkSeen = new ConcurrentHashMap<>();
    String rn = client.admin().describeTopic("mixed").resourceName();
    try {
      for (int i = 0; i < 2; i++) {
        ourWorkers.add(client.consumer("mixed", group, fast().workerId("ours-" + i).build(),
            ours::processor));
      }
      for (int i = 0; i < 2; i++) {
        sdkWorkers.add(new com.xiaomi.infra.galaxy.talos.consumer.TalosConsumer(group,
            new TalosConsumerConfig(sdkProps), credential,
            new com.xiaomi.infra.galaxy.talos.thrift.TopicTalosResourceName(rn),
            () -> new com.xiaomi.infra.galaxy.talos.consumer.MessageProcessor() {
              int partition;

              @Override
              public void init(TopicAndPartition tp, long startOffset) {
                partition = tp.getPartitionId();
              }

              @Override
              public void process(List<MessageAndOffset> messages, MessageCheckpointer checkpointer) {
                for (MessageAndOffset m : messages) {
                  sdkSeen.computeIfAbsent(partition, k -> new ConcurrentSkipListMap<>())
                      .put(m.getMessageOffset(), new String(m.getMessage().getMessage(), UTF_8));
                }
              }

              @Override
              public void shutdown(MessageCheckpointer checkpointer) {}
            }, new SimpleTopicAbnormalCallback()));
      }
      // Balanced: 4 workers, 6 partitions: each holds 1 or 2 (⌊6/4⌋ or ⌈6/4⌉), all 6 held.
      await("a balanced mixed group", 120, () -> {
        Map<String, List<Integer>> workers = client.consumerGroups().workers("mixed", group);
        int held = workers.values().stream().mapToInt(List::size).sum();
        return workers.size() == 4 && held == partitions
            && workers.values().stream().allMatch(l -> l.size() == 1 || l.size() == 2);
      });
      Map<String, List<Integer>> workers = client.consumerGroups().workers("mixed", group);
      assertFalse(workers.get("ours-0").isEmpty());
      assertFalse(workers.get("ours-1").isEmpty());
      int total = 3000;
      produce("mixed", total, "m");
      await("every message consumed", 60, () -> ours.count() + sdkSeen.values().stream()
          .mapToInt(Map::size).sum() >= total);
      assertEquals(List.of(), ours.violations);
      // Each partition was read by exactly one side, completely, in offset order.
      Map<Integer, Integer> perPartition = new TreeMap<>();
      ours.seen.forEach((p, m) -> perPartition.merge(p, m.size(), Integer::sum));
      sdkSeen.forEach((p, m) -> perPartition.merge(p, m.size(), Integer::sum));
      assertEquals(partitions, perPartition.size());
      perPartition.values().forEach(n -> assertEquals(total / partitions, n));
      assertTrue(ours.count() > 0 && ours.count() < total, "both kinds consumed: ours " + ours.count());
      // Our workers commit what they consumed.
      for (TalosConsumer c : ourWorkers) {
        for (int p : c.assignment()) {
          await("commit of partition " + p, 20, () -> committed("mixed", group, p) == total / partitions - 1);
        }
      }
    } finally {
      ourWorkers.forEach(TalosConsumer::close);
      sdkWorkers.forEach(com.xiaomi.infra.galaxy.talos.consumer.TalosConsumer::shutDown);
    }
  }

  @Test
  void partitionsAreProcessedSeriallyInOrderAndInParallelOnABoundedPool() throws Exception {
    client.admin().createTopic("serial", 4);
    produce("serial", 2000, "s");
    Recorder r = new Recorder();
    try (TalosConsumer c = client.consumer("serial", "g", fast().processorThreads(2)
        .maxFetchRecords(7).build(), r::processor)) {
      await("all consumed", 60, () -> r.count() == 2000);
      assertEquals(List.of(0, 1, 2, 3), c.assignment());
    }
    assertEquals(List.of(), r.violations);
    assertEquals(2, r.concurrentMax.get(), "partitions ran in parallel, at most 2 at once");
    for (int p = 0; p < 4; p++) {
      assertEquals(499, committed("serial", "g", p), "committed on close, partition " + p);
    }
  }

  @Test
  void autoCommitsByCountAndOnCloseAndTheNextMemberResumesAfterTheCommit() throws Exception {
    client.admin().createTopic("bycount", 1);
    produce("bycount", 25, "c");
    Recorder r = new Recorder();
    TalosConsumer c = client.consumer("bycount", "g", fast().workerId("member-a").maxFetchRecords(5)
        .autoCommitMessages(10).autoCommitIntervalMs(3_600_000).build(), r::processor);
    await("all consumed", 30, () -> r.count() == 25);
    // 25 messages in batches of 5: commits after 10 and 20 messages; the last 5 wait for close.
    await("count commit", 10, () -> committed("bycount", "g", 0) == 19);
    c.close();
    assertEquals(24, committed("bycount", "g", 0));

    produce("bycount", 5, "d");
    // The closed member stays registered until the server's lock TTL (the protocol has no
    // leave call); with P=1 the one target goes to the first worker by id, descending, so the
    // new member is named to rank first instead of waiting out the TTL.
    Recorder next = new Recorder();
    try (TalosConsumer c2 = client.consumer("bycount", "g", fast().workerId("member-b").build(),
        next::processor)) {
      await("the new messages", 30, () -> next.count() == 5);
      assertEquals(Set.of(25L, 26L, 27L, 28L, 29L), next.seen.get(0).keySet());
    }
  }

  @Test
  void autoCommitsByIntervalAndManualCommitCommitsOnlyWhatTheProcessorSays() throws Exception {
    client.admin().createTopic("byinterval", 1);
    produce("byinterval", 30, "i");
    Recorder r = new Recorder();
    try (TalosConsumer c = client.consumer("byinterval", "g", fast().autoCommitMessages(1_000_000)
        .autoCommitIntervalMs(100).build(), r::processor)) {
      await("interval commit while running", 30, () -> committed("byinterval", "g", 0) == 29);
    }

    AtomicInteger calls = new AtomicInteger();
    try (TalosConsumer c = client.consumer("byinterval", "manual", fast().autoCommit(false)
        .startFrom(StartFrom.EARLIEST).maxFetchRecords(10).build(), () -> new MessageProcessor() {
          @Override
          public void init(int partition, long startOffset) {}

          @Override
          public void process(List<ConsumedMessage> messages,
              io.talos.client.consumer.MessageCheckpointer checkpointer) {
            if (calls.incrementAndGet() == 2) assertTrue(checkpointer.checkpoint(12));
          }
        })) {
      await("three batches", 30, () -> calls.get() >= 3);
      Thread.sleep(300);
    }
    assertEquals(12, committed("byinterval", "manual", 0), "no commit beyond the manual one, also on close");
  }

  @Test
  void startsFromEarliestLatestOrAnOffsetAndResetsOutOfRangeByPolicy() throws Exception {
    client.admin().createTopic("start", 1);
    produce("start", 10, "a");
    Recorder latest = new Recorder();
    Recorder earliest = new Recorder();
    Recorder offset = new Recorder();
    try (TalosConsumer l = client.consumer("start", "latest", fast().startFrom(StartFrom.LATEST).build(), latest::processor);
         TalosConsumer e = client.consumer("start", "earliest", fast().startFrom(StartFrom.EARLIEST).build(), earliest::processor);
         TalosConsumer o = client.consumer("start", "offset", fast().startOffset(7).build(), offset::processor)) {
      await("assignments", 30, () -> !l.assignment().isEmpty() && !e.assignment().isEmpty() && !o.assignment().isEmpty());
      await("earliest and offset readers", 30, () -> earliest.count() == 10 && offset.count() == 3);
      await("latest reader started", 30, () -> committed("start", "latest", 0) == 9);
      produce("start", 2, "b");
      await("latest sees the new ones", 30, () -> latest.count() == 2);
    }
    assertEquals(Set.of(10L, 11L), latest.seen.get(0).keySet());
    assertEquals(Set.of(7L, 8L, 9L, 10L, 11L), offset.seen.get(0).keySet());

    // A committed offset beyond the partition's end: EARLIEST reads from the start...
    client.consumerGroups().resetOffsets("start", "far", Map.of(0, 1000L));
    Recorder reset = new Recorder();
    try (TalosConsumer c = client.consumer("start", "far", fast().build(), reset::processor)) {
      await("reset to earliest", 30, () -> reset.count() == 12);
      assertEquals(1L, c.metrics().meter("offset-resets").getCount());
    }
    // ... and NONE stops the partition: poll reports the error.
    client.consumerGroups().resetOffsets("start", "none", Map.of(0, 1000L));
    try (TalosConsumer c = client.consumer("start", "none", fast().autoOffsetReset(OffsetReset.NONE).build())) {
      TalosException e = assertThrows(TalosException.class, () -> {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) c.poll(Duration.ofMillis(100));
      });
      assertEquals(ErrorCode.MESSAGE_OFFSET_OUT_OF_RANGE, e.errorCode());
    }
  }

  @Test
  void pollModeReturnsEveryMessageInPartitionOrderAndCommitSyncCommitsWhatWasPolled() throws Exception {
    client.admin().createTopic("poll", 3);
    produce("poll", 300, "p");
    Map<Integer, List<Long>> got = new TreeMap<>();
    try (TalosConsumer c = client.consumer("poll", "g", fast().autoCommit(false)
        .maxFetchRecords(10).maxPollBufferedRecords(20).build())) {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      int n = 0;
      while (n < 300 && System.nanoTime() < deadline) {
        List<ConsumerRecord> records = c.poll(Duration.ofMillis(200));
        assertTrue(records.size() <= 20, "bounded by the poll buffer");
        for (ConsumerRecord r : records) got.computeIfAbsent(r.partition(), k -> new ArrayList<>()).add(r.offset());
        n += records.size();
      }
      assertEquals(300, n);
      assertTrue(c.commitSync());
      for (int p = 0; p < 3; p++) {
        List<Long> expected = new ArrayList<>();
        for (long o = 0; o < 100; o++) expected.add(o);
        assertEquals(expected, got.get(p));
      }
      List<GroupPartitionState> state = client.consumerGroups().describe("poll", "g");
      for (GroupPartitionState s : state) {
        assertEquals(99, s.committedOffset());
        assertEquals(99, s.endOffset());
        assertEquals(0, s.lag());
        assertEquals(c.workerId(), s.owner());
      }
    }
  }

  private static int parkedGets() {
    return (Integer) ((Gauge<?>) server.metrics().getGauges().get("fetch.waiters.parked")).getValue();
  }

  /**
   * Poll mode with long poll: a message written while the member is caught up reaches poll within
   * well under fetch.backoff.ms, also right after the previous one (the fetch after a batch waits
   * on the server rather than finding nothing and backing off), and close does not wait for the
   * gets the server is holding.
   */
  @Test
  void pollModeWithLongPollDeliversEachMessagePromptlyAndClosesWithoutWaitingForHeldGets() throws Exception {
    client.admin().createTopic("poll-lp", 2);
    long backoffMs = 3_000;
    TalosConsumer c = client.consumer("poll-lp", "g", fast().autoCommit(false)
        .fetchBackoffMs(backoffMs).fetchMaxWaitMs(8_000).startFrom(StartFrom.LATEST).build());
    try {
      await("assignment", 30, () -> c.assignment().size() == 2);
      await("both partitions parked on the server", 30, () -> parkedGets() == 2);
      io.talos.client.producer.SimpleProducer p0 = client.producer("poll-lp", 0);
      for (int i = 0; i < 4; i++) {
        long t0 = System.nanoTime();
        p0.put(List.of(("lp" + i).getBytes(UTF_8)));
        List<ConsumerRecord> got = new ArrayList<>();
        while (got.isEmpty() && System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(20)) {
          got.addAll(c.poll(Duration.ofMillis(50)));
        }
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertEquals(1, got.size(), "message " + i);
        assertEquals("lp" + i, new String(got.get(0).message().payload(), UTF_8));
        assertTrue(ms < backoffMs / 2, "message " + i + " took " + ms + " ms (fetch.backoff.ms " + backoffMs + ")");
      }
      await("parked again", 30, () -> parkedGets() == 2);
    } finally {
      long t0 = System.nanoTime();
      c.close();
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertTrue(ms < 2_000, "close took " + ms + " ms while gets were held for up to 8 s");
    }
  }

  /**
   * Poll mode: a reader that found the poll buffer full goes on as soon as poll made room. The
   * buffer holds one batch, and the application takes 100 ms per poll, so the other reader finds
   * it full nearly every time: waiting fetch.backoff.ms (5 s) for each of the 40 refills would
   * take minutes.
   */
  @Test
  void pollModeReadersResumeAsSoonAsPollMakesRoom() throws Exception {
    client.admin().createTopic("poll-room", 2);
    produce("poll-room", 2_000, "r");
    long backoffMs = 5_000;
    try (TalosConsumer c = client.consumer("poll-room", "g", fast().autoCommit(false)
        .fetchBackoffMs(backoffMs).maxFetchRecords(50).maxPollBufferedRecords(50).build())) {
      await("assignment", 30, () -> c.assignment().size() == 2);
      long t0 = System.nanoTime();
      int n = 0;
      while (n < 2_000 && System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(90)) {
        n += c.poll(Duration.ofMillis(100)).size();
        Thread.sleep(100); // the application's work on them: meanwhile the readers fill the buffer
      }
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertEquals(2_000, n, "records polled in " + ms + " ms");
      assertTrue(ms < 5 * backoffMs, "2,000 records through a 50-record buffer took " + ms + " ms");
    }
  }

  @Test
  void lagPerPartitionIsAMetricThatFallsToZeroOnceCaughtUp() throws Exception {
    client.admin().createTopic("lag", 2);
    CountDownLatch go = new CountDownLatch(1);
    AtomicInteger processed = new AtomicInteger();
    try (TalosConsumer c = client.consumer("lag", "g", fast().build(), () -> new MessageProcessor() {
      @Override
      public void init(int partition, long startOffset) {}

      @Override
      public void process(List<ConsumedMessage> messages,
          io.talos.client.consumer.MessageCheckpointer checkpointer) {
        try {
          go.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        processed.addAndGet(messages.size());
      }
    })) {
      await("assignment", 30, () -> c.assignment().size() == 2);
      produce("lag", 100, "l");
      await("lag seen", 30, () -> lag(c, "partition.0.lag") == 50 && lag(c, "partition.1.lag") == 50
          && lag(c, "lag") == 100);
      // The group's view agrees (nothing committed yet).
      assertEquals(50, client.consumerGroups().describe("lag", "g").get(0).lag());
      go.countDown();
      await("caught up", 30, () -> processed.get() == 100 && lag(c, "lag") == 0);
      assertEquals(0, lag(c, "partition.0.lag"));
      assertEquals(100, c.metrics().meter("records-consumed").getCount());
    }
  }

  private static long lag(TalosConsumer c, String name) {
    Gauge<?> g = c.metrics().getGauges().get(name);
    return g == null ? -1 : ((Number) g.getValue()).longValue();
  }

  @Test
  void resettingOffsetsIsRefusedWhileAMemberHoldsThePartition() throws Exception {
    client.admin().createTopic("held", 1);
    produce("held", 5, "h");
    Recorder r = new Recorder();
    try (TalosConsumer c = client.consumer("held", "g", fast().build(), r::processor)) {
      await("consumed", 30, () -> r.count() == 5);
      TalosException e = assertThrows(TalosException.class,
          () -> client.consumerGroups().resetOffsets("held", "g", Map.of(0, -1L)));
      assertEquals(ErrorCode.LOCK_EXIST, e.errorCode());
      assertTrue(e.getMessage().contains("live members"), e.getMessage());
    }
    assertEquals(4, committed("held", "g", 0));
    client.consumerGroups().resetOffsets("held", "g", Map.of(0, -1L));
    assertEquals(-1, committed("held", "g", 0));
    assertEquals(5, client.consumerGroups().describe("held", "g").get(0).lag());
  }
}
