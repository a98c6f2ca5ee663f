package io.talos.server.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.util.List;

/** Helpers of the DataNode restart tests: appends and reads retried like a producer and a consumer. */
final class DataNodeFaults {
  static final long T0 = 1_700_000_000_000L;
  static final long RETRY_FOR_MS = 60_000;

  private DataNodeFaults() {}

  /** Appends one block, retrying failed appends (each must leave the end offset unchanged). */
  static int appendRetrying(LogFixture fx, PartitionLog log, int payloadBytes) throws Exception {
    long deadline = System.currentTimeMillis() + RETRY_FOR_MS;
    int failures = 0;
    while (true) {
      long end = log.endOffset();
      try {
        fx.append(log, T0, 1, payloadBytes);
        return failures;
      } catch (IOException e) {
        if (e instanceof PartitionFencedException) throw e;
        assertEquals(end, log.endOffset(), "a failed append acknowledged nothing");
        failures++;
        if (System.currentTimeMillis() > deadline) throw e;
        Thread.sleep(200);
      }
    }
  }

  /** Reads the whole log back, retrying while the file system answers with errors. */
  static void assertReadableRetrying(LogFixture fx, PartitionLog log) throws Exception {
    long deadline = System.currentTimeMillis() + RETRY_FOR_MS;
    while (true) {
      try {
        fx.assertSequentialReadMatches(log, 0, 17, 4096);
        fx.assertEveryBlockReadable(log, 0);
        return;
      } catch (IOException e) {
        if (System.currentTimeMillis() > deadline) throw e;
        Thread.sleep(200);
      }
    }
  }

  static List<BlockToAppend> oneBlock(long offset) {
    return List.of(LogFixture.block(offset, 1, 100));
  }
}
