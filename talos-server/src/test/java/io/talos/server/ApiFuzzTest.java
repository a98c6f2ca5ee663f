package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.api.BugDetectors;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicTalosResourceName;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.thrift.protocol.TCompactProtocol;
import org.apache.thrift.protocol.TMessage;
import org.apache.thrift.protocol.TMessageType;
import org.apache.thrift.transport.TMemoryInputTransport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledIfSystemProperty;

/**
 * Coverage-guided fuzzing of the Thrift endpoints over real HTTP with valid signatures (Jazzer,
 * admin credential). An input is {@code [service][method][body]}: byte 0 picks the endpoint
 * (message, topic, consumer, quota, credential, cluster), byte 1 the method named in the {@code type} query parameter
 * (255: none), the rest is the body, in which {@link ApiCorpus#SUFFIX_PLACEHOLDER} becomes the
 * fuzz topic's real resource-name suffix.
 *
 * <p>A finding is any answer that is not a 200 with a Thrift reply, or a 400/413 with a Thrift
 * exception; a 5xx; an INTERNAL_SERVER_ERROR in a reply; no answer within {@link RawApi#TIMEOUT}; or, at the end, a change to the
 * data of a topic no input can name.
 *
 * <p>In a normal test run (CI) only the stored inputs under
 * {@code src/test/resources/io/talos/server/ApiFuzzTestInputs/fuzz} run, in seconds.
 * {@code bin/fuzz-api DURATION} fuzzes for real ({@code JAZZER_FUZZ=1}); findings are written to
 * that directory and become regression inputs. {@code -Dtalos.fuzz.skip=true} skips this class.
 */
@DisabledIfSystemProperty(named = "talos.fuzz.skip", matches = "true")
class ApiFuzzTest {
  static final Path SEED_DIR = Path.of("src/test/resources/io/talos/server/ApiFuzzTestInputs/fuzz");
  private static final Set<Integer> OK_STATUSES = Set.of(200, 400, 413);

  private static TalosServer server;
  private static RawApi api;
  private static Path dataDir;
  private static String fuzzSuffix;
  private static Map<String, List<String>> methods;
  private static TopicTalosResourceName golden;
  private static SortedMap<Long, String> goldenData;
  private static final AtomicLong executed = new AtomicLong();

  /**
   * Started on the first input, not in {@code @BeforeAll}: the server's classes must load after
   * Jazzer's agent so that they are instrumented for coverage.
   */
  private static synchronized void startOnce() throws Exception {
    if (server != null) return;
    try {
      // The fuzz target talks HTTP to its own server; Jazzer's SSRF detector must let it.
      BugDetectors.allowNetworkConnections((host, port) -> host.equals("127.0.0.1") || host.equals("localhost"));
    } catch (IllegalStateException e) {
      // No Jazzer agent in this run (stored inputs only): no detector to configure.
    }
    dataDir = Files.createTempDirectory("talos-fuzz");
    server = TestServers.start(dataDir, ServerConfig.REQUEST_MAX_BYTES, String.valueOf(1 << 20));
    api = new RawApi(server.endpoint(), server.adminCredential().secretKeyId(), server.adminCredential().secretKey());
    golden = api.createTopic("golden", 1);
    api.put(new TopicAndPartition("golden", golden, 0), List.of("one", "two", "three"));
    goldenData = api.readAll(new TopicAndPartition("golden", golden, 0), 0);
    fuzzSuffix = ApiCorpus.suffixOf(api.createTopic(ApiCorpus.TOPIC, 2));
    methods = ApiCorpus.methods();
  }

  @FuzzTest(maxDuration = "60s")
  void fuzz(byte[] input) throws Exception {
    startOnce();
    if (input.length < 2) return;
    executed.incrementAndGet();
    String service = ApiCorpus.SERVICES.get((input[0] & 0xff) % ApiCorpus.SERVICES.size());
    List<String> names = methods.get(service);
    int m = input[1] & 0xff;
    String method = m == 255 ? null : names.get(m % names.size());
    byte[] body = ApiCorpus.bind(Arrays.copyOfRange(input, 2, input.length), fuzzSuffix);
    HttpResponse<byte[]> r = api.post("/v1/api/" + service, method, body);
    // The same input twice within one second is the same signed request, which the server rightly
    // refuses as a replay (409). The fuzzer repeats inputs (minimizing, re-running a finding), so
    // sign it again in the next second; the answer to that is what is checked.
    for (int i = 0; i < 2 && r.statusCode() == 409 && RawApi.text(r).startsWith("replayed request"); i++) {
      Thread.sleep(1_000 - System.currentTimeMillis() % 1_000 + 10);
      r = api.post("/v1/api/" + service, method, body);
    }
    String what = service + "/" + method + " (" + body.length + " bytes)";
    if (!OK_STATUSES.contains(r.statusCode())) {
      throw new AssertionError("HTTP " + r.statusCode() + " for " + what + ": " + RawApi.text(r));
    }
    String type = r.headers().firstValue("Content-Type").orElse("");
    if (!type.equals("application/x-thrift")) throw new AssertionError("Content-Type " + type + " for " + what);
    TMessage reply = new TCompactProtocol(new TMemoryInputTransport(r.body())).readMessageBegin();
    byte expected = r.statusCode() == 200 ? TMessageType.REPLY : TMessageType.EXCEPTION;
    if (reply.type != expected && !(r.statusCode() == 200 && reply.type == TMessageType.EXCEPTION)) {
      throw new AssertionError("HTTP " + r.statusCode() + " with Thrift message type " + reply.type + " for " + what);
    }
    // A bug answered as a wire error (the services' boundary turns unexpected exceptions into it).
    if (server.metrics().meter("errors.INTERNAL_SERVER_ERROR").getCount() > 0) {
      throw new AssertionError("INTERNAL_SERVER_ERROR answered for " + what + ": " + RawApi.text(r));
    }
  }

  @AfterAll
  static void stopAndCheckGolden() throws Exception {
    if (server == null) return;
    try {
      System.out.println("ApiFuzzTest: " + executed.get() + " inputs executed");
      assertEquals(goldenData, api.readAll(new TopicAndPartition("golden", golden, 0), 0), "the golden topic changed");
    } finally {
      server.close();
      try (var files = Files.walk(dataDir)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  /** The stored seed inputs are the {@link ApiCorpus} calls; {@code -Dtalos.fuzz.writeSeeds=true} rewrites them. */
  @Test
  void storedSeedsAreTheCorpus() throws Exception {
    List<String> services = ApiCorpus.SERVICES;
    Map<String, List<String>> all = ApiCorpus.methods();
    List<String> expected = new ArrayList<>();
    for (ApiCorpus.Seed s : ApiCorpus.seeds()) {
      byte[] input = new byte[s.body().length + 2];
      input[0] = (byte) services.indexOf(s.service());
      input[1] = (byte) all.get(s.service()).indexOf(s.method());
      System.arraycopy(s.body(), 0, input, 2, s.body().length);
      String name = "seed-" + s.service() + "-" + s.method();
      expected.add(name);
      Path file = SEED_DIR.resolve(name);
      if (Boolean.getBoolean("talos.fuzz.writeSeeds")) {
        Files.createDirectories(SEED_DIR);
        Files.write(file, input);
      }
      assertEquals(Arrays.toString(input), Arrays.toString(readOrEmpty(file)),
          file + " is stale; regenerate with -Dtalos.fuzz.writeSeeds=true");
    }
    int methods = all.values().stream().mapToInt(List::size).sum();
    assertEquals(methods, expected.size(), "every method of every service has a seed: " + expected);
  }

  private static byte[] readOrEmpty(Path file) throws IOException {
    return Files.exists(file) ? Files.readAllBytes(file) : new byte[0];
  }
}
