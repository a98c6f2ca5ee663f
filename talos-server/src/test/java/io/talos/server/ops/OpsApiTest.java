package io.talos.server.ops;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.prometheus.metrics.expositionformats.generated.com_google_protobuf_4_36_2.Metrics;
import io.talos.client.TalosClient;
import io.talos.client.TalosClientConfig;
import io.talos.client.admin.IssuedCredential;
import io.talos.server.ServerConfig;
import io.talos.server.TalosServer;
import io.talos.server.TestServers;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every ops endpoint over real HTTP on the ops port of a real server: answers, 404, 405, auth. */
class OpsApiTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @TempDir static Path dir;
  static TalosServer server;
  static TalosClient client;
  static String adminKeyId;
  static String adminSecret;
  static IssuedCredential user;

  @BeforeAll
  static void start() throws Exception {
    server = TestServers.start(dir);
    Properties cred = new Properties();
    try (InputStream in = Files.newInputStream(dir.resolve("admin-credential.properties"))) {
      cred.load(in);
    }
    adminKeyId = cred.getProperty("secretKeyId");
    adminSecret = cred.getProperty("secretKey");
    client = TalosClient.create(TalosClientConfig.builder().endpoint(server.endpoint().toString())
        .credentialFile(dir.resolve("admin-credential.properties")).build());
    client.admin().createTopic("orders", 2);
    List<byte[]> payloads = new ArrayList<>();
    for (int i = 0; i < 5; i++) payloads.add(("m" + i).getBytes(UTF_8));
    client.producer("orders", 0).put(payloads);
    client.consumerGroups().resetOffsets("orders", "billing", Map.of(0, 1L));
    user = client.admin().createCredential("alice");
  }

  @AfterAll
  static void stop() {
    client.close();
    server.close();
  }

  static HttpResponse<String> call(String method, String path, String keyId, String secret) throws Exception {
    return OpsRequests.call(server.opsEndpoint().toString(), method, path, keyId, secret);
  }

  static HttpResponse<String> admin(String method, String path) throws Exception {
    return call(method, path, adminKeyId, adminSecret);
  }

  static JsonNode json(HttpResponse<String> r) throws Exception {
    assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("application/json"), r.toString());
    return JSON.readTree(r.body());
  }

  @Test
  void readyAndNodesAreOpen() throws Exception {
    HttpResponse<String> ready = call("GET", "/ops/ready", null, null);
    assertEquals(200, ready.statusCode(), ready.body());
    assertTrue(json(ready).get("ready").asBoolean());
    HttpResponse<String> nodes = call("GET", "/ops/nodes", null, null);
    assertEquals(200, nodes.statusCode());
    JsonNode n = json(nodes);
    assertFalse(n.get("clusterMode").asBoolean());
    assertEquals(1, n.get("nodes").size());
    assertEquals(server.endpoint().toString(), n.get("nodes").get(0).get("apiUrl").asText());
    assertTrue(n.get("nodes").get(0).get("local").asBoolean());
    assertEquals(200, call("GET", "/ops/health", null, null).statusCode());
  }

  @Test
  void readyAnswers503WithTheReasonWhenStorageIsGone() throws Exception {
    // a server of its own: this one's storage root is removed
    Path other = dir.resolve("other");
    try (TalosServer s = TestServers.start(other)) {
      Path root = other.resolve("log");
      try (var files = Files.walk(root)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
      HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(s.opsEndpoint() + "/ops/ready")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertEquals(503, r.statusCode(), r.body());
      JsonNode body = json(r);
      assertFalse(body.get("ready").asBoolean());
      assertEquals("storage", body.get("reasons").get(0).get("check").asText(), r.body());
    }
  }

  @Test
  void topicsAndPartitionsNeedTheAdminCredential() throws Exception {
    for (String path : List.of("/ops/topics", "/ops/topics/orders", "/ops/groups", "/ops/groups/billing")) {
      HttpResponse<String> anon = call("GET", path, null, null);
      assertEquals(401, anon.statusCode(), path + " " + anon.body());
      assertTrue(json(anon).get("error").asText().contains("Authorization"), anon.body());
      HttpResponse<String> wrong = call("GET", path, adminKeyId, "not-the-secret");
      assertEquals(401, wrong.statusCode(), wrong.body());
      HttpResponse<String> notAdmin = call("GET", path, user.credential().secretKeyId(), user.secretKey());
      assertEquals(403, notAdmin.statusCode(), notAdmin.body());
      assertTrue(json(notAdmin).get("error").asText().contains("not an admin"), notAdmin.body());
    }
  }

  @Test
  void topicListsPartitionsWithOwnerOffsetsBytesAndRates() throws Exception {
    HttpResponse<String> list = admin("GET", "/ops/topics");
    assertEquals(200, list.statusCode(), list.body());
    JsonNode topics = json(list).get("topics");
    assertEquals("orders", topics.get(0).get("name").asText(), list.body());
    assertEquals(2, topics.get(0).get("partitions").asInt());

    HttpResponse<String> one = admin("GET", "/ops/topics/orders");
    assertEquals(200, one.statusCode(), one.body());
    JsonNode p0 = json(one).get("partitionList").get(0);
    assertEquals(server.endpoint().getHost() + ":" + server.endpoint().getPort(), p0.get("owner").asText());
    assertEquals(0, p0.get("startOffset").asLong());
    assertEquals(4, p0.get("endOffset").asLong(), one.body());
    assertEquals(5, p0.get("nextOffset").asLong());
    assertTrue(p0.get("bytes").asLong() > 0, one.body());
    assertTrue(p0.has("putMessagesPerSec") && p0.has("getMessagesPerSec"), one.body());
    assertEquals(5, server.partitionMeters().get("orders", 0).putMessages.getCount());
    JsonNode p1 = json(one).get("partitionList").get(1);
    assertEquals(-1, p1.get("endOffset").asLong(), one.body());

    HttpResponse<String> missing = admin("GET", "/ops/topics/nope");
    assertEquals(404, missing.statusCode());
    assertTrue(json(missing).get("error").asText().contains("no topic named 'nope'"));
  }

  @Test
  void groupsShowWorkerCommittedEndAndLag() throws Exception {
    HttpResponse<String> list = admin("GET", "/ops/groups");
    assertEquals(200, list.statusCode(), list.body());
    JsonNode g = json(list).get("groups").get(0);
    assertEquals("billing", g.get("name").asText());
    assertEquals("orders", g.get("topics").get(0).asText());

    HttpResponse<String> one = admin("GET", "/ops/groups/billing");
    assertEquals(200, one.statusCode(), one.body());
    JsonNode body = json(one);
    JsonNode p0 = body.get("topics").get(0).get("partitions").get(0);
    assertTrue(p0.get("worker").isNull());
    assertEquals(1, p0.get("committedOffset").asLong());
    assertEquals(4, p0.get("endOffset").asLong());
    assertEquals(3, p0.get("lag").asLong(), one.body()); // offsets 2, 3, 4 not yet consumed
    assertEquals(3, body.get("lag").asLong());

    assertEquals(404, admin("GET", "/ops/groups/nobody").statusCode());
  }

  @Test
  void actionsAreAdminOnlyAndClusterModeOnly() throws Exception {
    assertEquals(401, call("POST", "/ops/nodes/x/drain", null, null).statusCode());
    HttpResponse<String> drain = admin("POST", "/ops/nodes/x/drain");
    assertEquals(409, drain.statusCode(), drain.body());
    assertTrue(json(drain).get("error").asText().contains("available in cluster mode only"), drain.body());
    HttpResponse<String> move = admin("POST", "/ops/partitions/orders/0/move?to=n2");
    assertEquals(409, move.statusCode(), move.body());
    assertTrue(json(move).get("error").asText().contains("available in cluster mode only"));
    assertEquals(400, admin("POST", "/ops/partitions/orders/x/move").statusCode());
  }

  @Test
  void wrongMethodIs405WithAllowAndUnknownPathIs404Json() throws Exception {
    Map<String, String> cases = Map.of("/ops/ready", "GET, HEAD", "/ops/nodes", "GET, HEAD", "/ops/topics", "GET, HEAD",
        "/ops/groups/billing", "GET, HEAD", "/ops/health", "GET, HEAD", "/metrics", "GET, HEAD",
        "/console/", "GET, HEAD");
    for (Map.Entry<String, String> c : cases.entrySet()) {
      HttpResponse<String> r = call("DELETE", c.getKey(), null, null);
      assertEquals(405, r.statusCode(), c.getKey());
      assertEquals(c.getValue(), r.headers().firstValue("Allow").orElse(""), c.getKey());
      assertEquals(405, json(r).get("status").asInt());
    }
    HttpResponse<String> getDrain = call("GET", "/ops/nodes/x/drain", null, null);
    assertEquals(405, getDrain.statusCode());
    assertEquals("POST", getDrain.headers().firstValue("Allow").orElse(""));
    for (String path : List.of("/ops/nope", "/ops/topics/a/b/c", "/nope", "/console/nope.js")) {
      HttpResponse<String> r = call("GET", path, null, null);
      assertEquals(404, r.statusCode(), path);
      assertFalse(r.body().contains("<html"), r.body());
      assertEquals(404, json(r).get("status").asInt(), path);
    }
  }

  @Test
  void consoleIsServedFromTheJar() throws Exception {
    HttpResponse<String> r = call("GET", "/console/", null, null);
    assertEquals(200, r.statusCode());
    assertTrue(r.body().contains("Talos console"));
    assertEquals(200, call("GET", "/console/console.js", null, null).statusCode());
  }

  @Test
  void metricsParseWithThePrometheusLibraryAndCountErrorsByCode() throws Exception {
    call("GET", "/ops/definitely-missing", null, null); // a 404 to count
    HttpResponse<byte[]> proto = HTTP.send(HttpRequest.newBuilder(URI.create(server.opsEndpoint() + "/metrics"))
        .header("Accept", "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited")
        .build(), HttpResponse.BodyHandlers.ofByteArray());
    assertEquals(200, proto.statusCode());
    Map<String, Metrics.MetricFamily> families = new HashMap<>();
    ByteArrayInputStream in = new ByteArrayInputStream(proto.body());
    Metrics.MetricFamily f;
    while ((f = Metrics.MetricFamily.parseDelimitedFrom(in)) != null) families.put(f.getName(), f);
    assertTrue(families.containsKey("jvm_memory_used_bytes"), families.keySet().toString());
    assertEquals(5.0, families.get("talos_put_requests_total").getMetric(0).getCounter().getValue() > 0 ? 5.0 : 0.0);
    assertEquals(Metrics.MetricType.HISTOGRAM, families.get("talos_request_duration_seconds").getType());
    double notFound = -1;
    for (Metrics.Metric m : families.get("talos_http_errors_total").getMetricList()) {
      if (m.getLabel(0).getName().equals("code") && m.getLabel(0).getValue().equals("404")) notFound = m.getCounter().getValue();
    }
    assertTrue(notFound >= 1, "404s counted: " + families.get("talos_http_errors_total"));
    boolean partitionLabel = false;
    for (Metrics.Metric m : families.get("talos_partition_put_messages_total").getMetricList()) {
      if (m.getLabelList().stream().anyMatch(l -> l.getName().equals("topic") && l.getValue().equals("orders"))) {
        partitionLabel = true;
        assertEquals(5.0, m.getCounter().getValue());
      }
    }
    assertTrue(partitionLabel);
    assertTrue(families.containsKey("talos_group_lag_messages"));

    HttpResponse<String> text = HTTP.send(HttpRequest.newBuilder(URI.create(server.opsEndpoint() + "/metrics")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertTrue(text.headers().firstValue("Content-Type").orElse("").startsWith("text/plain; version=0.0.4"));
    assertTrue(text.body().contains("# TYPE talos_put_requests_total counter"), text.body());
    HttpResponse<String> om = HTTP.send(HttpRequest.newBuilder(URI.create(server.opsEndpoint() + "/metrics"))
        .header("Accept", "application/openmetrics-text; version=1.0.0").build(), HttpResponse.BodyHandlers.ofString());
    assertTrue(om.headers().firstValue("Content-Type").orElse("").startsWith("application/openmetrics-text"));
    assertTrue(om.body().trim().endsWith("# EOF"));
  }

  @Test
  void labelsMaxIsDeclared() {
    assertEquals(1000, new ServerConfig(new Properties()).getInt(ServerConfig.OPS_METRICS_LABELS_MAX));
  }
}
