package io.talos.server.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.common.config.ConfigException;
import io.talos.server.ServerConfig;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** cluster.enabled refuses any setup that is not shared, naming the key. */
class ClusterSettingsTest {
  private static ServerConfig config(String... kv) {
    Properties p = new Properties();
    p.setProperty(ServerConfig.CLUSTER_ENABLED, "true");
    p.setProperty(ServerConfig.METADATA_STORE, "hbase");
    p.setProperty(ServerConfig.METADATA_HBASE_ZOOKEEPER_QUORUM, "zk1:2181");
    p.setProperty(ServerConfig.STORAGE_ROOT_URI, "hdfs://nn/talos");
    for (int i = 0; i < kv.length; i += 2) p.setProperty(kv[i], kv[i + 1]);
    return new ServerConfig(p);
  }

  private static String refusal(String... kv) {
    return assertThrows(ConfigException.class, () -> ClusterSettings.from(config(kv))).getMessage();
  }

  @Test
  void shouldNameTheKeyOfEveryRefusal() {
    assertTrue(refusal(ServerConfig.METADATA_STORE, "embedded").contains("metadata.store=hbase"));
    assertTrue(refusal(ServerConfig.STORAGE_ROOT_URI, "").contains("storage.root.uri"));
    assertTrue(refusal(ServerConfig.STORAGE_ROOT_URI, "file:///data").contains("storage.root.uri"));
    assertTrue(refusal(ServerConfig.METADATA_HBASE_ZOOKEEPER_QUORUM, "").contains("cluster.zookeeper.quorum"));
    assertTrue(refusal(ServerConfig.CLUSTER_NODE_ID, "a/b").contains("cluster.node.id"));
    assertTrue(refusal(ServerConfig.CLUSTER_ZOOKEEPER_ROOT, "talos").contains("cluster.zookeeper.root"));
    assertTrue(refusal(ServerConfig.CLUSTER_ADVERTISED_URL, "host:1").contains("cluster.advertised.url"));
  }

  @Test
  void shouldDefaultTheQuorumToHBasesAndBeOffByDefault() {
    assertEquals("zk1:2181", ClusterSettings.from(config()).zookeeperQuorum());
    assertEquals("zk2:2181", ClusterSettings.from(config(ServerConfig.CLUSTER_ZOOKEEPER_QUORUM, "zk2:2181"))
        .zookeeperQuorum());
    assertNull(ClusterSettings.from(new ServerConfig(new Properties())));
  }
}
