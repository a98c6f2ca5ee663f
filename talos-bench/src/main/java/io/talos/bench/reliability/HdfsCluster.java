package io.talos.bench.reliability;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.MiniDFSCluster;

/**
 * A MiniDFSCluster in this JVM for the hdfs scenarios (as talos-server's tests start it): no web
 * UIs, 1 s heartbeats so that lease and block recovery take about a second, clients that give up
 * on a dead DataNode quickly.
 */
final class HdfsCluster implements AutoCloseable {
  private final MiniDFSCluster cluster;

  private HdfsCluster(MiniDFSCluster cluster) {
    this.cluster = cluster;
  }

  static HdfsCluster start(Path baseDir, int dataNodes, int replication) throws IOException {
    File base = baseDir.toAbsolutePath().toFile();
    File tmp = new File(base, "hadoop-tmp");
    Files.createDirectories(tmp.toPath());
    Configuration conf = new Configuration();
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, base.getPath());
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
    MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf).numDataNodes(dataNodes).build();
    cluster.waitActive();
    return new HdfsCluster(cluster);
  }

  URI uri() {
    return cluster.getURI();
  }

  MiniDFSCluster cluster() {
    return cluster;
  }

  /**
   * Server keys for a Talos server (in another process) writing to this cluster: the client side
   * of the settings above, so that it also gives up on a dead DataNode quickly.
   */
  java.util.Map<String, String> serverProps(String root, int replication) {
    java.util.Map<String, String> p = new java.util.LinkedHashMap<>();
    p.put("storage.root.uri", uri() + root);
    p.put("hadoop.dfs.replication", String.valueOf(replication));
    p.put("hadoop.dfs.client.socket-timeout", "5000");
    p.put("hadoop.ipc.client.connect.max.retries", "1");
    p.put("hadoop.ipc.client.connect.max.retries.on.timeouts", "1");
    p.put("hadoop.dfs.client.block.write.retries", "1");
    p.put("hadoop.dfs.client.block.write.replace-datanode-on-failure.policy", "NEVER");
    return p;
  }

  @Override
  public void close() {
    cluster.shutdown(true);
  }
}
