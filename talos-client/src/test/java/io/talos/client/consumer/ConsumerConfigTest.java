package io.talos.client.consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.client.consumer.ConsumerConfig.OffsetReset;
import io.talos.client.consumer.ConsumerConfig.StartFrom;
import io.talos.client.ConfigDocs;
import io.talos.common.config.ConfigException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class ConsumerConfigTest {
  @Test
  void defaultsFollowTheSdk() {
    ConsumerConfig c = ConsumerConfig.defaults();
    assertEquals(StartFrom.COMMITTED, c.startFrom());
    assertEquals(OffsetReset.EARLIEST, c.autoOffsetReset());
    assertTrue(c.autoCommit());
    assertEquals(5_000, c.autoCommitIntervalMs());
    assertEquals(10_000, c.autoCommitMessages());
    assertEquals(10_000, c.workerCheckIntervalMs());
    assertEquals(7_000, c.renewIntervalMs());
    assertEquals("", c.workerId());
  }

  @Test
  void readsPropertiesAndNamesEveryBadKey() {
    Properties p = new Properties();
    p.setProperty("start.from", "LATEST");
    p.setProperty("enable.auto.commit", "false");
    ConsumerConfig c = ConsumerConfig.fromProperties(p);
    assertEquals(StartFrom.LATEST, c.startFrom());
    assertFalse(c.autoCommit());
    assertEquals(StartFrom.OFFSET, ConsumerConfig.builder().startOffset(42).build().startFrom());

    ConfigException e = assertThrows(ConfigException.class, () -> ConsumerConfig.builder()
        .processorThreads(0).set("start.from", "yesterday").set("no.such.key", 1)
        .workerId("w".repeat(257)).build());
    assertTrue(e.getMessage().contains("processor.threads=0"), e.getMessage());
    assertTrue(e.getMessage().contains("start.from=YESTERDAY"), e.getMessage());
    assertTrue(e.getMessage().contains("no.such.key: unknown key"), e.getMessage());
    assertTrue(e.getMessage().contains("worker.id: must be at most 256"), e.getMessage());
  }

  /** docs/clients.md lists every key; {@code -Dtalos.writeConf=true} rewrites the table. */
  @Test
  void docsListEveryKey() throws Exception {
    ConfigDocs.assertTableCurrent("consumer", ConsumerConfig.DEFINITION);
  }

}
