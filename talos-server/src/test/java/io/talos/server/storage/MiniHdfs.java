package io.talos.server.storage;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.hdfs.MiniDFSCluster;

/**
 * A MiniDFSCluster for the hdfs:// tests: started once per test class (in {@code @BeforeAll}),
 * base directory under {@code target/minidfs}, no web UIs, 1 s heartbeats so that lease and block
 * recovery take about a second instead of several.
 */
public final class MiniHdfs implements AutoCloseable {
  private final MiniDFSCluster cluster;
  private final Configuration conf;

  private MiniHdfs(MiniDFSCluster cluster, Configuration conf) {
    this.cluster = cluster;
    this.conf = conf;
  }

  /** @param replication the default replication of new files (at most {@code dataNodes}) */
  public static MiniHdfs start(String name, int dataNodes, int replication) throws IOException {
    File base = new File("target/minidfs/" + name + "-" + System.nanoTime()).getAbsoluteFile();
    Files.createDirectories(base.toPath());
    Configuration conf = new Configuration();
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, base.getPath());
    // Explicit, not derived: an HBase mini cluster earlier in the same test JVM leaves the system
    // property hadoop.tmp.dir pointing at a directory it deleted, and the NameNode's web server
    // (started even with http disabled) makes its temp dir under it.
    File tmp = new File(base, "hadoop-tmp");
    Files.createDirectories(tmp.toPath());
    conf.set("hadoop.tmp.dir", tmp.getPath());
    conf.set("hadoop.http.temp.dir", new File(tmp, "http").getPath());
    conf.setInt("dfs.replication", replication);
    conf.setInt("dfs.namenode.replication.min", 1);
    conf.setLong("dfs.blocksize", 1024 * 1024);
    conf.setInt("dfs.heartbeat.interval", 1);
    conf.setInt("dfs.namenode.heartbeat.recheck-interval", 2000);
    conf.setBoolean("dfs.namenode.http.enabled", false);
    conf.set("dfs.namenode.http-address", "127.0.0.1:0");
    conf.set("dfs.datanode.http.address", "127.0.0.1:0");
    // clients give up on a dead DataNode quickly instead of retrying for a minute
    conf.setInt("dfs.client.socket-timeout", 5000);
    conf.setInt("ipc.client.connect.max.retries", 1);
    conf.setInt("ipc.client.connect.max.retries.on.timeouts", 1);
    conf.setInt("dfs.client.block.write.retries", 1);
    // with 2 DataNodes there is no spare to swap into a pipeline: keep writing to the survivor
    conf.set("dfs.client.block.write.replace-datanode-on-failure.policy", "NEVER");
    MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf).numDataNodes(dataNodes).build();
    cluster.waitActive();
    return new MiniHdfs(cluster, conf);
  }

  public MiniDFSCluster cluster() {
    return cluster;
  }

  /** A copy of the cluster's configuration, e.g. for more clients. */
  public Configuration conf() {
    return new Configuration(conf);
  }

  public URI uri() {
    return cluster.getURI();
  }

  /** A new client (its own lease holder, as another server would be); the caller closes it. */
  public FileSystem newClient() throws IOException {
    return FileSystem.newInstance(uri(), conf());
  }

  /**
   * Shuts the cluster down and empties Hadoop's FileSystem cache. Why the cache: the shutdown
   * clears every Hadoop shutdown hook of the JVM, the cache's own among them, while the cache
   * keeps its entries; the cache registers its hook again only when it next fills from empty. An
   * HBase mini cluster started later in the same JVM removes that hook and aborts its master when
   * it is not there ("Failed suppression of fs shutdown hook").
   */
  @Override
  public void close() {
    cluster.shutdown(true);
    try {
      FileSystem.closeAll();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
