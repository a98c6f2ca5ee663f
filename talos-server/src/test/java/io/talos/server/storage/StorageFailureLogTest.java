package io.talos.server.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.server.ManualClock;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class StorageFailureLogTest {
  @Test
  void logsOncePerPartitionPerIntervalWithPartitionCauseAndSuppressedCount() {
    ManualClock clock = new ManualClock(1_000_000);
    List<String> lines = new ArrayList<>();
    StorageFailureLog log = new StorageFailureLog(clock, 60_000, 100, lines::add);
    IOException cause = new IOException("disk on fire", new IOException("EIO"));
    log.failed("orders", 3, "put", cause);
    log.failed("orders", 3, "put", cause);
    log.failed("orders", 3, "get", cause);
    log.failed("orders", 4, "put", cause);
    assertEquals(2, lines.size(), lines.toString());
    assertTrue(lines.get(0).contains("partition 3 of topic 'orders'") && lines.get(0).contains("disk on fire")
        && lines.get(0).contains("EIO"), lines.get(0));
    assertTrue(lines.get(1).contains("partition 4"), lines.get(1));
    clock.advanceMs(60_000);
    log.failed("orders", 3, "put", cause);
    assertEquals(3, lines.size());
    assertTrue(lines.get(2).contains("suppressed=2"), lines.get(2));
  }
}
