package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.thrift.CheckPoint;
import io.talos.thrift.ConsumeUnit;
import io.talos.thrift.ConsumerService;
import io.talos.thrift.LockPartitionRequest;
import io.talos.thrift.LockWorkerRequest;
import io.talos.thrift.QueryOffsetRequest;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicTalosResourceName;
import io.talos.thrift.UpdateOffsetRequest;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.SortedMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Stop the server (gracefully, and with kill -9 of a real server process) and start it again on
 * the same data directory: every acknowledged message and every committed offset is still there,
 * and the partitions stay writable.
 */
class RestartTest {
  private static final Pattern ENDPOINT = Pattern.compile("endpoint (http://\\S+),");

  static RawApi api(TalosServer server) {
    return new RawApi(server.endpoint(), server.adminCredential().secretKeyId(), server.adminCredential().secretKey());
  }

  static RawApi api(URI endpoint, Path dataDir) throws IOException {
    Properties p = new Properties();
    try (InputStream in = Files.newInputStream(dataDir.resolve("admin-credential.properties"))) {
      p.load(in);
    }
    return new RawApi(endpoint, p.getProperty("secretKeyId"), p.getProperty("secretKey"));
  }

  static void commit(RawApi api, TopicTalosResourceName trn, int partition, long offset) throws Exception {
    ConsumeUnit unit = new ConsumeUnit("g1", trn, List.of(partition), "w1");
    api.call("consumer", "lockWorker", new ConsumerService.lockWorker_args(new LockWorkerRequest(unit)),
        new ConsumerService.lockWorker_result());
    assertEquals(List.of(partition), api.call("consumer", "lockPartition",
        new ConsumerService.lockPartition_args(new LockPartitionRequest(unit)),
        new ConsumerService.lockPartition_result()).getSuccess().getSuccessPartitions());
    TopicAndPartition tap = new TopicAndPartition(topicNameOf(trn), trn, partition);
    assertTrue(api.call("consumer", "updateOffset", new ConsumerService.updateOffset_args(
        new UpdateOffsetRequest(new CheckPoint("g1", tap, offset, "w1"))), new ConsumerService.updateOffset_result())
        .getSuccess().isSuccess());
  }

  static long committed(RawApi api, TopicTalosResourceName trn, int partition) throws Exception {
    return api.call("consumer", "queryOffset", new ConsumerService.queryOffset_args(new QueryOffsetRequest("g1",
        new TopicAndPartition(topicNameOf(trn), trn, partition))), new ConsumerService.queryOffset_result())
        .getSuccess().getMsgOffset();
  }

  private static String topicNameOf(TopicTalosResourceName trn) {
    return io.talos.common.TopicNames.topicNameOf(trn.getTopicTalosResourceName());
  }

  @Test
  void gracefulRestartKeepsMessagesOffsetsAndCredentials(@TempDir Path dir) throws Exception {
    TopicTalosResourceName trn;
    String keyId;
    try (TalosServer server = TestServers.start(dir)) {
      keyId = server.adminCredential().secretKeyId();
      RawApi api = api(server);
      trn = api.createTopic("restart", 2);
      TopicAndPartition tap = new TopicAndPartition("restart", trn, 1);
      for (int i = 0; i < 30; i++) api.put(tap, List.of("m" + (3 * i), "m" + (3 * i + 1), "m" + (3 * i + 2)));
      commit(api, trn, 1, 41);
    }
    try (TalosServer server = TestServers.start(dir)) {
      assertEquals(keyId, server.adminCredential().secretKeyId(), "the admin credential survives");
      RawApi api = api(server);
      TopicAndPartition tap = new TopicAndPartition("restart", trn, 1);
      SortedMap<Long, String> all = api.readAll(tap, 0);
      assertEquals(90, all.size());
      for (long o = 0; o < 90; o++) assertEquals("m" + o, all.get(o));
      assertEquals(41, committed(api, trn, 1));
      assertEquals(90, api.put(tap, List.of("after")));
    }
  }

  @Test
  void aMetadataStoreThatFailsToCloseDoesNotFailTheShutdownAndLosesNothing(@TempDir Path dir) throws Exception {
    // The embedded store's close compacts its file; an H2 assertion inside that compaction once
    // made a test server's close throw (after every change had been made durable). A shutdown goes
    // on past it, as past any other resource that fails to close, and the next start recovers.
    TopicTalosResourceName trn;
    java.util.concurrent.atomic.AtomicBoolean closeFailed = new java.util.concurrent.atomic.AtomicBoolean();
    java.util.function.UnaryOperator<io.talos.server.metadata.MetadataStore> failingClose = real ->
        (io.talos.server.metadata.MetadataStore) java.lang.reflect.Proxy.newProxyInstance(getClass().getClassLoader(),
            new Class<?>[] {io.talos.server.metadata.MetadataStore.class}, (proxy, method, args) -> {
              try {
                Object result = method.invoke(real, args);
                if (method.getName().equals("close")) {
                  closeFailed.set(true);
                  throw new io.talos.server.metadata.MetadataException("closing metadata store failed (no change is lost)",
                      new AssertionError("compaction"));
                }
                return result;
              } catch (java.lang.reflect.InvocationTargetException e) {
                throw e.getCause();
              }
            });
    TalosServer server = TalosServer.start(new ServerConfig(TestServers.props(dir)), java.time.Clock.systemUTC(),
        failingClose);
    RawApi api = api(server);
    trn = api.createTopic("close-fails", 1);
    TopicAndPartition tap = new TopicAndPartition("close-fails", trn, 0);
    api.put(tap, List.of("a", "b"));
    server.close();
    assertTrue(closeFailed.get(), "the store's close ran and failed");
    try (TalosServer again = TestServers.start(dir)) {
      assertEquals(List.of("a", "b"), new ArrayList<>(api(again).readAll(tap, 0).values()));
    }
  }

  @Test
  void tornTailWrittenOnPurposeIsCutBackAndThePartitionStaysWritable(@TempDir Path dir) throws Exception {
    TopicTalosResourceName trn;
    try (TalosServer server = TestServers.start(dir)) {
      RawApi api = api(server);
      trn = api.createTopic("torn", 1);
      TopicAndPartition tap = new TopicAndPartition("torn", trn, 0);
      for (int i = 0; i < 20; i++) api.put(tap, List.of("m" + (2 * i), "m" + (2 * i + 1)));
    }
    // A crash mid-write: half of a record's bytes, then garbage, after the last whole record.
    Path newest;
    try (var files = Files.walk(dir.resolve("log"))) {
      newest = files.filter(f -> f.toString().endsWith(".log")).filter(f -> f.toFile().length() > 0)
          .max(java.util.Comparator.naturalOrder()).orElseThrow();
    }
    byte[] whole = Files.readAllBytes(newest);
    byte[] torn = java.util.Arrays.copyOf(whole, whole.length + 37);
    System.arraycopy(whole, 0, torn, whole.length, 30);
    Files.write(newest, torn);

    try (TalosServer server = TestServers.start(dir)) {
      RawApi api = api(server);
      TopicAndPartition tap = new TopicAndPartition("torn", trn, 0);
      SortedMap<Long, String> all = api.readAll(tap, 0);
      assertEquals(40, all.size());
      for (long o = 0; o < 40; o++) assertEquals("m" + o, all.get(o));
      assertEquals(40, api.put(tap, List.of("after")));
      assertEquals("after", api.readAll(tap, 40).get(40L));
    }
  }

  @Test
  void killDashNineLosesNoAcknowledgedMessage(@TempDir Path dir) throws Exception {
    Path log = dir.resolve("server.log");
    Process child = startChild(dir.resolve("data"), log);
    Map<Integer, ConcurrentSkipListMap<Long, String>> acked = Map.of(0, new ConcurrentSkipListMap<>(),
        1, new ConcurrentSkipListMap<>());
    TopicTalosResourceName trn;
    try {
      RawApi api = api(endpointOf(log), dir.resolve("data"));
      trn = api.createTopic("crash", 2);
      commit(api, trn, 0, 4);
      Thread producer = new Thread(() -> {
        try {
          for (int batch = 0; ; batch++) {
            int p = batch % 2;
            List<String> messages = new ArrayList<>();
            for (int i = 0; i < 10; i++) messages.add("b" + batch + "-" + i);
            long first = api.put(new TopicAndPartition("crash", trn, p), messages);
            for (int i = 0; i < messages.size(); i++) acked.get(p).put(first + i, messages.get(i));
          }
        } catch (Exception expected) {
          // The server was killed under us; whatever was not acknowledged may be lost.
        }
      });
      producer.start();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (acked.get(0).size() + acked.get(1).size() < 3000 && System.nanoTime() < deadline) Thread.sleep(10);
      child.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      producer.join(TimeUnit.SECONDS.toMillis(30));
    } finally {
      child.destroyForcibly();
    }
    assertTrue(acked.get(0).size() + acked.get(1).size() >= 100, "too little was produced before the kill");

    try (TalosServer server = TestServers.start(dir.resolve("data"))) {
      RawApi api = api(server);
      for (int p = 0; p < 2; p++) {
        TopicAndPartition tap = new TopicAndPartition("crash", trn, p);
        SortedMap<Long, String> stored = api.readAll(tap, 0);
        for (Map.Entry<Long, String> e : acked.get(p).entrySet()) {
          assertEquals(e.getValue(), stored.get(e.getKey()), "acknowledged message at offset " + e.getKey() + " of partition " + p);
        }
        long next = stored.isEmpty() ? 0 : stored.lastKey() + 1;
        assertEquals(next, api.put(tap, List.of("after-restart")), "partition " + p + " stays writable");
      }
      assertEquals(4, committed(api, trn, 0));
    }
  }

  /** Starts a real server JVM (the test classpath holds everything it needs). */
  static Process startChild(Path dataDir, Path log) throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    ProcessBuilder pb = new ProcessBuilder(java, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
        "io.talos.server.TalosServerMain", "--port", "0", "-Dserver.ops.port=0", "--data-dir", dataDir.toString());
    pb.redirectErrorStream(true);
    pb.redirectOutput(log.toFile());
    return pb.start();
  }

  static URI endpointOf(Path log) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      if (Files.exists(log)) {
        String text = Files.readString(log, StandardCharsets.UTF_8);
        Matcher m = ENDPOINT.matcher(text);
        if (text.contains("READY") && m.find()) return URI.create(m.group(1));
      }
      Thread.sleep(50);
    }
    throw new AssertionError("server did not start: " + (Files.exists(log) ? Files.readString(log) : "no log"));
  }
}
