package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.client.TalosClient;
import io.talos.client.cli.TalosCli;
import io.talos.server.metadata.Credential;
import io.talos.server.storage.PartitionLogs;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.ResetPartitionRequest;
import io.talos.thrift.TopicService;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicTalosResourceName;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A partition whose log directory disappeared while the server was down is not silently recreated
 * at offset 0: it answers HDFS_FILE_NOT_EXIST (not retriable), saying what is missing and how to
 * reset it, until an operator runs {@code talos partition reset}; it then continues at the offset
 * the metadata store recorded, and no acknowledged offset is handed out again.
 */
class PartitionResetEndToEndTest {

  private static int cli(TalosServer server, Path dataDir, ByteArrayOutputStream out, ByteArrayOutputStream err,
      String... args) {
    String[] all = Stream.concat(Stream.of(args), Stream.of("--endpoint", server.endpoint().toString(),
        "--credential", dataDir.resolve("admin-credential.properties").toString())).toArray(String[]::new);
    return new TalosCli(new ByteArrayInputStream(new byte[0]), new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8), TalosClient::create).execute(all);
  }

  @Test
  void shouldRefuseAPartitionWhoseDataIsGoneUntilAnOperatorResetsIt(@TempDir Path dir) throws Exception {
    TopicTalosResourceName trn;
    try (TalosServer server = TestServers.start(dir)) {
      RawApi api = RestartTest.api(server);
      trn = api.createTopic("lost", 2);
      TopicAndPartition tap = new TopicAndPartition("lost", trn, 0);
      for (int i = 0; i < 10; i++) api.put(tap, List.of("m" + (2 * i), "m" + (2 * i + 1)));
    }
    Path partitionDir = dir.resolve("log").resolve(PartitionLogs.encodeDirName(trn.getTopicTalosResourceName()))
        .resolve("0");
    assertTrue(Files.isDirectory(partitionDir), partitionDir.toString());
    try (Stream<Path> files = Files.walk(partitionDir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }

    try (TalosServer server = TestServers.start(dir)) {
      RawApi api = RestartTest.api(server);
      TopicAndPartition tap = new TopicAndPartition("lost", trn, 0);
      GalaxyTalosException e = assertThrows(GalaxyTalosException.class, () -> api.put(tap, List.of("again")));
      assertEquals(ErrorCode.HDFS_FILE_NOT_EXIST, e.getErrorCode());
      assertTrue(e.getErrMsg().contains("missing") && e.getErrMsg().contains("talos partition reset lost 0"),
          e.getErrMsg());
      assertFalse(Files.exists(partitionDir), "not recreated at offset 0");
      assertEquals(0, api.put(new TopicAndPartition("lost", trn, 1), List.of("x")), "other partitions serve");

      assertTrue(server.metadata().putCredentialIfAbsent(new Credential("AK-bob", "bob-secret", "bob", false)));
      RawApi bob = new RawApi(server.endpoint(), "AK-bob", "bob-secret");
      TopicService.resetPartition_result denied = bob.call("topic", "resetPartition",
          new TopicService.resetPartition_args(new ResetPartitionRequest("lost", 0)),
          new TopicService.resetPartition_result());
      assertEquals(ErrorCode.PERMISSION_DENIED_ERROR, denied.getE().getErrorCode(), "only the admin accepts a loss");
      assertThrows(GalaxyTalosException.class, () -> api.put(tap, List.of("still refused")));

      ByteArrayOutputStream out = new ByteArrayOutputStream();
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      assertEquals(TalosCli.EXIT_OK, cli(server, dir, out, err, "partition", "reset", "lost", "0"),
          err.toString(StandardCharsets.UTF_8));
      assertTrue(out.toString(StandardCharsets.UTF_8).contains("continues at offset 20"),
          out.toString(StandardCharsets.UTF_8));
      assertEquals(20, api.put(tap, List.of("after reset")), "no acknowledged offset is handed out again");
      assertEquals("after reset", api.readAll(tap, 20).get(20L));
    }
  }
}
