package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.xiaomi.infra.galaxy.talos.admin.TalosAdmin;
import com.xiaomi.infra.galaxy.talos.client.TalosClientConfig;
import com.xiaomi.infra.galaxy.talos.thrift.BaseQuota;
import com.xiaomi.infra.galaxy.talos.thrift.SetUserQuotaRequest;
import com.xiaomi.infra.galaxy.talos.thrift.UserQuota;
import io.talos.thrift.CreateCredentialRequest;
import io.talos.thrift.CredentialService;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GetMessageRequest;
import io.talos.thrift.MessageBlock;
import io.talos.thrift.MessageCompressionType;
import io.talos.thrift.MessageService;
import io.talos.thrift.PutMessageRequest;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicTalosResourceName;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Quotas on a real server over HTTP: a producer sending at three times its user quota (set with
 * the SDK 2.0.2's {@code setUserQuota}) is served at the quota's rate and told
 * EXCESSIVE_PENDING_MESSAGE (the SDK's code) for the rest once the throttle bound has passed, while
 * another account's producer on the same node keeps its latency; and a request refused for a bad
 * argument or a missing permission costs its account no tokens.
 */
class QuotaEndToEndTest {
  private static final long QUOTA = 200 * 1024; // bytes/s, the heavy account's put byte quota
  private static final int HEAVY_BLOCK = 24 * 1024; // bytes of one heavy put's block
  private static final long HEAVY_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1) * HEAVY_BLOCK / (3 * QUOTA);
  private static final long MAX_DELAY_MS = 2000; // quota.throttle.max.delay.ms (the default)
  private static final int LIGHT_BLOCK = 1024;
  private static final long LIGHT_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

  @TempDir static Path dir;
  static TalosServer server;
  static RawApi admin;

  @BeforeAll
  static void start() throws Exception {
    server = TestServers.start(dir, ServerConfig.QUOTA_THROTTLE_MAX_DELAY_MS, Long.toString(MAX_DELAY_MS));
    admin = RestartTest.api(server);
  }

  @AfterAll
  static void stop() {
    if (server != null) server.close();
  }

  private static RawApi account(String id) throws Exception {
    CredentialService.createCredential_result r = admin.call("credential", "createCredential",
        new CredentialService.createCredential_args(new CreateCredentialRequest(id)),
        new CredentialService.createCredential_result());
    assertFalse(r.isSetE(), String.valueOf(r.getE()));
    return new RawApi(server.endpoint(), r.getSuccess().getCredential().getSecretKeyId(), r.getSuccess().getSecretKey());
  }

  /** Sets a user quota through the unmodified SDK 2.0.2, as an operator would. */
  private static void userQuota(String account, BaseQuota quota) throws Exception {
    Properties p = new Properties();
    p.setProperty("galaxy.talos.service.endpoint", server.endpoint().toString());
    new TalosAdmin(new TalosClientConfig(p), AclMatrixTest.sdkCredential(server.adminCredential().secretKeyId(),
        server.adminCredential().secretKey())).setUserQuota(new SetUserQuotaRequest(account, new UserQuota(quota)));
  }

  /** A block of exactly {@code blockBytes} bytes holding one V2 message. */
  private static MessageBlock block(int blockBytes) {
    byte[] data = new byte[blockBytes - 20]; // a V2 message's framing is 20 bytes with an empty sequence number
    Arrays.fill(data, (byte) 'q');
    byte[] payload = RawApi.noneBlock(data);
    assertEquals(blockBytes, payload.length);
    return new MessageBlock(0, 1, MessageCompressionType.NONE, ByteBuffer.wrap(payload));
  }

  private static final AtomicLong SEQ = new AtomicLong();

  /** Sends a put; the result (success or the Talos error), or an exception for anything else. */
  private static MessageService.putMessage_result put(RawApi api, TopicAndPartition tap, MessageBlock block,
      int messageNumber) throws Exception {
    byte[] body = RawApi.call("putMessage", new MessageService.putMessage_args(new PutMessageRequest(tap,
        List.of(block), messageNumber, "q#" + SEQ.incrementAndGet())));
    HttpResponse<byte[]> response = api.post("/v1/api/message", "putMessage", body);
    if (response.statusCode() != 200) {
      throw new IllegalStateException("HTTP " + response.statusCode() + ": " + RawApi.text(response));
    }
    return RawApi.reply(response.body(), new MessageService.putMessage_result());
  }

  private static MessageService.getMessage_result get(RawApi api, GetMessageRequest request) throws Exception {
    HttpResponse<byte[]> response = api.post("/v1/api/message", "getMessage",
        RawApi.call("getMessage", new MessageService.getMessage_args(request)));
    assertEquals(200, response.statusCode(), RawApi.text(response));
    return RawApi.reply(response.body(), new MessageService.getMessage_result());
  }

  private static TopicAndPartition tap(TopicTalosResourceName trn, String name, int partition) {
    return new TopicAndPartition(name, trn, partition);
  }

  /** One heavy put as the client saw it. */
  record Sent(long sentNanos, long doneNanos, ErrorCode error, String message) {}

  /**
   * A light producer: sequential puts every 10 ms, each latency recorded (in µs) while {@code
   * record} holds the list to record into.
   */
  static final class LightProducer implements Runnable {
    final RawApi api;
    final TopicAndPartition tap;
    final MessageBlock block = block(LIGHT_BLOCK);
    final AtomicBoolean running = new AtomicBoolean(true);
    volatile List<Long> record;
    volatile Throwable failure;

    LightProducer(RawApi api, TopicAndPartition tap) {
      this.api = api;
      this.tap = tap;
    }

    @Override
    public void run() {
      long next = System.nanoTime();
      try {
        while (running.get()) {
          long wait = next - System.nanoTime();
          if (wait > 0) TimeUnit.NANOSECONDS.sleep(wait);
          next = Math.max(next + LIGHT_INTERVAL_NANOS, System.nanoTime());
          long t0 = System.nanoTime();
          MessageService.putMessage_result r = put(api, tap, block, 1);
          long micros = (System.nanoTime() - t0) / 1000;
          if (r.isSetE()) throw new AssertionError("the light producer was refused: " + r.getE());
          List<Long> into = record;
          if (into != null) into.add(micros);
        }
      } catch (Throwable e) {
        failure = e;
      }
    }

    /** Records the latencies of the puts of the next {@code millis}. */
    List<Long> measure(long millis) throws InterruptedException {
      List<Long> samples = Collections.synchronizedList(new ArrayList<>());
      record = samples;
      Thread.sleep(millis);
      record = null;
      if (failure != null) throw new AssertionError("light producer failed", failure);
      synchronized (samples) {
        return new ArrayList<>(samples);
      }
    }
  }

  static long p99(List<Long> micros) {
    List<Long> sorted = new ArrayList<>(micros);
    Collections.sort(sorted);
    return sorted.get((int) Math.ceil(sorted.size() * 0.99) - 1);
  }

  @Test
  void producerAtThreeTimesItsQuotaGetsTheQuotaRateThenTheQuotaErrorAndAnotherProducerKeepsItsLatency()
      throws Exception {
    RawApi heavy = account("heavy");
    RawApi light = account("light");
    TopicTalosResourceName heavyTopic = heavy.createTopic("heavy", 2);
    TopicTalosResourceName lightTopic = light.createTopic("light", 1);
    userQuota("heavy", new BaseQuota(0).setPutMessageBytesQpsQuota(QUOTA));
    userQuota("light", new BaseQuota(0).setPutMessageBytesQpsQuota(1024 * 1024)); // it sends 100 KiB/s

    LightProducer lightProducer = new LightProducer(light, tap(lightTopic, "light", 0));
    Thread lightThread = new Thread(lightProducer, "light-producer");
    lightThread.start();
    ExecutorService heavyPool = Executors.newFixedThreadPool(160);
    try {
      lightProducer.measure(2000); // warm-up: JIT, connections, the partition log opened
      List<Long> idle = lightProducer.measure(10_000);

      // The heavy producer, open loop at 3x its quota: a put every HEAVY_INTERVAL, whatever the
      // answers do (as a client with many threads or an async client would).
      ConcurrentLinkedQueue<Sent> sent = new ConcurrentLinkedQueue<>();
      ConcurrentLinkedQueue<Throwable> heavyFailures = new ConcurrentLinkedQueue<>();
      MessageBlock heavyBlock = block(HEAVY_BLOCK);
      long heavyStart = System.nanoTime();
      long warmupNanos = TimeUnit.SECONDS.toNanos(5);
      long windowNanos = TimeUnit.SECONDS.toNanos(14);
      AtomicBoolean heavyRunning = new AtomicBoolean(true);
      Thread pacer = new Thread(() -> {
        for (long i = 0; heavyRunning.get(); i++) {
          long due = heavyStart + i * HEAVY_INTERVAL_NANOS;
          long wait = due - System.nanoTime();
          if (wait > 0) {
            try {
              TimeUnit.NANOSECONDS.sleep(wait);
            } catch (InterruptedException e) {
              return;
            }
          }
          TopicAndPartition target = tap(heavyTopic, "heavy", (int) (i % 2));
          heavyPool.execute(() -> {
            long t0 = System.nanoTime();
            try {
              MessageService.putMessage_result r = put(heavy, target, heavyBlock, 1);
              sent.add(new Sent(t0, System.nanoTime(), r.isSetE() ? r.getE().getErrorCode() : null,
                  r.isSetE() ? r.getE().getErrMsg() : null));
            } catch (Throwable e) {
              heavyFailures.add(e);
            }
          });
        }
      }, "heavy-pacer");
      pacer.start();
      Thread.sleep(TimeUnit.NANOSECONDS.toMillis(warmupNanos)); // the bucket's burst spent, the backlog built
      List<Long> loaded = lightProducer.measure(TimeUnit.NANOSECONDS.toMillis(windowNanos));
      heavyRunning.set(false);
      pacer.join();
      heavyPool.shutdown();
      assertTrue(heavyPool.awaitTermination(MAX_DELAY_MS + 20_000, TimeUnit.MILLISECONDS), "heavy puts unanswered");
      assertTrue(heavyFailures.isEmpty(), "heavy puts failed otherwise: " + heavyFailures);

      // The rate the quota admitted: puts answered with success within the window.
      long windowStart = heavyStart + warmupNanos;
      long windowEnd = windowStart + windowNanos;
      long okInWindow = sent.stream().filter(s -> s.error() == null)
          .filter(s -> s.doneNanos() >= windowStart && s.doneNanos() < windowEnd).count();
      double rate = okInWindow * (double) HEAVY_BLOCK / (windowNanos / 1e9);
      List<Sent> refused = sent.stream().filter(s -> s.error() != null).toList();
      long ok = sent.size() - refused.size();
      long longestOkMs = sent.stream().filter(s -> s.error() == null)
          .mapToLong(s -> TimeUnit.NANOSECONDS.toMillis(s.doneNanos() - s.sentNanos())).max().orElse(0);
      long shortestRefusalMs = refused.stream()
          .mapToLong(s -> TimeUnit.NANOSECONDS.toMillis(s.doneNanos() - s.sentNanos())).min().orElse(-1);
      long idleP99 = p99(idle);
      long loadedP99 = p99(loaded);
      System.out.printf("quota %d B/s, offered %.0f B/s: admitted %.0f B/s over %d s (%d ok, %d refused of %d sent);"
              + " longest admitted put %d ms, shortest refusal %d ms; other producer p99 idle %d us (%d puts),"
              + " loaded %d us (%d puts)%n", QUOTA, 3.0 * QUOTA, rate, windowNanos / 1_000_000_000L, ok,
          refused.size(), sent.size(), longestOkMs, shortestRefusalMs, idleP99, idle.size(), loadedP99, loaded.size());

      assertTrue(Math.abs(rate - QUOTA) <= 0.10 * QUOTA, "admitted " + rate + " B/s; the quota is " + QUOTA);
      // Everything else was told, with the SDK's code, after the bound: nothing dropped or lost.
      assertFalse(refused.isEmpty(), "a producer at 3x its quota must be refused some puts");
      for (Sent s : refused) {
        assertEquals(ErrorCode.EXCESSIVE_PENDING_MESSAGE, s.error(), s.message());
        assertTrue(s.message().contains("quota exceeded") && s.message().contains("setUserQuota"), s.message());
      }
      assertEquals(com.xiaomi.infra.galaxy.talos.thrift.ErrorCode.EXCESSIVE_PENDING_MESSAGE.getValue(),
          ErrorCode.EXCESSIVE_PENDING_MESSAGE.getValue(), "the SDK 2.0.2's code");
      assertTrue(shortestRefusalMs >= MAX_DELAY_MS - 10, "refused after " + shortestRefusalMs + " ms, before the bound");
      // About two thirds of what was offered is refused.
      assertTrue(refused.size() >= sent.size() / 2, refused.size() + " of " + sent.size() + " refused");

      // The other account's producer: p99 within 2x of its p99 on the idle node (each put waits
      // for its flush, so even a busy 2-core machine gives a few hundred samples per phase).
      assertTrue(idle.size() >= 300 && loaded.size() >= 400, idle.size() + " / " + loaded.size() + " samples");
      assertTrue(loadedP99 <= 2 * idleP99, "the other producer's p99 went from " + idleP99 + " us (idle) to "
          + loadedP99 + " us next to the throttled producer");
    } finally {
      lightProducer.running.set(false);
      lightThread.join(10_000);
      heavyPool.shutdownNow();
    }
  }

  @Test
  void requestsRefusedForBadArgumentsOrPermissionsCostNoTokens() throws Exception {
    RawApi probe = account("probe");
    RawApi stranger = account("stranger");
    TopicTalosResourceName topic = probe.createTopic("probe", 1);
    TopicTalosResourceName foreign = stranger.createTopic("foreign", 1);
    // 10,000 bytes/s: the bucket holds one 8 KiB put; one get per second.
    userQuota("probe", new BaseQuota(0).setPutMessageBytesQpsQuota(10_000).setGetMessageQpsQuota(1));
    MessageBlock block = block(8 * 1024);

    // 30 refused puts of 8 KiB (25 s of the quota if they were charged), each answered at once.
    for (int i = 0; i < 30; i++) {
      long t0 = System.nanoTime();
      MessageService.putMessage_result r = switch (i % 3) {
        case 0 -> put(probe, tap(topic, "probe", 7), block, 1); // no partition 7
        case 1 -> put(probe, tap(topic, "probe", 0), block, 2); // messageNumber 2, the block holds 1
        default -> put(probe, tap(foreign, "foreign", 0), block, 1); // no permission on the topic
      };
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertTrue(r.isSetE(), "put " + i + " should be refused");
      ErrorCode expected = i % 3 == 0 ? ErrorCode.PARTITION_NOT_EXIST
          : i % 3 == 1 ? ErrorCode.INVALID_REQUEST_PARAMS : ErrorCode.PERMISSION_DENIED_ERROR;
      assertEquals(expected, r.getE().getErrorCode(), r.getE().getErrMsg());
      assertTrue(ms < 1000, "refused put " + i + " was held " + ms + " ms");
    }
    // The bucket is still full: a valid put goes through at once...
    long t0 = System.nanoTime();
    MessageService.putMessage_result first = put(probe, tap(topic, "probe", 0), block, 1);
    long firstMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    assertFalse(first.isSetE(), String.valueOf(first.getE()));
    assertTrue(firstMs < 500, "the first valid put waited " + firstMs + " ms");
    // ...and the quota is in force: the next one waits for its tokens (~0.65 s).
    t0 = System.nanoTime();
    MessageService.putMessage_result second = put(probe, tap(topic, "probe", 0), block, 1);
    long secondMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    assertFalse(second.isSetE(), String.valueOf(second.getE()));
    assertTrue(secondMs >= 400, "the second put should wait for the quota, waited " + secondMs + " ms");

    // Gets: 10 refused gets, then one get at once, the next after about a second.
    Thread.sleep(1100); // the get bucket (1 request) is full
    for (int i = 0; i < 10; i++) {
      long g0 = System.nanoTime();
      MessageService.getMessage_result r = i % 2 == 0
          ? get(probe, new GetMessageRequest(tap(topic, "probe", 0), 0, "g" + i).setMaxGetMessageNumber(-5))
          : get(probe, new GetMessageRequest(tap(foreign, "foreign", 0), 0, "g" + i));
      assertTrue(r.isSetE(), "get " + i + " should be refused");
      assertEquals(i % 2 == 0 ? ErrorCode.INVALID_REQUEST_PARAMS : ErrorCode.PERMISSION_DENIED_ERROR,
          r.getE().getErrorCode(), r.getE().getErrMsg());
      assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - g0) < 500, "refused get " + i + " was held");
    }
    t0 = System.nanoTime();
    assertFalse(get(probe, new GetMessageRequest(tap(topic, "probe", 0), 0, "ok1")).isSetE());
    long getMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    assertTrue(getMs < 500, "the first valid get waited " + getMs + " ms");
    t0 = System.nanoTime();
    assertFalse(get(probe, new GetMessageRequest(tap(topic, "probe", 0), 0, "ok2")).isSetE());
    long nextGetMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    assertTrue(nextGetMs >= 500, "the second get should wait for the request quota, waited " + nextGetMs + " ms");
  }
}
