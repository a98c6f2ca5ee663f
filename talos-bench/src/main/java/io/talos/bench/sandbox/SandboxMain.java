package io.talos.bench.sandbox;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code bin/talos sandbox --nodes N --dir DIR}: a Talos cluster of N node processes on this
 * machine (see {@link Sandbox}); runs in the foreground until Ctrl-C, then stops the nodes and the
 * mini clusters. {@code bin/talos sandbox start-node I --dir DIR} starts a node of a running
 * sandbox again after it was killed or stopped.
 */
@Command(name = "talos sandbox", mixinStandardHelpOptions = true,
    description = {"A Talos cluster on this machine: an HBase mini cluster (HDFS, ZooKeeper) in this process and"
        + " N Talos nodes in processes of their own (cluster.enabled=true). Prints the node endpoints and writes"
        + " DIR/endpoints, DIR/admin-credential.properties, DIR/nodes/<i>/{talos.properties,pid,node.log};"
        + " runs until Ctrl-C."},
    subcommands = SandboxMain.StartNode.class)
public final class SandboxMain implements Callable<Integer> {
  @Option(names = "--nodes", description = "Talos node processes, 1-9 (default: ${DEFAULT-VALUE}).")
  int nodes = 3;

  @Option(names = "--dir", description = "Sandbox directory (made if absent; must not hold a sandbox already);"
      + " required.")
  Path dir;

  @Option(names = "--node-jvm", description = "JVM options of every node process (default: '${DEFAULT-VALUE}').")
  String nodeJvm = "-Xmx512m";

  @Option(names = "--base-port", description = "0: free ports; P: node i listens on P+3i (API), P+3i+1 (ops),"
      + " P+3i+2 (peer) (default: ${DEFAULT-VALUE}).")
  int basePort;

  @Option(names = "-D", description = "A server key for every node, e.g. -Dcluster.reassign.delay.ms=0.",
      mapFallbackValue = "")
  Map<String, String> overrides = new LinkedHashMap<>();

  public static void main(String[] args) {
    CommandLine cli = new CommandLine(new SandboxMain());
    cli.setExecutionExceptionHandler((e, cmd, parsed) -> {
      System.err.println("talos sandbox: " + e.getMessage());
      return 1;
    });
    int code = cli.execute(args);
    if (code != 0) System.exit(code);
  }

  static List<String> jvmOptions(String s) {
    return Arrays.stream(s.trim().split("\\s+")).filter(x -> !x.isEmpty()).toList();
  }

  @Override
  public Integer call() throws Exception {
    if (dir == null) throw new CommandLine.ParameterException(new CommandLine(this), "--dir DIR is required");
    Sandbox sandbox = Sandbox.start(new Sandbox.Options(nodes, dir, jvmOptions(nodeJvm), basePort, overrides),
        System.err);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      System.err.println("sandbox: stopping the nodes, then the mini clusters");
      sandbox.close();
      stopped.countDown();
    }, "sandbox-shutdown"));
    Path d = sandbox.dir();
    System.out.println("Talos sandbox: " + nodes + " nodes, ZooKeeper " + sandbox.zkQuorum() + ", HDFS "
        + sandbox.hdfsUri());
    for (SandboxNode n : sandbox.nodes()) {
      System.out.println("  node " + n.index() + " " + n.id() + "  " + n.endpoint() + "  ops " + n.opsEndpoint()
          + "  pid " + n.pid() + "  log " + n.log());
    }
    System.out.println("Endpoints: " + d.resolve(Sandbox.ENDPOINTS_FILE));
    System.out.println("Admin credential: " + d.resolve(Sandbox.ADMIN_CREDENTIAL_FILE));
    System.out.println("e.g. bin/talos topic list --endpoint " + sandbox.node(0).endpoint() + " --credential "
        + d.resolve(Sandbox.ADMIN_CREDENTIAL_FILE));
    System.out.println("Restart a killed node: bin/talos sandbox start-node I --dir " + d);
    System.out.println("READY (Ctrl-C stops the nodes, then the mini clusters)");
    System.out.flush();
    stopped.await();
    return 0;
  }

  @Command(name = "start-node", mixinStandardHelpOptions = true,
      description = "Start node I of a running sandbox again (after kill -9, SIGTERM or a drain), same configuration.")
  static final class StartNode implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "I", description = "The node's index (0 to nodes-1).")
    int index;

    @Option(names = "--dir", required = true, description = "The sandbox directory.")
    Path dir;

    @Override
    public Integer call() throws Exception {
      SandboxNode n = Sandbox.startNode(dir, index);
      System.out.println("node " + n.index() + " " + n.id() + " started: " + n.endpoint() + " (pid " + n.pid() + ")");
      return 0;
    }
  }
}
