package io.talos.server.cluster;

import java.util.concurrent.Executor;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.Watcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Topic DDL reaching every node at once: HBase holds the topics (the truth); the znode {@code
 * <root>/topics-version} only says "topics changed". A node that created, changed or deleted a topic
 * bumps it (a setData; its data is irrelevant, ZooKeeper's version counts); every node watches it
 * and drops its cached topics when it moves, so its next lookup reads HBase. Without the znode the
 * cache's TTL ({@code metadata.cache.ttl.ms}) still bounds the staleness; with it a change is seen
 * in about one ZooKeeper round trip.
 *
 * <p>Thread-safe.
 */
public final class TopicChangeBroadcast {
  private static final Logger LOG = LoggerFactory.getLogger(TopicChangeBroadcast.class);

  private final CuratorFramework zk;
  private final String path;
  private final Runnable onChange;
  private final Executor executor;
  private final Watcher watcher;
  private volatile boolean closed;

  /** @param onChange drops cached topics; run on {@code executor} after every change seen */
  public TopicChangeBroadcast(CuratorFramework zk, String root, Executor executor, Runnable onChange) throws Exception {
    this.zk = zk;
    this.path = root + "/topics-version";
    this.onChange = onChange;
    this.executor = executor;
    this.watcher = event -> {
      if (!closed && event.getType() != Watcher.Event.EventType.None) executor.execute(this::watchAndApply);
    };
    try {
      zk.create().creatingParentContainersIfNeeded().forPath(path, new byte[0]);
    } catch (org.apache.zookeeper.KeeperException.NodeExistsException e) {
      // another node created it
    }
    zk.checkExists().usingWatcher(watcher).forPath(path);
  }

  private void watchAndApply() {
    if (closed) return;
    try {
      zk.checkExists().usingWatcher(watcher).forPath(path);
    } catch (Exception e) {
      LOG.warn("Could not watch {} again; cached topics expire on their TTL meanwhile", path, e);
    }
    onChange.run();
  }

  /** Tells every node that topics changed. Failure is logged: caches still expire on their TTL. */
  public void bump() {
    try {
      zk.setData().forPath(path, new byte[0]);
    } catch (Exception e) {
      LOG.warn("Could not bump {}: other nodes see the topic change within metadata.cache.ttl.ms", path, e);
    }
  }

  public void close() {
    closed = true;
  }
}
