package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicTalosResourceName;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SortedMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * 100,000 malformed bodies, mutations of valid calls of every method (truncations, flipped bytes,
 * huge declared lengths, deep nesting, trailing and spliced bytes), validly signed, across the six
 * endpoints: no 5xx, no request left unanswered, and the data of a topic no request names
 * ("golden") intact afterwards. The mutations are seeded: a failure names the seed and the body.
 * {@code -Dtalos.malformed.count=N} changes the count.
 */
class MalformedBodiesTest {
  static final int COUNT = Integer.getInteger("talos.malformed.count", 100_000);
  static final int THREADS = 4;

  @TempDir
  static Path dataDir;

  static TalosServer server;
  static RawApi api;
  static TopicTalosResourceName golden;
  static SortedMap<Long, String> goldenData;
  static String fuzzSuffix;

  @BeforeAll
  static void start() throws Exception {
    server = TestServers.start(dataDir, ServerConfig.REQUEST_MAX_BYTES, String.valueOf(1 << 20));
    api = new RawApi(server.endpoint(), server.adminCredential().secretKeyId(), server.adminCredential().secretKey());
    golden = api.createTopic("golden", 2);
    for (int i = 0; i < 20; i++) api.put(new TopicAndPartition("golden", golden, i % 2), List.of("g" + i, "h" + i));
    goldenData = api.readAll(new TopicAndPartition("golden", golden, 0), 0);
    assertEquals(20, goldenData.size());
    fuzzSuffix = ApiCorpus.suffixOf(api.createTopic(ApiCorpus.TOPIC, 2));
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  /** One mutation of {@code body}, chosen by {@code r}. */
  static byte[] mutate(byte[] body, Random r) {
    switch (r.nextInt(7)) {
      case 0: // truncation
        return java.util.Arrays.copyOf(body, r.nextInt(body.length));
      case 1: { // flipped bytes
        byte[] b = body.clone();
        for (int n = 1 + r.nextInt(8); n > 0; n--) b[r.nextInt(b.length)] ^= (byte) (1 + r.nextInt(255));
        return b;
      }
      case 2: { // a huge declared length (varint) spliced in, or a container header saying "length follows"
        byte[] huge = r.nextBoolean() ? new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x07}
            : new byte[] {(byte) (0xf0 | (9 + r.nextInt(4))), (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x7f};
        int at = r.nextInt(body.length);
        int tail = r.nextBoolean() ? at : Math.min(body.length, at + huge.length); // insert or overwrite
        byte[] b = new byte[at + huge.length + body.length - tail];
        System.arraycopy(body, 0, b, 0, at);
        System.arraycopy(huge, 0, b, at, huge.length);
        System.arraycopy(body, tail, b, at + huge.length, body.length - tail);
        return b;
      }
      case 3: { // deep nesting in place of the last field stop: structs, lists of lists, or maps of lists
        int depth = 10 + r.nextInt(r.nextBoolean() ? 50 : 20_000);
        byte open = switch (r.nextInt(3)) {
          case 0 -> 0x1c;
          case 1 -> 0x19;
          default -> 0x1a;
        };
        byte[] b = new byte[body.length - 1 + depth * 2 + 1];
        System.arraycopy(body, 0, b, 0, body.length - 1);
        for (int i = 0; i < depth; i++) b[body.length - 1 + i] = open;
        return b; // the rest stays zero: stops (or a truncated body)
      }
      case 4: { // trailing bytes, or the body twice
        byte[] b = java.util.Arrays.copyOf(body, body.length * (r.nextBoolean() ? 2 : 1) + 1 + r.nextInt(8));
        if (b.length > body.length * 2) System.arraycopy(body, 0, b, body.length, body.length);
        return b;
      }
      case 5: { // a chunk removed or duplicated
        int from = r.nextInt(body.length);
        int len = 1 + r.nextInt(Math.max(1, body.length - from));
        byte[] b = new byte[body.length + (r.nextBoolean() ? len : -len)];
        if (b.length < body.length) {
          System.arraycopy(body, 0, b, 0, from);
          System.arraycopy(body, from + len, b, from, body.length - from - len);
        } else {
          System.arraycopy(body, 0, b, 0, from + len);
          System.arraycopy(body, from, b, from + len, body.length - from);
        }
        return b;
      }
      default: { // random bytes
        byte[] b = new byte[r.nextInt(64)];
        r.nextBytes(b);
        return b;
      }
    }
  }

  @Test
  void malformedBodiesAreAnsweredWithoutServerErrorsOrHangsAndStoreNothingWrong() throws Exception {
    List<ApiCorpus.Seed> seeds = new ArrayList<>();
    for (ApiCorpus.Seed s : ApiCorpus.seeds()) seeds.add(new ApiCorpus.Seed(s.service(), s.method(), ApiCorpus.bind(s.body(), fuzzSuffix)));
    Map<Integer, AtomicLong> statuses = new ConcurrentHashMap<>();
    List<String> failures = java.util.Collections.synchronizedList(new ArrayList<>());
    ExecutorService threads = Executors.newFixedThreadPool(THREADS);
    List<Future<?>> done = new ArrayList<>();
    int perThread = COUNT / THREADS;
    for (int t = 0; t < THREADS; t++) {
      long seed = 1000 + t;
      done.add(threads.submit(() -> {
        Random r = new Random(seed);
        RawApi client = new RawApi(server.endpoint(), server.adminCredential().secretKeyId(), server.adminCredential().secretKey());
        for (int i = 0; i < perThread && failures.size() < 10; i++) {
          ApiCorpus.Seed s = seeds.get(r.nextInt(seeds.size()));
          byte[] body = mutate(s.body(), r);
          String service = r.nextInt(10) == 0 ? ApiCorpus.SERVICES.get(r.nextInt(ApiCorpus.SERVICES.size())) : s.service();
          String method = r.nextInt(10) == 0 ? null : s.method();
          String what = "seed " + seed + " #" + i + " " + service + "/" + method + " body " + HexFormat.of().formatHex(body,
              0, Math.min(body.length, 200));
          try {
            HttpResponse<byte[]> response = client.post("/v1/api/" + service, method, body);
            statuses.computeIfAbsent(response.statusCode(), k -> new AtomicLong()).incrementAndGet();
            if (response.statusCode() >= 500) failures.add("HTTP " + response.statusCode() + " for " + what + ": " + RawApi.text(response));
          } catch (java.net.SocketTimeoutException e) {
            failures.add("no answer within " + RawApi.TIMEOUT + " for " + what);
          }
        }
        return null;
      }));
    }
    for (Future<?> f : done) f.get();
    threads.shutdown();
    assertTrue(failures.isEmpty(), failures.size() + " failures, the first: " + String.join("\n", failures));
    long answered = statuses.values().stream().mapToLong(AtomicLong::get).sum();
    assertEquals((long) perThread * THREADS, answered, statuses.toString());
    System.out.println("malformed bodies: " + answered + " answered, by status " + new java.util.TreeMap<>(statuses));
    assertTrue(server.metrics().meter("http.status.500").getCount() == 0, "500s were counted");
    assertEquals(0, server.metrics().meter("errors.INTERNAL_SERVER_ERROR").getCount(), "bugs answered as wire errors");

    // The golden topic, named by no request, is intact; the server still serves.
    assertEquals(goldenData, api.readAll(new TopicAndPartition("golden", golden, 0), 0));
    assertEquals(20, api.readAll(new TopicAndPartition("golden", golden, 1), 0).size());
  }
}
