package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** /ops/health reports what is broken, over real HTTP against a real server. */
class OpsHealthTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  @TempDir Path dir;

  private static HttpResponse<String> health(TalosServer server) throws Exception {
    return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(server.endpoint() + "/ops/health")).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void healthListsEveryCheckAndAnswers503NamingTheOnesThatFail() throws Exception {
    try (TalosServer server = TestServers.start(dir)) {
      HttpResponse<String> ok = health(server);
      assertEquals(200, ok.statusCode(), ok.body());
      JsonNode body = JSON.readTree(ok.body());
      assertEquals("ok", body.get("status").asText());
      for (String check : new String[] {"metadata", "storage", "file-descriptors"}) {
        assertTrue(body.get("checks").get(check).get("ok").asBoolean(), check + ": " + ok.body());
      }

      // Storage unreachable: the root is gone.
      Path root = dir.resolve("log");
      try (Stream<Path> files = Files.walk(root)) {
        files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
      HttpResponse<String> noStorage = health(server);
      assertEquals(503, noStorage.statusCode(), noStorage.body());
      body = JSON.readTree(noStorage.body());
      assertEquals("failing", body.get("status").asText());
      assertEquals(1, body.get("failed").size(), noStorage.body());
      assertEquals("storage", body.get("failed").get(0).get("check").asText());
      assertTrue(body.get("failed").get(0).get("problem").asText().contains("log"), noStorage.body());
      assertTrue(body.get("checks").get("metadata").get("ok").asBoolean());
      Files.createDirectories(root);
      assertEquals(200, health(server).statusCode());

      // Metadata store failing.
      server.metadata().close();
      HttpResponse<String> noMetadata = health(server);
      assertEquals(503, noMetadata.statusCode(), noMetadata.body());
      body = JSON.readTree(noMetadata.body());
      assertEquals("metadata", body.get("failed").get(0).get("check").asText(), noMetadata.body());
      assertFalse(body.get("checks").get("metadata").get("ok").asBoolean());
      assertTrue(body.get("checks").get("storage").get("ok").asBoolean());
    }
  }
}
