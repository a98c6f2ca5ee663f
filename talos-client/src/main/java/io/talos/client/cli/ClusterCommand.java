package io.talos.client.cli;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code talos cluster ...}: a cluster's state and drains, through a node's ops port ({@code GET
 * /ops/cluster}, {@code POST /ops/cluster/drain?node=ID}). The drain is accepted only from the
 * node's own host, so run it there (or through an SSH tunnel).
 */
@Command(name = "cluster", description = "Show the cluster's nodes and assignment, drain a node.",
    mixinStandardHelpOptions = true, subcommands = {ClusterCommand.Status.class, ClusterCommand.Drain.class})
final class ClusterCommand extends CommandGroup {

  /** The ops base URL of one node. */
  static final class OpsOption {
    @Option(names = "--ops", defaultValue = "http://127.0.0.1:8081",
        description = "Ops URL of any node (server.ops.port), default ${DEFAULT-VALUE}.")
    String ops;
  }

  private static HttpResponse<String> send(HttpRequest request) throws Exception {
    return HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()
        .send(request, HttpResponse.BodyHandlers.ofString());
  }

  @Command(name = "status", mixinStandardHelpOptions = true,
      description = "Print the nodes with their state, capacity, load, traffic factor and partition counts, and the"
          + " assignment version (JSON).")
  static final class Status implements Callable<Integer> {
    @ParentCommand ClusterCommand parent;
    @CommandLine.Mixin OpsOption options;

    @Override
    public Integer call() throws Exception {
      HttpResponse<String> r = send(HttpRequest.newBuilder(URI.create(options.ops + "/ops/cluster"))
          .timeout(Duration.ofSeconds(10)).GET().build());
      if (r.statusCode() == 404) {
        parent.cli.err().println("error: " + options.ops + " is not a cluster node (cluster.enabled=false)");
        return TalosCli.EXIT_FAILURE;
      }
      (r.statusCode() == 200 ? parent.cli.out() : parent.cli.err()).println(r.body());
      return r.statusCode() == 200 ? 0 : TalosCli.EXIT_FAILURE;
    }
  }

  @Command(name = "drain", mixinStandardHelpOptions = true,
      description = "Start the clean shutdown of NODE: it stops serving its partitions, they move to the other"
          + " nodes at once, it finishes its in-flight requests and exits.")
  static final class Drain implements Callable<Integer> {
    @ParentCommand ClusterCommand parent;
    @CommandLine.Mixin OpsOption options;
    @Parameters(index = "0", paramLabel = "NODE", description = "Node id, as cluster status lists it.")
    String node;

    @Override
    public Integer call() throws Exception {
      HttpResponse<String> r = send(HttpRequest.newBuilder(URI.create(options.ops + "/ops/cluster/drain?node="
          + URLEncoder.encode(node, StandardCharsets.UTF_8))).timeout(Duration.ofSeconds(10))
          .POST(HttpRequest.BodyPublishers.noBody()).build());
      (r.statusCode() == 202 ? parent.cli.out() : parent.cli.err()).println(r.body());
      return r.statusCode() == 202 ? 0 : TalosCli.EXIT_FAILURE;
    }
  }
}
