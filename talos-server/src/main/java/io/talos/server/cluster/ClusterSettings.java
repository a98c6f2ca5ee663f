package io.talos.server.cluster;

import io.talos.common.config.ConfigException;
import io.talos.server.ServerConfig;
import java.net.URI;

/**
 * The {@code cluster.*} keys of a node, checked together when {@code cluster.enabled=true}: a
 * cluster needs state every node shares, so anything that would make a node keep its own is
 * refused at start with a message naming the key (never a node that quietly serves alone).
 *
 * @param nodeId this node's id, or empty for the default (host_port of the bound endpoint)
 * @param zookeeperQuorum the membership's quorum (the HBase one unless set)
 * @param zookeeperRoot the cluster's root znode
 * @param loadFactors how measured loads scale the ring ({@code cluster.assignment.load.*})
 * @param loadPublishing how this node measures and publishes its load ({@code cluster.load.*} and
 *     whether it sheds)
 */
public record ClusterSettings(String nodeId, int capacity, String advertisedUrl, String zookeeperQuorum,
    String zookeeperRoot, long sessionTimeoutMs, long reassignDelayMs, int vnodesPerCapacity, long drainTimeoutMs,
    LoadFactors loadFactors, LoadPublisher.Settings loadPublishing) {

  /** Settings without shedding by load (the capacity-only map). */
  public ClusterSettings(String nodeId, int capacity, String advertisedUrl, String zookeeperQuorum,
      String zookeeperRoot, long sessionTimeoutMs, long reassignDelayMs, int vnodesPerCapacity, long drainTimeoutMs) {
    this(nodeId, capacity, advertisedUrl, zookeeperQuorum, zookeeperRoot, sessionTimeoutMs, reassignDelayMs,
        vnodesPerCapacity, drainTimeoutMs, LoadFactors.NONE, LoadPublisher.Settings.OFF);
  }

  /** Ids are znode names and appear in URLs and logs: a small safe alphabet. */
  static final String NODE_ID_PATTERN = "[A-Za-z0-9._-]{1,128}";

  /** The settings of a node with {@code cluster.enabled=true}, or null when it is off. */
  public static ClusterSettings from(ServerConfig config) {
    if (!config.getBoolean(ServerConfig.CLUSTER_ENABLED)) return null;
    String store = config.getString(ServerConfig.METADATA_STORE);
    if (!"hbase".equals(store)) {
      throw new ConfigException(ServerConfig.CLUSTER_ENABLED + "=true requires " + ServerConfig.METADATA_STORE
          + "=hbase (the metadata every node shares); it is " + store + ".");
    }
    String root = config.getString(ServerConfig.STORAGE_ROOT_URI);
    String scheme = root == null || root.isEmpty() ? null : URI.create(root).getScheme();
    if (!"hdfs".equals(scheme)) {
      throw new ConfigException(ServerConfig.CLUSTER_ENABLED + "=true requires " + ServerConfig.STORAGE_ROOT_URI
          + " on shared storage with leases (hdfs://namenode/path); it is "
          + (root == null || root.isEmpty() ? "empty (a local directory)" : root) + ".");
    }
    String quorum = config.getString(ServerConfig.CLUSTER_ZOOKEEPER_QUORUM);
    if (quorum == null || quorum.isBlank()) quorum = config.getString(ServerConfig.METADATA_HBASE_ZOOKEEPER_QUORUM);
    if (quorum == null || quorum.isBlank()) {
      throw new ConfigException(ServerConfig.CLUSTER_ENABLED + "=true requires a ZooKeeper quorum: set "
          + ServerConfig.CLUSTER_ZOOKEEPER_QUORUM + " (or " + ServerConfig.METADATA_HBASE_ZOOKEEPER_QUORUM + ").");
    }
    String nodeId = config.getString(ServerConfig.CLUSTER_NODE_ID);
    if (nodeId == null) nodeId = "";
    if (!nodeId.isEmpty() && !nodeId.matches(NODE_ID_PATTERN)) {
      throw new ConfigException(ServerConfig.CLUSTER_NODE_ID + " '" + nodeId
          + "' is invalid: 1 to 128 letters, digits, '.', '_' or '-'.");
    }
    String zkRoot = config.getString(ServerConfig.CLUSTER_ZOOKEEPER_ROOT);
    if (!zkRoot.startsWith("/") || zkRoot.endsWith("/") || zkRoot.contains("//")) {
      throw new ConfigException(ServerConfig.CLUSTER_ZOOKEEPER_ROOT + " '" + zkRoot
          + "' is invalid: an absolute znode path such as /talos, without a trailing '/'.");
    }
    String advertised = config.getString(ServerConfig.CLUSTER_ADVERTISED_URL);
    if (advertised == null) advertised = "";
    if (!advertised.isEmpty() && !advertised.matches("https?://[^/\\s]+")) {
      throw new ConfigException(ServerConfig.CLUSTER_ADVERTISED_URL + " '" + advertised
          + "' is invalid: http://host:port (or https://), nothing after the port.");
    }
    return new ClusterSettings(nodeId, config.getInt(ServerConfig.CLUSTER_NODE_CAPACITY), advertised, quorum.trim(),
        zkRoot, config.getLong(ServerConfig.CLUSTER_ZOOKEEPER_SESSION_TIMEOUT_MS),
        config.getLong(ServerConfig.CLUSTER_REASSIGN_DELAY_MS),
        config.getInt(ServerConfig.CLUSTER_ASSIGNMENT_VNODES_PER_CAPACITY),
        config.getLong(ServerConfig.CLUSTER_DRAIN_TIMEOUT_MS),
        new LoadFactors(config.getInt(ServerConfig.CLUSTER_ASSIGNMENT_LOAD_FACTOR_MIN_PERCENT),
            config.getInt(ServerConfig.CLUSTER_ASSIGNMENT_LOAD_FACTOR_STEPS),
            config.getLong(ServerConfig.CLUSTER_ASSIGNMENT_LOAD_FLOOR_PER_SEC)),
        new LoadPublisher.Settings(config.getBoolean(ServerConfig.CLUSTER_ASSIGNMENT_LOAD_SHEDDING_ENABLED),
            config.getLong(ServerConfig.CLUSTER_LOAD_WINDOW_MS), config.getLong(ServerConfig.CLUSTER_LOAD_PUBLISH_INTERVAL_MS),
            config.getInt(ServerConfig.CLUSTER_LOAD_CHANGE_THRESHOLD_PERCENT)));
  }
}
