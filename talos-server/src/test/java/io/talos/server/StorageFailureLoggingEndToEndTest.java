package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.server.storage.StorageFailureLog;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicTalosResourceName;
import java.nio.file.Path;
import java.util.List;
import org.apache.log4j.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A partition whose storage fails is logged by the server once per partition per
 * storage.failure.log.interval.ms, whichever path (put, get) meets the failure; the next line
 * counts the failures not logged.
 */
class StorageFailureLoggingEndToEndTest {
  private static final long INTERVAL_MS = 60_000;

  private final CredentialsEndToEndTest.Capture capture = new CredentialsEndToEndTest.Capture();

  @AfterEach
  void heal() {
    StallingFileSystem.failPathsContaining = null;
    Logger.getLogger(StorageFailureLog.class).removeAppender(capture);
  }

  private long linesAbout(int partition) {
    return capture.lines.stream().filter(l -> l.contains("partition " + partition + " of topic 'failing'")).count();
  }

  @Test
  void failingPartitionsAreLoggedOncePerPartitionPerIntervalOnPutAndGet(@TempDir Path dir) throws Exception {
    Logger.getLogger(StorageFailureLog.class).addAppender(capture);
    ManualClock clock = new ManualClock(System.currentTimeMillis());
    String root = "stall://" + dir.resolve("log").toAbsolutePath();
    try (TalosServer server = TalosServer.start(new ServerConfig(TestServers.props(dir,
        ServerConfig.STORAGE_ROOT_URI, root,
        "hadoop.fs.stall.impl", StallingFileSystem.class.getName(), "hadoop.fs.stall.impl.disable.cache", "true",
        ServerConfig.STORAGE_TAIL_CACHE_BYTES, "0",
        ServerConfig.STORAGE_FAILURE_LOG_INTERVAL_MS, Long.toString(INTERVAL_MS))), clock)) {
      RawApi api = RestartTest.api(server);
      TopicTalosResourceName trn = api.createTopic("failing", 2);
      TopicAndPartition p0 = new TopicAndPartition("failing", trn, 0);
      TopicAndPartition p1 = new TopicAndPartition("failing", trn, 1);
      api.put(p0, List.of("before"));
      api.put(p1, List.of("before"));
      assertEquals(0, capture.lines.size(), capture.lines.toString());

      StallingFileSystem.failPathsContaining = dir.resolve("log").toAbsolutePath().toString();
      for (int i = 0; i < 3; i++) {
        GalaxyTalosException e = assertThrows(GalaxyTalosException.class, () -> api.put(p0, List.of("lost")));
        assertEquals(ErrorCode.HDFS_OPERATION_FAILED, e.getErrorCode(), e.getErrMsg());
      }
      assertThrows(GalaxyTalosException.class, () -> api.put(p1, List.of("lost")));
      assertEquals(1, linesAbout(0), capture.lines.toString());
      assertEquals(1, linesAbout(1), capture.lines.toString());
      assertTrue(capture.lines.get(0).contains("injected storage failure"), capture.lines.get(0));

      // A get of the failing partition within the interval is counted, not logged.
      assertThrows(GalaxyTalosException.class, () -> api.readAll(p0, 0));
      assertEquals(1, linesAbout(0), capture.lines.toString());

      clock.advanceMs(INTERVAL_MS);
      assertThrows(GalaxyTalosException.class, () -> api.readAll(p0, 0));
      assertEquals(2, linesAbout(0), capture.lines.toString());
      String second = capture.lines.stream().filter(l -> l.contains("partition 0 of topic 'failing'")).toList().get(1);
      assertTrue(second.contains("get") || second.contains("open"), second);
      java.util.regex.Matcher suppressed = java.util.regex.Pattern.compile("suppressed=(\\d+)").matcher(second);
      assertTrue(suppressed.find() && Integer.parseInt(suppressed.group(1)) >= 3,
          "two more puts and a get (each at least one failure) were not logged: " + second);
      assertEquals(1, linesAbout(1), "partition 1 had no new failure");
    }
  }
}
