package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.server.ops.PartitionMeters;
import io.talos.thrift.DeleteTopicRequest;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicService;
import io.talos.thrift.TopicTalosResourceName;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A deleted topic's per-partition meters leave the registry and /metrics; other topics keep theirs. */
class DeletedTopicMetersTest {
  private static String scrape(TalosServer server) throws Exception {
    return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(server.opsEndpoint() + "/metrics")).build(),
        HttpResponse.BodyHandlers.ofString()).body();
  }

  @Test
  void deletingATopicRemovesItsPartitionMeters(@TempDir Path dir) throws Exception {
    try (TalosServer server = TestServers.start(dir)) {
      RawApi api = RestartTest.api(server);
      TopicTalosResourceName gone = api.createTopic("gone", 2);
      TopicTalosResourceName kept = api.createTopic("kept", 1);
      api.put(new TopicAndPartition("gone", gone, 0), List.of("a"));
      api.put(new TopicAndPartition("gone", gone, 1), List.of("b"));
      api.put(new TopicAndPartition("kept", kept, 0), List.of("c"));
      assertTrue(server.partitionMeters().all().containsKey(new PartitionMeters.Key("gone", 1)));
      assertTrue(scrape(server).contains("topic=\"gone\""));

      TopicService.deleteTopic_result deleted = api.call("topic", "deleteTopic",
          new TopicService.deleteTopic_args(new DeleteTopicRequest(gone)), new TopicService.deleteTopic_result());
      assertFalse(deleted.isSetE(), String.valueOf(deleted.getE()));

      assertEquals(List.of(new PartitionMeters.Key("kept", 0)), List.copyOf(server.partitionMeters().all().keySet()));
      String metrics = scrape(server);
      assertFalse(metrics.contains("topic=\"gone\""), metrics);
      assertTrue(metrics.contains("topic=\"kept\""), metrics);

      // A new topic of the same name starts from zero.
      TopicTalosResourceName again = api.createTopic("gone", 1);
      api.put(new TopicAndPartition("gone", again, 0), List.of("x"));
      assertEquals(1, server.partitionMeters().get("gone", 0).putMessages.getCount());
    }
  }
}
