package io.talos.bench.reliability;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code bin/talos reliability <scenario> [options]}: the long forms of the reliability scenarios
 * (the JUnit tests of this package run the short forms in CI). Each prints its markdown table row
 * on stdout and appends it, with the command and the date, to {@code --out}. Exit status 1 when an
 * acknowledged message was lost, duplicated or reordered.
 */
@Command(name = "talos reliability", mixinStandardHelpOptions = true,
    description = "Checks that no acknowledged message is lost: crash cycles, power cuts, corrupt segments,"
        + " DataNode faults, soak.",
    subcommands = {ReliabilityMain.Crash.class, ReliabilityMain.PowerCutCommand.class, ReliabilityMain.Corrupt.class,
        ReliabilityMain.DataNodes.class, ReliabilityMain.Fuzz.class, ReliabilityMain.SoakCommand.class,
        ReliabilityMain.Cluster.class})
public final class ReliabilityMain {
  private ReliabilityMain() {}

  public static void main(String[] args) {
    System.exit(new CommandLine(ReliabilityMain.class).execute(args));
  }

  /** Options of every scenario, and the run: work directory, report, exit status. */
  abstract static class Scenario implements Callable<Integer> {
    @Option(names = "--out", description = "Markdown file the result rows are appended to (default: ${DEFAULT-VALUE}).")
    Path out = Path.of("target", "reliability-results.md");

    @Option(names = "--work-dir", description = "Where the scenario's data goes (deleted afterwards unless --keep)"
        + " (default: a new temp directory).")
    Path workDir;

    @Option(names = "--keep", description = "Keep the work directory (server logs, data) for a look.")
    boolean keep;

    @Option(names = "--seed", description = "Random seed (default: the time).")
    long seed = System.currentTimeMillis();

    @Option(names = "--server-jvm", description = "JVM options of the server process (default: '${DEFAULT-VALUE}').")
    String serverJvm = "-Xmx512m";

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    abstract List<Tally> run(Path work, Progress progress) throws Exception;

    @Override
    public Integer call() throws Exception {
      Path work = workDir != null ? Files.createDirectories(workDir) : Files.createTempDirectory("talos-reliability-");
      Progress progress = new Progress(System.err);
      // originalArgs: the arguments of the whole command line, this subcommand's name first
      String command = "bin/talos reliability " + String.join(" ", spec.commandLine().getParseResult().originalArgs())
          + " (seed " + seed + ")";
      progress.note("running " + command + " in " + work);
      List<Tally> tallies;
      try {
        tallies = run(work, progress);
      } finally {
        if (!keep) CorruptSegments.deleteTree(work);
      }
      StringBuilder md = new StringBuilder();
      md.append("\n`").append(command.trim()).append("`, ").append(Instant.now().truncatedTo(ChronoUnit.SECONDS))
          .append("\n\n").append(Tally.header()).append('\n');
      for (Tally t : tallies) md.append(t.row()).append('\n');
      System.out.print(md);
      if (out.getParent() != null) Files.createDirectories(out.getParent());
      Files.writeString(out, md, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
      return tallies.stream().allMatch(Tally::clean) ? 0 : 1;
    }
  }

  @Command(name = "crash", mixinStandardHelpOptions = true,
      description = "Scenario 1: SIGKILL the server process at random moments under produce, restart, read back.")
  static final class Crash extends Scenario {
    @Option(names = "--cycles", description = "Kill/restart cycles per variant (default: ${DEFAULT-VALUE}).")
    int cycles = 100;

    @Option(names = "--variants", split = ",", description = "local-sync, local-flush, hdfs (default: ${DEFAULT-VALUE}).")
    List<String> variants = new ArrayList<>(List.of("local-sync", "local-flush", "hdfs"));

    @Option(names = "--partitions", description = "Partitions, one producer each (default: ${DEFAULT-VALUE}).")
    int partitions = 4;

    @Option(names = "--min-run-ms", description = "Least produce time before a kill (default: ${DEFAULT-VALUE}).")
    long minRunMs = 300;

    @Option(names = "--max-run-ms", description = "Most produce time before a kill (default: ${DEFAULT-VALUE}).")
    long maxRunMs = 2000;

    @Option(names = "--producers", split = ",", description = "simple (our SimpleProducer), talos (our async"
        + " idempotent TalosProducer, retrying through the kills), sdk (the official SDK 2.0.2's SimpleProducer);"
        + " each runs every variant (default: ${DEFAULT-VALUE}).")
    List<String> producers = new ArrayList<>(List.of("simple", "talos", "sdk"));

    @Override
    List<Tally> run(Path work, Progress progress) throws Exception {
      List<Tally> result = new ArrayList<>();
      for (String producer : producers) {
        for (String v : variants) {
          String storage = v.startsWith("local") ? "local" : v;
          String durability = v.endsWith("-sync") ? "sync" : "flush";
          Tally t = new CrashCycles(new CrashCycles.Options(storage, durability, cycles, partitions, minRunMs,
              maxRunMs, seed, serverJvm, producer), work.resolve(producer + "-" + v), progress).run();
          progress.note(t.row());
          result.add(t);
        }
      }
      return result;
    }
  }

  @Command(name = "power-cut", mixinStandardHelpOptions = true,
      description = "Scenario 2: lose everything not fsynced at random moments under appends, recover, read back.")
  static final class PowerCutCommand extends Scenario {
    @Option(names = "--cycles", description = "Power cuts per durability (default: ${DEFAULT-VALUE}).")
    int cycles = 500;

    @Option(names = "--durabilities", split = ",", description = "sync and/or flush (flush is expected to lose"
        + " data) (default: ${DEFAULT-VALUE}).")
    List<String> durabilities = new ArrayList<>(List.of("sync"));

    @Option(names = "--partitions", description = "Partitions, one writer each (default: ${DEFAULT-VALUE}).")
    int partitions = 4;

    @Override
    List<Tally> run(Path work, Progress progress) throws Exception {
      List<Tally> result = new ArrayList<>();
      for (String d : durabilities) {
        result.add(new PowerCut(new PowerCut.Options(d, cycles, partitions, 20, 300, seed), work.resolve(d), progress).run());
      }
      return result;
    }
  }

  @Command(name = "corrupt", mixinStandardHelpOptions = true,
      description = "Scenario 3: flip or truncate bytes in the tail and middle of segments and indexes, reopen, read.")
  static final class Corrupt extends Scenario {
    @Option(names = "--cases", description = "Damaged logs (default: ${DEFAULT-VALUE}).")
    int cases = 1200;

    @Override
    List<Tally> run(Path work, Progress progress) throws Exception {
      return List.of(new CorruptSegments(new CorruptSegments.Options(cases, seed), work, progress).run());
    }
  }

  @Command(name = "datanode", mixinStandardHelpOptions = true,
      description = "Scenario 4: stop and restart DataNodes of a MiniDFSCluster under produce.")
  static final class DataNodes extends Scenario {
    @Option(names = "--cycles", description = "DataNode stop/restart cycles (default: ${DEFAULT-VALUE}).")
    int cycles = 20;

    @Option(names = "--datanodes", description = "DataNodes (default: ${DEFAULT-VALUE}).")
    int dataNodes = 2;

    @Option(names = "--replication", description = "dfs.replication (default: ${DEFAULT-VALUE}).")
    int replication = 2;

    @Option(names = "--partitions", description = "Partitions, one producer each (default: ${DEFAULT-VALUE}).")
    int partitions = 4;

    @Option(names = "--down-ms", description = "How long a DataNode stays down (default: ${DEFAULT-VALUE}).")
    long downMs = 3000;

    @Option(names = "--up-ms", description = "Produce time between faults (default: ${DEFAULT-VALUE}).")
    long upMs = 3000;

    @Override
    List<Tally> run(Path work, Progress progress) throws Exception {
      return List.of(new DataNodeRestarts(new DataNodeRestarts.Options(cycles, dataNodes, replication, partitions,
          downMs, upMs, seed, serverJvm), work, progress).run());
    }
  }

  @Command(name = "soak", mixinStandardHelpOptions = true,
      description = "Scenario 6: half the measured maximum throughput for a long time; RSS, fds, threads, p99.")
  static final class SoakCommand extends Scenario {
    @Option(names = "--seconds", description = "Soak duration (default: ${DEFAULT-VALUE}).")
    int seconds = 3600;

    @Option(names = "--sample-seconds", description = "Sampling interval (default: ${DEFAULT-VALUE}).")
    int sampleSeconds = 30;

    @Option(names = "--partitions", description = "Partitions, one sending thread each (default: ${DEFAULT-VALUE}).")
    int partitions = 4;

    @Option(names = "--probe-seconds", description = "How long the maximum is measured; its second half counts"
        + " (default: ${DEFAULT-VALUE}).")
    int probeSeconds = 10;

    @Option(names = "--batch", description = "The TalosProducer's batch.max.records (default: ${DEFAULT-VALUE}).")
    int batch = Soak.DEFAULT_BATCH;

    @Override
    List<Tally> run(Path work, Progress progress) throws Exception {
      String jvm = serverJvm.equals("-Xmx512m") ? Soak.DEFAULT_JVM : serverJvm;
      return List.of(new Soak(new Soak.Options(seconds, probeSeconds, sampleSeconds, partitions, batch, jvm), work,
          progress).run().tally());
    }
  }

  @Command(name = "fuzz", mixinStandardHelpOptions = true,
      description = "Scenario 5: lives in talos-server (ApiFuzzTest); run bin/fuzz-api [DURATION].")
  static final class Fuzz implements Callable<Integer> {
    @Override
    public Integer call() {
      System.out.println("Scenario 5 (fuzzing) is talos-server's ApiFuzzTest: CI replays its corpus on every build;"
          + " the long form is `bin/fuzz-api [DURATION]` (e.g. bin/fuzz-api 8h).");
      return 0;
    }
  }

  @Command(name = "cluster", mixinStandardHelpOptions = true,
      description = "Scenario 7: cluster chaos: kill -9 and SIGSTOP random nodes of a 3-node sandbox (node processes"
          + " on an HBase mini cluster) under produce and group consume.")
  static final class Cluster extends Scenario {
    @Option(names = "--cycles", description = "Faults, each a kill -9 + restart or a SIGSTOP + SIGCONT of a random"
        + " node (default: ${DEFAULT-VALUE}).")
    int cycles = 20;

    @Option(names = "--partitions", description = "Partitions, one producer each (default: ${DEFAULT-VALUE}).")
    int partitions = 6;

    @Override
    List<Tally> run(Path work, Progress progress) throws Exception {
      String jvm = serverJvm.equals("-Xmx512m") ? "-Xmx256m" : serverJvm;
      return List.of(new ClusterChaos(new ClusterChaos.Options(cycles, partitions, seed, jvm), work, progress).run());
    }
  }

}
