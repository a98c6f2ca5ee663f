package io.talos.client.producer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.client.codec.CompressionType;
import io.talos.client.ConfigDocs;
import io.talos.common.config.ConfigException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class ProducerConfigTest {
  @Test
  void hasDocumentedDefaults() {
    ProducerConfig c = ProducerConfig.defaults();
    assertEquals(1000, c.batchMaxRecords());
    assertEquals(1024 * 1024, c.batchMaxBytes());
    assertEquals(5, c.lingerMs());
    assertEquals(CompressionType.NONE, c.compressionType());
    assertEquals(32L * 1024 * 1024, c.bufferMemoryBytes());
    assertEquals(60_000, c.maxBlockMs());
    assertEquals(120_000, c.deliveryTimeoutMs());
    assertEquals(Integer.MAX_VALUE, c.retries());
    assertEquals(100, c.retryBackoffMs());
    assertEquals(1_000, c.retryBackoffMaxMs());
    assertEquals(16, c.maxInFlightRequests());
    assertEquals(60_000, c.metadataRefreshIntervalMs());
    assertTrue(c.newPartitioner() instanceof KeyHashPartitioner);
  }

  @Test
  void readsPropertiesAndNamesEveryBadKey() {
    Properties p = new Properties();
    p.setProperty("linger.ms", "20");
    p.setProperty("compression.type", "GZIP");
    p.setProperty("partitioner", "round_robin");
    ProducerConfig c = ProducerConfig.fromProperties(p);
    assertEquals(20, c.lingerMs());
    assertEquals(CompressionType.GZIP, c.compressionType());
    assertTrue(c.newPartitioner() instanceof RoundRobinPartitioner);

    p.setProperty("batch.max.bytes", "0");
    p.setProperty("compression.type", "LZ4");
    p.setProperty("linger.msec", "1");
    ConfigException e = assertThrows(ConfigException.class, () -> ProducerConfig.fromProperties(p));
    assertTrue(e.getMessage().contains("batch.max.bytes=0: must be between 1 and 16777216"), e.getMessage());
    assertTrue(e.getMessage().contains("compression.type=LZ4: must be one of NONE, SNAPPY, GZIP"), e.getMessage());
    assertTrue(e.getMessage().contains("unknown configuration key 'linger.msec'"), e.getMessage());
  }

  @Test
  void checksBackoffOrderAndPartitionerClass() {
    ConfigException backoff = assertThrows(ConfigException.class,
        () -> ProducerConfig.builder().retryBackoffMs(500).retryBackoffMaxMs(100).build());
    assertTrue(backoff.getMessage().contains("retry.backoff.max.ms=100: must be >= retry.backoff.ms (500)"),
        backoff.getMessage());
    ConfigException missing = assertThrows(ConfigException.class,
        () -> ProducerConfig.builder().partitioner("com.example.NoSuchPartitioner").build());
    assertTrue(missing.getMessage().contains("no such class"), missing.getMessage());
    ConfigException notOne = assertThrows(ConfigException.class,
        () -> ProducerConfig.builder().partitioner(String.class.getName()).build());
    assertTrue(notOne.getMessage().contains("does not implement"), notOne.getMessage());
    assertTrue(ProducerConfig.builder().partitioner(FirstPartition.class.getName()).build()
        .newPartitioner() instanceof FirstPartition);
    Partitioner mine = (r, n) -> n - 1;
    assertSame(mine, ProducerConfig.builder().partitioner(mine).build().newPartitioner());
  }

  /**
   * docs/clients.md lists every key as {@link ProducerConfig#DEFINITION} declares it; with
   * {@code -Dtalos.writeConf=true} the table is rewritten instead.
   */
  @Test
  void docsListEveryKey() throws Exception {
    ConfigDocs.assertTableCurrent("producer", ProducerConfig.DEFINITION);
  }


  /** A user partitioner named by class. */
  public static final class FirstPartition implements Partitioner {
    @Override
    public int partition(ProducerRecord record, int partitionCount) {
      return 0;
    }
  }
}
