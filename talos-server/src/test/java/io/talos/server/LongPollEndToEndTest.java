package io.talos.server;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.codahale.metrics.Gauge;
import io.talos.client.TalosClient;
import io.talos.client.TalosClientConfig;
import io.talos.client.consumer.ConsumedMessage;
import io.talos.client.consumer.ConsumerConfig;
import io.talos.client.consumer.MessageProcessor;
import io.talos.client.consumer.SimpleConsumer;
import io.talos.client.consumer.TalosConsumer;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Long poll of getMessage (maxWaitMs) against a real server over HTTP: a parked get woken by a
 * put, the server's wait bound, the per-node waiter limit, and an idle group consumer that makes
 * few requests. Times are asserted loosely (woken well before the wait would have ended).
 */
class LongPollEndToEndTest {
  private static final long SERVER_MAX_WAIT_MS = 3000;

  @TempDir
  static Path dataDir;

  static TalosServer server;
  static TalosClient client;

  @BeforeAll
  static void start() throws Exception {
    server = TestServers.start(dataDir, ServerConfig.GET_WAIT_MAX_MS, Long.toString(SERVER_MAX_WAIT_MS),
        ServerConfig.GET_WAITERS_MAX, "2");
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

  private static int parked() {
    return (Integer) ((Gauge<?>) server.metrics().getGauges().get("fetch.waiters.parked")).getValue();
  }

  private static void awaitParked(int n) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (parked() != n) {
      assertTrue(System.nanoTime() < deadline, "expected " + n + " parked gets, have " + parked());
      Thread.sleep(10);
    }
  }

  @Test
  void parkedGetIsWokenByAPut() throws Exception {
    client.admin().createTopic("lp-wake", 1);
    SimpleConsumer consumer = client.consumer("lp-wake", 0);
    long t0 = System.nanoTime();
    CompletableFuture<SimpleConsumer.Fetched> get =
        CompletableFuture.supplyAsync(() -> consumer.fetch(0, 100, 2500));
    awaitParked(1);
    client.producer("lp-wake", 0).put(List.of("hello".getBytes(UTF_8)));
    SimpleConsumer.Fetched fetched = get.get(10, TimeUnit.SECONDS);
    long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    assertEquals(1, fetched.messages().size());
    assertEquals("hello", new String(fetched.messages().get(0).payload(), UTF_8));
    assertTrue(fetched.waitedMs() >= 0, "the server says it held the get");
    assertTrue(elapsedMs < 2000, "woken by the put, not by the end of the 2500 ms wait: " + elapsedMs + " ms");
    assertEquals(0, parked());
  }

  @Test
  void waitIsBoundedByTheServer() throws Exception {
    client.admin().createTopic("lp-bound", 1);
    long t0 = System.nanoTime();
    // asks for 9 s; the server holds it at most message.get.wait.max.ms (3 s)
    SimpleConsumer.Fetched fetched = client.consumer("lp-bound", 0).fetch(0, 100, 9000);
    long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    assertTrue(fetched.messages().isEmpty());
    assertTrue(fetched.waitedMs() >= SERVER_MAX_WAIT_MS - 100, "held about 3 s: " + fetched.waitedMs());
    assertTrue(elapsedMs >= SERVER_MAX_WAIT_MS - 100 && elapsedMs < 8000, "answered at the server's bound: " + elapsedMs);
    // without maxWaitMs (as the SDK 2.0.2 asks): answered at once, without waitedMs
    SimpleConsumer.Fetched plain = client.consumer("lp-bound", 0).fetch(0, 100, 0);
    assertTrue(plain.messages().isEmpty());
    assertEquals(-1, plain.waitedMs());
  }

  @Test
  void overTheWaiterLimitAGetIsAnsweredAtOnce() throws Exception {
    client.admin().createTopic("lp-limit", 3);
    CompletableFuture<SimpleConsumer.Fetched> a =
        CompletableFuture.supplyAsync(() -> client.consumer("lp-limit", 0).fetch(0, 100, 2500));
    CompletableFuture<SimpleConsumer.Fetched> b =
        CompletableFuture.supplyAsync(() -> client.consumer("lp-limit", 1).fetch(0, 100, 2500));
    awaitParked(2);
    long t0 = System.nanoTime();
    SimpleConsumer.Fetched third = client.consumer("lp-limit", 2).fetch(0, 100, 2500);
    long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    assertTrue(third.messages().isEmpty());
    assertTrue(elapsedMs < 1500, "over message.get.waiters.max (2): answered at once, took " + elapsedMs + " ms");
    assertTrue(third.waitedMs() < 1000);
    assertTrue(server.metrics().meter("fetch.waiters.refused").getCount() >= 1);
    client.producer("lp-limit", 0).put(List.of("x".getBytes(UTF_8)));
    assertEquals(1, a.get(10, TimeUnit.SECONDS).messages().size());
    assertTrue(b.get(10, TimeUnit.SECONDS).messages().isEmpty()); // its own wait ended
  }

  /** Counts getMessage requests the server served while a group consumer sat idle for a while. */
  private static long idleGets(String topic, ConsumerConfig config, long idleMs) throws Exception {
    ConcurrentLinkedQueue<Long> got = new ConcurrentLinkedQueue<>();
    try (TalosConsumer consumer = client.consumer(topic, "g-" + config.fetchMaxWaitMs(), config,
        () -> new MessageProcessor() {
          public void init(int partition, long startOffset) {}
          public void process(List<ConsumedMessage> messages, io.talos.client.consumer.MessageCheckpointer c) {
            for (ConsumedMessage m : messages) got.add(m.offset());
          }
        })) {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (consumer.assignment().size() < 2) {
        assertTrue(System.nanoTime() < deadline, "partitions not assigned");
        Thread.sleep(20);
      }
      Thread.sleep(500); // settled: every partition has caught up
      long before = server.metrics().timer("requests.message.getMessage").getCount();
      Thread.sleep(idleMs);
      long gets = server.metrics().timer("requests.message.getMessage").getCount() - before;
      // and a message written now still arrives promptly
      long t0 = System.nanoTime();
      client.producer(topic, 1).put(List.of("late".getBytes(UTF_8)));
      while (got.isEmpty()) {
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5), "message not delivered");
        Thread.sleep(5);
      }
      got.clear();
      return gets;
    }
  }

  @Test
  void anIdleConsumerMakesFewRequests() throws Exception {
    client.admin().createTopic("lp-idle", 2);
    ConsumerConfig.Builder base = ConsumerConfig.builder().workerCheckIntervalMs(200).renewIntervalMs(1000)
        .fetchBackoffMs(20).metadataRefreshIntervalMs(60_000).startFrom(ConsumerConfig.StartFrom.LATEST);
    long withLongPoll = idleGets("lp-idle", base.fetchMaxWaitMs(2000).build(), 4000);
    long without = idleGets("lp-idle", base.fetchMaxWaitMs(0).build(), 4000);
    // 2 partitions x 4 s / 2 s per held get = about 4 (+ margins); polling every 20 ms: about 400
    assertTrue(withLongPoll <= 12, "idle long-poll consumer made " + withLongPoll + " gets in 4 s");
    assertTrue(without > 5 * Math.max(1, withLongPoll),
        "the same consumer without long poll made " + without + " gets (with: " + withLongPoll + ")");
  }
}
