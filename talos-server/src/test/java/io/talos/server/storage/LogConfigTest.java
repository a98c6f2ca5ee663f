package io.talos.server.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class LogConfigTest {
  @Test
  void shouldDefaultToTheDocumentedValues() {
    LogConfig c = LogConfig.defaults();
    assertEquals(256L * 1024 * 1024, c.segmentBytes());
    assertEquals(3_600_000L, c.segmentMs());
    assertEquals(4096, c.indexIntervalBytes());
    assertEquals(Durability.FLUSH, c.durability());
    assertEquals(c, c.toBuilder().build());
  }

  @Test
  void shouldNameEveryInvalidFieldInOneError() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> LogConfig.builder()
        .segmentBytes(0).segmentMs(-1).indexIntervalBytes(0).durability(null)
        .maxBlockBytes(RecordFormat.MAX_PAYLOAD_BYTES + 1).leaseRecoveryTimeoutMs(-5).build());
    for (String expected : new String[] {"segmentBytes=0", "segmentMs=-1", "indexIntervalBytes=0", "durability",
        "maxBlockBytes=" + (RecordFormat.MAX_PAYLOAD_BYTES + 1), "leaseRecoveryTimeoutMs=-5"}) {
      assertTrue(e.getMessage().contains(expected), e.getMessage());
    }
  }
}
