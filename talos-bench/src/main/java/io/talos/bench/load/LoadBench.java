package io.talos.bench.load;

import io.talos.server.scheduling.ThreadSlice;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The whole-system load generator: {@code bin/talos bench <scenario>|all [options]}. Starts a Talos
 * server (and, for the comparisons, an Apache Kafka 4.3.1 broker) as separate JVMs on loopback,
 * drives them, prints markdown tables on stdout and writes them to {@code --out}.
 */
@Command(name = "talos bench", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Whole-system benchmarks of Talos, with Apache Kafka 4.3.1 side by side.",
    subcommands = {LoadBench.Sync.class, LoadBench.Threads.class, LoadBench.Throughput.class,
        LoadBench.Latency.class, LoadBench.Sdk.class, LoadBench.ManyPartitions.class, LoadBench.All.class})
public final class LoadBench {
  /** Options every scenario takes. */
  static final class Common {
    @Option(names = "--out", description = "Directory of the results files (default: ${DEFAULT-VALUE}).")
    Path out = Path.of("target", "bench-results");

    @Option(names = "--talos-home", description = "Repository root with talos-server/target built"
        + " (default: the talos.home property, else the current directory).")
    Path talosHome = Path.of(System.getProperty("talos.home", "."));

    @Option(names = "--warmup", description = "Warm-up seconds before each measurement, not counted; also the length"
        + " of the server warm-up after it starts (default: ${DEFAULT-VALUE}: on two cores the JIT compilers of a fresh"
        + " server and client are busy for about that long). Scenario 4 has its own --latency-warmup.")
    double warmup = 15;

    @Option(names = "--durability", description = "flush (acknowledged in the OS page cache, both systems) or sync"
        + " (fsync before acknowledging, both) (default: ${DEFAULT-VALUE}).")
    String durability = "flush";

    @Option(names = "--talos-jvm", description = "JVM options of the Talos server (default: '${DEFAULT-VALUE}',"
        + " as bin/talos server).")
    String talosJvm = "-Xms512m -Xmx512m";

    @Option(names = "--kafka-jvm", description = "JVM options of the Kafka broker (default: '${DEFAULT-VALUE}',"
        + " kafka-server-start's defaults).")
    String kafkaJvm = "-Xmx1g -Xms1g -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35";

    @Option(names = "-D", description = "A Talos server key, -Dkey=value (e.g. -Dscheduling.workers=4).",
        mapFallbackValue = "")
    Map<String, String> talosProps = new LinkedHashMap<>();

    @Option(names = "--no-kafka", description = "Skip the Kafka side of scenarios 3 and 4.")
    boolean noKafka;

    @Option(names = "--body-digest", description = "How the bench's Talos clients cover request bodies: AES-GCM,"
        + " SHA-256 or MD5 (the client's bodyDigest key; default: the client's default, AES-GCM).")
    String bodyDigest;

    @Option(names = "--docs", description = "Directory the scenario 1 chart (bench-scenario1.png) is written to"
        + " (default: the --out directory, so that a run never overwrites a tracked file).")
    Path docs;

    @Option(names = "--endpoint", description = "Drive a Talos server that is already running at this URL (e.g."
        + " http://host:8080) instead of starting one; needs --credential. Its own configuration applies.")
    String endpoint;

    @Option(names = "--credential", description = "Credential file (properties, as written by"
        + " `bin/talos user create --out`) of an account that may create and delete topics on --endpoint.")
    Path credential;

    @Option(names = "--profile", description = "Profile the Talos server with async-profiler during each"
        + " measurement: CPU, allocation and wall-clock flame graphs (HTML) next to the results.")
    boolean profile;

    @Option(names = "--update-doc", description = "A markdown file whose section between <!-- bench:begin -->"
        + " and <!-- bench:end --> is replaced by this run's report (e.g. docs/benchmarks.md).")
    Path updateDoc;

    BenchContext context(Report report, Progress progress, Path workDir) {
      if (!durability.equals("flush") && !durability.equals("sync")) {
        throw new CommandLine.ParameterException(new CommandLine(this), "--durability must be flush or sync, got " + durability);
      }
      if (warmup < 0) {
        throw new CommandLine.ParameterException(new CommandLine(this), "--warmup must be >= 0, got " + warmup);
      }
      if ((endpoint == null) != (credential == null)) {
        throw new CommandLine.ParameterException(new CommandLine(this), "--endpoint and --credential go together");
      }
      if (endpoint != null && profile) {
        throw new CommandLine.ParameterException(new CommandLine(this), "--profile attaches to a server the bench"
            + " starts; it cannot profile the one at --endpoint (run async-profiler on that host)");
      }
      BenchContext ctx = new BenchContext(talosHome.toAbsolutePath().normalize(), workDir, talosJvm, kafkaJvm,
          durability, talosProps, !noKafka, docs != null ? docs : out, report, progress, warmup);
      ctx.remoteEndpoint = endpoint;
      ctx.remoteCredential = credential;
      if (bodyDigest != null) {
        try {
          ctx.bodyDigest = io.talos.client.BodyDigest.fromConfigName(bodyDigest);
        } catch (IllegalArgumentException e) {
          throw new CommandLine.ParameterException(new CommandLine(this), "--body-digest: " + e.getMessage());
        }
      }
      if (profile) {
        String results = report.file().getFileName().toString().replaceAll("\\.md$", "");
        ctx.profileDir = report.file().resolveSibling(results + "-profiles");
      }
      return ctx;
    }
  }

  /** Scenario 1 options. */
  static final class SyncOptions {
    @Option(names = "--partitions", split = ",", description = "Partition counts (default: ${DEFAULT-VALUE}).")
    List<Integer> partitions = new ArrayList<>(List.of(1, 8, 32));

    @Option(names = "--batches", split = ",", description = "Messages per put (default: ${DEFAULT-VALUE}).")
    List<Integer> batches = new ArrayList<>(List.of(1, 10, 100, 1000));

    @Option(names = "--message-bytes", description = "Message size (default: ${DEFAULT-VALUE}).")
    int messageBytes = 100;

    @Option(names = "--modes", split = ",", description = "write and/or readwrite (default: ${DEFAULT-VALUE}).")
    List<String> modes = new ArrayList<>(List.of("write", "readwrite"));

    @Option(names = "--cell-seconds", description = "Measured seconds per table cell (default: ${DEFAULT-VALUE}).")
    double cellSeconds = 4;

    @Option(names = "--cell-warmup", description = "Warm-up seconds before each table cell, not counted (default:"
        + " ${DEFAULT-VALUE}; the server's own warm-up after it starts is --warmup).")
    double cellWarmup = 3;
  }

  static final class ThreadOptions {
    @Option(names = "--threads-partitions", description = "N: partitions, put threads and get threads (default: ${DEFAULT-VALUE}).")
    int partitions = 16;

    @Option(names = "--threads-message-bytes", description = "Message size (default: ${DEFAULT-VALUE}).")
    int messageBytes = 10 * 1024;

    @Option(names = "--threads-batch", description = "Messages per put / get (default: ${DEFAULT-VALUE}).")
    int batch = 1;

    @Option(names = "--threads-seconds", description = "Measured seconds (default: ${DEFAULT-VALUE}).")
    double seconds = 30;
  }

  static final class ThroughputOptions {
    @Option(names = "--throughput-sizes", split = ",", description = "Message sizes (default: ${DEFAULT-VALUE}).")
    List<Integer> sizes = new ArrayList<>(List.of(100, 1024));

    @Option(names = "--throughput-partitions", description = "Partitions (default: ${DEFAULT-VALUE}).")
    int partitions = 16;

    @Option(names = "--batch-bytes", description = "Bytes per batch: Talos put size, Kafka batch.size (default: ${DEFAULT-VALUE}).")
    int batchBytes = 131072;

    @Option(names = "--throughput-seconds", description = "Measured seconds of producing per size (default: ${DEFAULT-VALUE}).")
    double seconds = 20;

    @Option(names = "--throughput-rounds", description = "Times each system is measured, fresh servers each round and"
        + " the order alternating; figures are medians, ratios medians with their range (default: ${DEFAULT-VALUE}).")
    int rounds = 1;
  }

  static final class LatencyOptions {
    @Option(names = "--rate", description = "Messages per second (default: ${DEFAULT-VALUE}).")
    int rate = 1000;

    @Option(names = "--latency-message-bytes", description = "Message size (default: ${DEFAULT-VALUE}).")
    int messageBytes = 1024;

    @Option(names = "--latency-seconds", description = "Measured seconds (default: ${DEFAULT-VALUE}).")
    double seconds = 30;

    // 30 s: on two cores the JIT of a fresh server (and broker) works on about half a core for the first
    // ~30 s of load and settles ~40 s after start; a shorter warm-up measures the compiler's
    // competition for the cores as much as the server's steady state.
    @Option(names = "--latency-warmup", description = "Seconds at the rate before recording, both systems; the JIT"
        + " of a fresh JVM works for the first ~30-40 s on two cores (default: ${DEFAULT-VALUE}).")
    double warmup = 30;

    // 32: each Talos put is synchronous, so when a put takes longer than inflight / rate (4 ms with 4
    // senders at 1,000/s, as on a loaded machine) the generator falls behind its schedule and
    // measures its own queue; Kafka's producer sends what accumulated in its next request instead.
    @Option(names = "--inflight", description = "Talos puts in flight at once (threads sending the due messages)"
        + " (default: ${DEFAULT-VALUE}).")
    int inflight = 32;

    @Option(names = "--latency-long-poll-ms", description = "Talos consumer's long poll: the server holds a fetch that"
        + " finds nothing up to this long, until the next append; 0 busy-polls instead (see --poll-micros)"
        + " (default: ${DEFAULT-VALUE}).")
    long longPollMs = 5000;

    @Option(names = "--poll-micros", description = "Talos consumer's pause after an empty fetch the server did not hold"
        + " (with --latency-long-poll-ms 0) (default: ${DEFAULT-VALUE}).")
    long pollMicros = 100;

    // The generator shares the machine with the server it measures: on a loaded machine its own
    // wake-ups (the schedule, the senders, the reader) wait for a core as the server's do, and
    // that wait is counted as the server's latency.
    @Option(names = "--generator-slice-us", description = "Scheduler slice the load generator's threads ask Linux for,"
        + " for both systems alike (as the server's scheduling.thread.slice.us; Linux 6.12+); 0: the kernel's default"
        + " (default: ${DEFAULT-VALUE}).")
    int generatorSliceUs = 0;
  }

  static final class SdkOptions {
    @Option(names = "--sdk-sizes", split = ",", description = "Record sizes of the async produce test (default: ${DEFAULT-VALUE}).")
    List<Integer> sizes = new ArrayList<>(List.of(100, 1024));

    @Option(names = "--sdk-partitions", description = "Partitions of every SDK test's topic (default: ${DEFAULT-VALUE}).")
    int partitions = 16;

    @Option(names = "--sdk-batch-bytes", description = "Bytes per partition batch: Talos batch.max.bytes, Kafka batch.size"
        + " (default: ${DEFAULT-VALUE}).")
    int batchBytes = 131072;

    @Option(names = "--sdk-seconds", description = "Measured seconds of async producing per size (default: ${DEFAULT-VALUE}).")
    double seconds = 15;

    @Option(names = "--backlog", description = "Records in the group catch-up backlog (default: ${DEFAULT-VALUE}).")
    long backlog = 1_000_000;

    @Option(names = "--backlog-bytes", description = "Size of the backlog's records (default: ${DEFAULT-VALUE}).")
    int backlogBytes = 100;

    @Option(names = "--sdk-rate", description = "Records per second of the end-to-end latency test (default: ${DEFAULT-VALUE}).")
    int rate = 1000;

    @Option(names = "--sdk-latency-bytes", description = "Record size of the latency test (default: ${DEFAULT-VALUE}).")
    int latencyBytes = 1024;

    @Option(names = "--sdk-latency-warmup", description = "Seconds at the rate before recording (default: ${DEFAULT-VALUE}).")
    double latencyWarmup = 5;

    @Option(names = "--sdk-latency-seconds", description = "Measured seconds of the latency test (default: ${DEFAULT-VALUE}).")
    double latencySeconds = 20;

    @Option(names = "--long-poll-ms", description = "TalosConsumer fetch.max.wait.ms with long poll (default: ${DEFAULT-VALUE}).")
    long longPollMs = 5000;

    @Option(names = "--fetch-interval-ms", description = "TalosConsumer fetch.backoff.ms: the pause after an empty fetch"
        + " (default: ${DEFAULT-VALUE}, the client's default).")
    long fetchIntervalMs = 200;

    @Option(names = "--sdk-in-flight", description = "TalosProducer max.in.flight.requests; 0: the client's default"
        + " (default: ${DEFAULT-VALUE}).")
    int inFlight = 0;

    @Option(names = "--sdk-rounds", description = "Times each system's async produce is measured, fresh servers each"
        + " round, the order alternating; figures are medians, ratios medians with their range (default: ${DEFAULT-VALUE}).")
    int rounds = 1;

    SdkScenario.Options options() {
      return new SdkScenario.Options(sizes, partitions, batchBytes, seconds, backlog, backlogBytes, rate, latencyBytes,
          latencyWarmup, latencySeconds, longPollMs, fetchIntervalMs, inFlight, rounds);
    }
  }

  static final class ManyPartitionsOptions {
    @Option(names = "--topics", description = "Topics created (default: ${DEFAULT-VALUE}).")
    int topics = 100;

    @Option(names = "--topic-partitions", description = "Partitions of each topic (default: ${DEFAULT-VALUE}).")
    int partitionsPerTopic = 100;

    @Option(names = "--puts-per-partition", description = "Puts of one message to every partition before the load"
        + " (default: ${DEFAULT-VALUE}).")
    int putsPerPartition = 3;

    @Option(names = "--many-message-bytes", description = "Message size (default: ${DEFAULT-VALUE}).")
    int messageBytes = 100;

    @Option(names = "--fill-threads", description = "Client threads putting to every partition (default: ${DEFAULT-VALUE}).")
    int fillThreads = 32;

    @Option(names = "--load-partitions", description = "Partitions under load afterwards, one put and one get thread"
        + " each (default: ${DEFAULT-VALUE}).")
    int loadPartitions = 128;

    @Option(names = "--load-batch", description = "Messages per put / get of the load (default: ${DEFAULT-VALUE}).")
    int loadBatch = 100;

    @Option(names = "--load-seconds", description = "Measured seconds of load (default: ${DEFAULT-VALUE}).")
    double loadSeconds = 20;

    @Option(names = "--native-memory", description = "Run the server with -XX:NativeMemoryTracking=summary and"
        + " report its native memory summary after each phase.")
    boolean nativeMemory;

    @Option(names = "--histogram", description = "Report the heap's largest classes after filling and after the load"
        + " (jcmd GC.class_histogram: a full GC each time).")
    boolean histogram;

    ManyPartitionsScenario.Options options() {
      for (int[] v : new int[][] {{topics, 1}, {partitionsPerTopic, 1}, {putsPerPartition, 1}, {messageBytes, 1},
          {fillThreads, 1}, {loadPartitions, 1}, {loadBatch, 1}}) {
        if (v[0] < v[1]) throw new IllegalArgumentException("counts and sizes must be >= 1, got " + v[0]);
      }
      return new ManyPartitionsScenario.Options(topics, partitionsPerTopic, putsPerPartition, messageBytes, fillThreads,
          loadPartitions, loadBatch, loadSeconds, nativeMemory, histogram);
    }
  }

  /** Runs scenarios with the context, the report and the work directory set up and torn down. */
  abstract static class Scenario implements Callable<Integer> {
    @Mixin
    Common common;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    abstract void run(BenchContext ctx) throws Exception;

    abstract String name();

    @Override
    public Integer call() throws Exception {
      Report report = new Report(common.out, System.out);
      List<String> args = spec.commandLine().getParseResult().originalArgs();
      Path workDir = Files.createTempDirectory("talos-bench-");
      try (Progress progress = new Progress()) {
        BenchContext ctx = common.context(report, progress, workDir);
        report.text("**Talos load benchmark: " + name() + ", " + Instant.now().toString().replaceAll("\\.\\d+Z$", "Z") + "**");
        report.text(MachineInfo.describe(common.endpoint == null ? workDir : null));
        report.text("Servers: Talos JVM `" + common.talosJvm + "`, keys " + ctx.talosProps + (ctx.kafka
            ? "; Kafka 4.3.1 JVM `" + common.kafkaJvm + "`, extra broker keys " + ctx.kafkaProps : "")
            + ". Command: `bin/talos bench " + String.join(" ", args) + "`.");
        run(ctx);
        report.table(report.memoryTable());
        progress.note("results written to " + report.file().toAbsolutePath());
        if (common.updateDoc != null) updateDoc(common.updateDoc, report.markdown());
        return 0;
      } finally {
        BenchContext.deleteTree(workDir);
      }
    }
  }

  @Command(name = "sync", mixinStandardHelpOptions = true, description = "Scenario 1: the synchronous tables.")
  static final class Sync extends Scenario {
    @Mixin SyncOptions o;

    @Override
    String name() {
      return "scenario 1";
    }

    @Override
    void run(BenchContext ctx) throws Exception {
      runSync(ctx, o);
    }
  }

  @Command(name = "threads", mixinStandardHelpOptions = true, description = "Scenario 2: the thread-model test.")
  static final class Threads extends Scenario {
    @Mixin ThreadOptions o;

    @Override
    String name() {
      return "scenario 2";
    }

    @Override
    void run(BenchContext ctx) throws Exception {
      ThreadModelScenario.run(ctx, o.partitions, o.messageBytes, o.batch, common.warmup, o.seconds);
    }
  }

  @Command(name = "throughput", mixinStandardHelpOptions = true,
      description = "Scenario 3 (and 5): maximum producer throughput and read-back, Kafka side by side.")
  static final class Throughput extends Scenario {
    @Mixin ThroughputOptions o;

    @Override
    String name() {
      return "scenario 3" + (common.noKafka ? "" : " and 5");
    }

    @Override
    void run(BenchContext ctx) throws Exception {
      if (o.rounds < 1) {
        throw new CommandLine.ParameterException(new CommandLine(this), "--throughput-rounds must be >= 1, got " + o.rounds);
      }
      ThroughputScenario.run(ctx, o.sizes, o.partitions, o.batchBytes, common.warmup, o.seconds, o.rounds);
    }
  }

  @Command(name = "latency", mixinStandardHelpOptions = true,
      description = "Scenario 4 (and 5): put and end-to-end latency at a fixed rate, Kafka side by side.")
  static final class Latency extends Scenario {
    @Mixin LatencyOptions o;

    @Override
    String name() {
      return "scenario 4" + (common.noKafka ? "" : " and 5");
    }

    @Override
    void run(BenchContext ctx) throws Exception {
      runLatency(ctx, o);
    }
  }

  @Command(name = "sdk", mixinStandardHelpOptions = true,
      description = "The high-level clients: one TalosProducer vs one KafkaProducer (async produce), one group"
          + " TalosConsumer vs one group KafkaConsumer (backlog catch-up), and end-to-end latency with and without"
          + " long poll.")
  static final class Sdk extends Scenario {
    @Mixin SdkOptions o;

    @Override
    String name() {
      return "SDK clients";
    }

    @Override
    void run(BenchContext ctx) throws Exception {
      if (o.rounds < 1) {
        throw new CommandLine.ParameterException(new CommandLine(this), "--sdk-rounds must be >= 1, got " + o.rounds);
      }
      SdkScenario.run(ctx, common.warmup, o.options());
    }
  }

  @Command(name = "many-partitions", mixinStandardHelpOptions = true,
      description = "Server memory with many partitions: every partition written a few times, then load on a subset;"
          + " RSS, heap, threads and open logs per phase (and native memory, heap histogram on request).")
  static final class ManyPartitions extends Scenario {
    @Mixin ManyPartitionsOptions o;

    @Override
    String name() {
      return "many partitions";
    }

    @Override
    void run(BenchContext ctx) throws Exception {
      ManyPartitionsScenario.run(ctx, common.warmup, o.options());
    }

    @Override
    public Integer call() throws Exception {
      int total = o.topics * o.partitionsPerTopic;
      // Declared limits the run must fit within, raised only as far as it needs (-D still wins).
      if (o.partitionsPerTopic > 1024) common.talosProps.putIfAbsent("topic.partitions.max", String.valueOf(o.partitionsPerTopic));
      if (o.partitionsPerTopic > 4096) {
        common.talosProps.putIfAbsent("request.partition.list.max.entries", String.valueOf(o.partitionsPerTopic));
      }
      common.noKafka = true; // Talos only
      if (o.nativeMemory) common.talosJvm = common.talosJvm + " -XX:NativeMemoryTracking=summary";
      if (total < 1) throw new IllegalArgumentException("--topics x --topic-partitions must be >= 1");
      return super.call();
    }
  }

  @Command(name = "all", mixinStandardHelpOptions = true, description = "Scenarios 1 to 5 in turn.")
  static final class All extends Scenario {
    @Mixin SyncOptions sync;
    @Mixin ThreadOptions threads;
    @Mixin ThroughputOptions throughput;
    @Mixin LatencyOptions latency;

    @Override
    String name() {
      return "scenarios 1-" + (common.noKafka ? "4" : "5");
    }

    @Override
    void run(BenchContext ctx) throws Exception {
      runSync(ctx, sync);
      ThreadModelScenario.run(ctx, threads.partitions, threads.messageBytes, threads.batch, common.warmup, threads.seconds);
      ThroughputScenario.run(ctx, throughput.sizes, throughput.partitions, throughput.batchBytes, common.warmup,
          throughput.seconds, Math.max(1, throughput.rounds));
      runLatency(ctx, latency);
    }
  }

  static void runLatency(BenchContext ctx, LatencyOptions o) throws Exception {
    if (!ThreadSlice.isAllowed(o.generatorSliceUs)) {
      throw new CommandLine.ParameterException(new CommandLine(o), "--generator-slice-us must be 0 or between "
          + ThreadSlice.MIN_US + " and " + ThreadSlice.MAX_US + ", got " + o.generatorSliceUs);
    }
    LatencyScenario.run(ctx, o.rate, o.messageBytes, o.warmup, o.seconds, o.longPollMs, o.pollMicros, o.inflight,
        o.generatorSliceUs);
  }

  static void runSync(BenchContext ctx, SyncOptions o) throws Exception {
    if (o.cellWarmup < 0) {
      throw new CommandLine.ParameterException(new CommandLine(o), "--cell-warmup must be >= 0, got " + o.cellWarmup);
    }
    List<SyncScenario.Cell> cells = SyncScenario.run(ctx, o.partitions, o.batches, o.messageBytes, o.modes,
        o.cellWarmup, o.cellSeconds);
    if (ctx.docsDir != null) {
      Path png = ctx.docsDir.resolve("bench-scenario1.png");
      Charts.scenario1(cells, png);
      // relative: beside the results file by default, beside docs/benchmarks.md with --docs docs
      ctx.report.text("![Scenario 1: QPS and latency vs partitions](bench-scenario1.png)");
      ctx.progress.note("chart written to " + png.toAbsolutePath());
    }
  }

  /** Replaces the text between the bench markers of {@code doc} with {@code markdown}. */
  static void updateDoc(Path doc, String markdown) throws IOException {
    String begin = "<!-- bench:begin -->";
    String end = "<!-- bench:end -->";
    String text = Files.readString(doc, StandardCharsets.UTF_8);
    int b = text.indexOf(begin);
    int e = text.indexOf(end);
    if (b < 0 || e < b) {
      throw new IOException(doc + " has no " + begin + " ... " + end + " section to replace");
    }
    Files.writeString(doc, text.substring(0, b + begin.length()) + "\n" + markdown.strip() + "\n" + text.substring(e),
        StandardCharsets.UTF_8);
  }

  private LoadBench() {}

  public static void main(String[] args) {
    CommandLine cli = new CommandLine(new LoadBench());
    cli.setExecutionExceptionHandler((e, cmd, parsed) -> {
      System.err.println();
      System.err.println("talos bench: " + e);
      e.printStackTrace();
      return 1;
    });
    System.exit(cli.execute(args));
  }
}
