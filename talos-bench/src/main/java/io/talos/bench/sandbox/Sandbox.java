package io.talos.bench.sandbox;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseTestingUtility;

/**
 * A Talos cluster on one machine, every node a real process: an HBase mini cluster (with its
 * MiniDFSCluster and ZooKeeper) in this JVM, and N Talos nodes in JVMs of their own with
 * {@code cluster.enabled=true}, metadata in that HBase, partition data on that HDFS, one
 * generated peer secret. Nodes can be killed (SIGKILL), paused (SIGSTOP), stopped and started
 * again like the processes of a real deployment.
 *
 * <p>Directory layout (everything a node needs is written before it starts, so {@code bin/talos
 * sandbox start-node} can start it again from another JVM):
 *
 * <pre>
 * DIR/endpoints                      one client URL per line, node 0 first
 * DIR/admin-credential.properties    the admin credential (secretKeyId, secretKey), mode 0600
 * DIR/cluster-peer-secret            the cluster peer secret, mode 0600
 * DIR/sandbox.properties             ZooKeeper quorum, hdfs:// URI, node JVM options, the sandbox's pid
 * DIR/minicluster/                   HBase, HDFS and ZooKeeper data
 * DIR/nodes/&lt;i&gt;/talos.properties   node i's whole configuration (fixed ports)
 * DIR/nodes/&lt;i&gt;/pid, node.log, audit.log, data/
 * </pre>
 *
 * <p>Ports are picked once, when the sandbox is made, below the kernel's ephemeral range (see
 * {@link FixedPorts}), and stay the node's across restarts, so a client keeps reaching it. Node 0 starts first and creates the admin credential (in HBase and
 * the shared file); the others find it there.
 *
 * <p>Not thread-safe: one thread starts, signals and closes it.
 */
public final class Sandbox implements AutoCloseable {
  static final String ENDPOINTS_FILE = "endpoints";
  static final String ADMIN_CREDENTIAL_FILE = "admin-credential.properties";
  static final String PEER_SECRET_FILE = "cluster-peer-secret";
  static final String SANDBOX_FILE = "sandbox.properties";
  /** Jars of the mini clusters: on this JVM's class path, never on a node's (bin/talos server has neither). */
  private static final List<String> NOT_ON_NODE_CLASSPATH = List.of("hbase-shaded-testing-util",
      "hadoop-client-minicluster", "junit-4", File.separator + "junit" + File.separator);
  /** Generous: on a loaded machine node 0 alone spends minutes creating the HBase tables. */
  static final long NODE_START_TIMEOUT_MS = 600_000;
  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * What to start.
   *
   * @param nodes number of Talos nodes (1-9)
   * @param dir the sandbox directory (made if absent; must not hold a sandbox already)
   * @param nodeJvmOptions JVM options of every node process, e.g. {@code -Xmx512m}
   * @param basePort 0: free ports picked now; otherwise node i listens on basePort + 3i (API),
   *     + 3i + 1 (ops), + 3i + 2 (peer)
   * @param overrides server keys written into every node's configuration after the sandbox's own
   * @param miniClusterConf Hadoop/HBase keys of the mini clusters, after the sandbox's own (e.g. more
   *     DataNode transfer threads for thousands of partitions open for writing)
   */
  public record Options(int nodes, Path dir, List<String> nodeJvmOptions, int basePort, Map<String, String> overrides,
      Map<String, String> miniClusterConf) {
    /** The mini clusters with the sandbox's settings only. */
    public Options(int nodes, Path dir, List<String> nodeJvmOptions, int basePort, Map<String, String> overrides) {
      this(nodes, dir, nodeJvmOptions, basePort, overrides, Map.of());
    }

    public Options {
      if (nodes < 1 || nodes > 9) throw new IllegalArgumentException("--nodes must be 1-9, got " + nodes);
      if (basePort != 0 && (basePort < 1024 || basePort + 3 * nodes > 65535)) {
        throw new IllegalArgumentException("--base-port must be 0 (free ports) or 1024-" + (65535 - 3 * nodes)
            + ", got " + basePort);
      }
      nodeJvmOptions = List.copyOf(nodeJvmOptions);
      overrides = Map.copyOf(overrides);
      miniClusterConf = Map.copyOf(miniClusterConf);
    }
  }

  private final Path dir;
  private final HBaseTestingUtility hbase;
  private final String zkQuorum;
  private final String hdfsUri;
  private final List<SandboxNode> nodes;
  private final PrintStream out;

  private Sandbox(Path dir, HBaseTestingUtility hbase, String zkQuorum, String hdfsUri, List<SandboxNode> nodes,
      PrintStream out) {
    this.dir = dir;
    this.hbase = hbase;
    this.zkQuorum = zkQuorum;
    this.hdfsUri = hdfsUri;
    this.nodes = nodes;
    this.out = out;
  }

  /**
   * Starts the mini clusters, writes every node's configuration, starts the nodes and waits until
   * each sees all of them. Progress goes to {@code out}.
   */
  public static Sandbox start(Options o, PrintStream out) throws Exception {
    Path dir = o.dir().toAbsolutePath();
    Files.createDirectories(dir);
    if (Files.exists(dir.resolve(SANDBOX_FILE))) {
      throw new IllegalArgumentException(dir + " holds a sandbox already (" + SANDBOX_FILE
          + "); use a new --dir, or delete it");
    }
    out.println("sandbox: starting the HBase mini cluster (HDFS, ZooKeeper, HBase) in " + dir.resolve("minicluster"));
    HBaseTestingUtility hbase = startMiniClusters(dir.resolve("minicluster"), o.miniClusterConf());
    Sandbox sandbox = null;
    try {
      String zkQuorum = "127.0.0.1:" + hbase.getZkCluster().getClientPort();
      String hdfsUri = hbase.getDFSCluster().getFileSystem().getUri().toString();
      out.println("sandbox: ZooKeeper " + zkQuorum + ", HDFS " + hdfsUri);
      writeSecret(dir.resolve(PEER_SECRET_FILE));
      List<SandboxNode> nodes = new ArrayList<>();
      FixedPorts fixedPorts = new FixedPorts();
      for (int i = 0; i < o.nodes(); i++) {
        Path nodeDir = SandboxNode.nodeDir(dir, i);
        Files.createDirectories(nodeDir);
        Properties p = nodeConfig(dir, i, o, zkQuorum, hdfsUri, fixedPorts);
        try (OutputStream w = Files.newOutputStream(nodeDir.resolve(SandboxNode.CONFIG_FILE))) {
          p.store(w, "Talos sandbox node " + i + " (bin/talos sandbox start-node " + i + " --dir " + dir + ")");
        }
        nodes.add(new SandboxNode(i, nodeDir, p, o.nodeJvmOptions(), ProcessHandle.current().pid()));
      }
      Properties s = new Properties();
      s.setProperty("nodes", Integer.toString(o.nodes()));
      s.setProperty("zookeeper.quorum", zkQuorum);
      s.setProperty("hdfs.uri", hdfsUri);
      s.setProperty("node.jvm.options", String.join(" ", o.nodeJvmOptions()));
      s.setProperty("pid", Long.toString(ProcessHandle.current().pid()));
      try (OutputStream w = Files.newOutputStream(dir.resolve(SANDBOX_FILE))) {
        s.store(w, "Talos sandbox: the process holding the mini clusters, and what every node is started with");
      }
      Files.writeString(dir.resolve(ENDPOINTS_FILE), nodes.stream().map(SandboxNode::endpoint)
          .collect(Collectors.joining("\n", "", "\n")), StandardCharsets.UTF_8);
      sandbox = new Sandbox(dir, hbase, zkQuorum, hdfsUri, nodes, out);
      sandbox.startAll();
      return sandbox;
    } catch (Exception | Error e) {
      if (sandbox != null) {
        sandbox.close();
      } else {
        hbase.shutdownMiniCluster();
      }
      throw e;
    }
  }

  private static HBaseTestingUtility startMiniClusters(Path base, Map<String, String> extra) throws Exception {
    Files.createDirectories(base);
    // HBaseTestingUtility puts its data (and the DFS's) under this directory (a system property, read once).
    System.setProperty("test.build.data.basedirectory", base.toString());
    HBaseTestingUtility hbase = new HBaseTestingUtility();
    Configuration conf = hbase.getConfiguration();
    conf.setInt("hbase.master.info.port", -1);
    conf.setInt("hbase.regionserver.info.port", -1);
    conf.set("hadoop.tmp.dir", base.resolve("hadoop-tmp").toString());
    // The NameNode notices a dead writer's lease and finishes block recovery in about a second.
    conf.setInt("dfs.heartbeat.interval", 1);
    conf.setInt("dfs.namenode.heartbeat.recheck-interval", 2000);
    conf.setBoolean("dfs.namenode.http.enabled", false);
    conf.set("dfs.namenode.http-address", "127.0.0.1:0");
    conf.set("dfs.datanode.http.address", "127.0.0.1:0");
    extra.forEach(conf::set);
    hbase.startMiniCluster();
    return hbase;
  }

  /** A node's configuration: the sandbox's keys, then {@link Options#overrides()}. */
  private static Properties nodeConfig(Path dir, int i, Options o, String zkQuorum, String hdfsUri,
      FixedPorts fixedPorts) throws IOException {
    Map<String, String> c = new LinkedHashMap<>();
    c.put("server.host", "127.0.0.1");
    int[] ports = o.basePort() == 0 ? new int[] {fixedPorts.next(), fixedPorts.next(), fixedPorts.next()}
        : new int[] {o.basePort() + 3 * i, o.basePort() + 3 * i + 1, o.basePort() + 3 * i + 2};
    c.put("server.port", Integer.toString(ports[0]));
    c.put("server.ops.port", Integer.toString(ports[1]));
    c.put("server.data.dir", SandboxNode.nodeDir(dir, i).resolve("data").toString());
    c.put("auth.admin.credential.file", dir.resolve(ADMIN_CREDENTIAL_FILE).toString());
    c.put("cluster.enabled", "true");
    c.put("cluster.node.id", "node-" + i);
    c.put("cluster.peer.host", "127.0.0.1");
    c.put("cluster.peer.port", Integer.toString(ports[2]));
    c.put("cluster.peer.secret.file", dir.resolve(PEER_SECRET_FILE).toString());
    c.put("cluster.zookeeper.quorum", zkQuorum);
    c.put("metadata.store", "hbase");
    c.put("metadata.hbase.zookeeper.quorum", zkQuorum);
    c.put("storage.root.uri", hdfsUri + "/talos");
    // One DataNode: one replica; a client that gives up on a dead DataNode quickly.
    c.put("hadoop.dfs.replication", "1");
    c.put("hadoop.dfs.client.block.write.replace-datanode-on-failure.policy", "NEVER");
    c.putAll(o.overrides());
    Properties p = new Properties();
    c.forEach(p::setProperty);
    return p;
  }

  private static void writeSecret(Path file) throws IOException {
    byte[] b = new byte[32];
    new SecureRandom().nextBytes(b);
    Files.deleteIfExists(file);
    try {
      Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    } catch (UnsupportedOperationException e) {
      Files.createFile(file);
    }
    Files.writeString(file, HexFormat.of().formatHex(b) + "\n", StandardCharsets.UTF_8);
  }

  /** Node 0 first (it creates the admin credential), then the others together. */
  private void startAll() throws Exception {
    String cp = nodeClasspath();
    out.println("sandbox: starting node 0");
    nodes.get(0).start(cp, NODE_START_TIMEOUT_MS);
    if (nodes.size() > 1) {
      out.println("sandbox: starting nodes 1-" + (nodes.size() - 1));
      ExecutorService pool = Executors.newFixedThreadPool(nodes.size() - 1);
      try {
        List<Future<?>> started = new ArrayList<>();
        for (SandboxNode n : nodes.subList(1, nodes.size())) {
          started.add(pool.submit(() -> {
            n.start(cp, NODE_START_TIMEOUT_MS);
            return null;
          }));
        }
        for (Future<?> f : started) f.get();
      } finally {
        pool.shutdownNow();
      }
    }
    awaitMembers(nodes, nodes.size(), 60_000);
  }

  /** Set by bin/talos: the server's class path, as bin/talos server runs it. */
  static final String NODE_CLASSPATH_PROPERTY = "talos.sandbox.node.classpath";

  /**
   * The class path of a node process: {@value #NODE_CLASSPATH_PROPERTY} if set, else this JVM's
   * without the mini clusters' jars (a node has the server's dependencies only).
   */
  static String nodeClasspath() {
    String set = System.getProperty(NODE_CLASSPATH_PROPERTY);
    if (set != null && !set.isEmpty()) return set;
    return Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
        .filter(e -> NOT_ON_NODE_CLASSPATH.stream().noneMatch(e::contains))
        .collect(Collectors.joining(File.pathSeparator));
  }

  /**
   * Waits until every node of {@code live} answers {@code /ops/cluster} as serving with
   * {@code members} ACTIVE members.
   */
  public static void awaitMembers(List<SandboxNode> live, int members, long timeoutMs)
      throws IOException, InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMs;
    String last = "";
    while (true) {
      boolean all = true;
      for (SandboxNode n : live) {
        JsonNode s = status(n);
        if (s == null || !s.path("serving").asBoolean()) {
          all = false;
          last = n + ": " + s;
          break;
        }
        long active = 0;
        for (JsonNode m : s.path("nodes")) if ("ACTIVE".equals(m.path("state").asText())) active++;
        if (active != members) {
          all = false;
          last = n + " sees " + active + " active members: " + s;
          break;
        }
      }
      if (all) return;
      if (System.currentTimeMillis() > deadline) {
        throw new IOException("the nodes did not see " + members + " members within " + timeoutMs + " ms; " + last);
      }
      Thread.sleep(100);
    }
  }

  /** {@code GET /ops/cluster} of a node, or null if it does not answer. */
  public static JsonNode status(SandboxNode n) {
    try {
      HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(n.opsEndpoint() + "/ops/cluster"))
          .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
      return r.statusCode() == 200 ? JSON.readTree(r.body()) : null;
    } catch (IOException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  /**
   * {@code bin/talos sandbox start-node}: starts node {@code index} of the sandbox in {@code dir}
   * again, with the configuration and JVM options it was made with. The sandbox process (the mini
   * clusters) must still run.
   */
  public static SandboxNode startNode(Path dir, int index) throws Exception {
    dir = dir.toAbsolutePath();
    Path file = dir.resolve(SANDBOX_FILE);
    if (!Files.exists(file)) throw new IllegalArgumentException("no sandbox in " + dir + " (" + file + " is missing)");
    Properties s = new Properties();
    try (InputStream in = Files.newInputStream(file)) {
      s.load(in);
    }
    long pid = Long.parseLong(s.getProperty("pid"));
    if (ProcessHandle.of(pid).filter(ProcessHandle::isAlive).isEmpty()) {
      throw new IllegalStateException("the sandbox process (pid " + pid + ", the mini clusters) is not running;"
          + " start a new sandbox");
    }
    int count = Integer.parseInt(s.getProperty("nodes"));
    if (index < 0 || index >= count) {
      throw new IllegalArgumentException("node must be 0-" + (count - 1) + ", got " + index);
    }
    List<String> jvm = Arrays.stream(s.getProperty("node.jvm.options", "").trim().split("\\s+"))
        .filter(x -> !x.isEmpty()).toList();
    SandboxNode node = SandboxNode.load(dir, index, jvm, pid);
    node.start(nodeClasspath(), NODE_START_TIMEOUT_MS);
    return node;
  }

  /** Starts node {@code i} of this sandbox again (after {@link SandboxNode#kill} or {@link SandboxNode#stop}). */
  public void restart(int i) throws IOException, InterruptedException {
    nodes.get(i).start(nodeClasspath(), NODE_START_TIMEOUT_MS);
  }

  public List<SandboxNode> nodes() {
    return nodes;
  }

  public SandboxNode node(int i) {
    return nodes.get(i);
  }

  public Path dir() {
    return dir;
  }

  public Path adminCredentialFile() {
    return dir.resolve(ADMIN_CREDENTIAL_FILE);
  }

  public String zkQuorum() {
    return zkQuorum;
  }

  public String hdfsUri() {
    return hdfsUri;
  }

  /**
   * Stops every node that runs (SIGCONT first if paused, then SIGTERM: each drains and exits),
   * then the mini clusters.
   */
  @Override
  public void close() {
    ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, nodes.size()));
    try {
      List<Future<?>> stopped = new ArrayList<>();
      for (SandboxNode n : nodes) {
        stopped.add(pool.submit(() -> {
          if (!n.alive()) return null;
          try {
            n.resume(); // a paused process would never handle SIGTERM
          } catch (IOException e) {
            // gone meanwhile
          }
          n.stop();
          return null;
        }));
      }
      for (Future<?> f : stopped) {
        try {
          f.get();
        } catch (Exception e) {
          out.println("sandbox: stopping a node failed: " + e);
        }
      }
    } finally {
      pool.shutdownNow();
    }
    out.println("sandbox: nodes stopped; stopping the mini clusters");
    try {
      hbase.shutdownMiniCluster();
    } catch (Exception e) {
      out.println("sandbox: stopping the mini clusters failed: " + e);
    }
  }
}
