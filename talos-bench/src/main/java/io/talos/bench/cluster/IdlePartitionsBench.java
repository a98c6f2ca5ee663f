package io.talos.bench.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import io.talos.bench.load.ServerProfiler;
import io.talos.bench.sandbox.Sandbox;
import io.talos.bench.sandbox.SandboxNode;
import io.talos.client.TalosClientConfig;
import io.talos.client.TalosException;
import io.talos.client.admin.TalosAdmin;
import io.talos.client.admin.TopicListing;
import io.talos.client.internals.TalosRpc;
import io.talos.client.producer.SimpleProducer;
import io.talos.thrift.GetScheduleInfoRequest;
import io.talos.thrift.GetScheduleInfoResponse;
import io.talos.thrift.PartitionOwner;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code bin/talos bench idle-partitions}: what idle partitions cost the one node of a cluster
 * that owns them. Starts a 1-node {@link Sandbox} (HBase mini cluster, its HDFS and ZooKeeper in
 * this JVM; the Talos node in a process of its own, {@code cluster.enabled=true}) and measures the
 * node process's CPU time (utime + stime of {@code /proc/<pid>/stat}), thread count and RSS over
 * a window after a settle period, in three states:
 *
 * <ol>
 *   <li>no topics;
 *   <li>topics totalling {@code --topics x --partitions} partitions, all assigned to the node (its
 *       view of the assignment routes every one LOCAL), none used, so no log open;
 *   <li>one put to each of {@code --open} partitions (default all): the node has claimed each one's
 *       owner epoch and holds its log open for writing on HDFS (the idle close is turned off so they
 *       stay open).
 * </ol>
 *
 * <p>Per state it also sums the CPU time of the node's threads by name (digits folded), from
 * {@code /proc/<pid>/task/<tid>/stat}, and when a state costs more than {@code --profile-over}
 * percent of a core it profiles the node with async-profiler (CPU, per thread) and prints the
 * threads and stacks that take the samples.
 *
 * <p>Not thread-safe: one run per process.
 */
@Command(name = "talos bench idle-partitions", mixinStandardHelpOptions = true, sortOptions = false,
    description = "CPU, threads and RSS of one cluster node owning many idle partitions (1-node sandbox).")
public final class IdlePartitionsBench implements Callable<Integer> {
  @Option(names = "--dir", description = "Sandbox directory (must not hold a sandbox); default: a new temp directory.")
  Path dir;

  @Option(names = "--topics", description = "Topics (default: ${DEFAULT-VALUE}).")
  int topics = 100;

  @Option(names = "--partitions", description = "Partitions per topic (default: ${DEFAULT-VALUE}).")
  int partitions = 100;

  @Option(names = "--settle-seconds", description = "Idle seconds before each window (default: ${DEFAULT-VALUE}).")
  double settleSeconds = 30;

  @Option(names = "--window-seconds", description = "Measured idle seconds per state (default: ${DEFAULT-VALUE}).")
  double windowSeconds = 60;

  @Option(names = "--node-jvm", description = "JVM options of the node process (default: '${DEFAULT-VALUE}').")
  String nodeJvm = "-Xmx1g";

  @Option(names = "--open", description = "Partitions that get a put (their logs open), the first of each topic"
      + " in turn; -1: all (default: ${DEFAULT-VALUE}). Each open log holds an HDFS write pipeline: a DataNode"
      + " transfer thread with its socket and block files, so the sandbox's file-descriptor limit caps it.")
  int open = -1;

  @Option(names = "--put-threads", description = "Client threads putting the first message of each partition"
      + " (default: ${DEFAULT-VALUE}).")
  int putThreads = 16;

  @Option(names = "--profile-over", description = "Profile a state whose CPU exceeds this percent of one core"
      + " (default: ${DEFAULT-VALUE}); negative: never.")
  double profileOver = 2.0;

  @Option(names = "--profile-seconds", description = "Length of that profile (default: ${DEFAULT-VALUE}).")
  double profileSeconds = 30;

  @Option(names = "-D", description = "A server key of the node, after the bench's own (see below).",
      mapFallbackValue = "")
  Map<String, String> overrides = new LinkedHashMap<>();

  public static void main(String[] args) {
    CommandLine cli = new CommandLine(new IdlePartitionsBench());
    cli.setExecutionExceptionHandler((e, cmd, parsed) -> {
      e.printStackTrace();
      System.err.println("talos bench idle-partitions: " + e.getMessage());
      return 1;
    });
    System.exit(cli.execute(args));
  }

  /** One state's figures. */
  record Sample(String state, double cpuPercent, long cpuTicks, double seconds, int threads, long rssKb,
      Map<String, Long> ticksByThreadName) {}

  @Override
  public Integer call() throws Exception {
    if (topics < 1 || partitions < 1) throw new IllegalArgumentException("--topics and --partitions must be >= 1");
    int total = topics * partitions;
    if (dir == null) dir = Files.createTempDirectory("talos-idle-partitions");
    Map<String, String> server = new LinkedHashMap<>();
    server.put("topic.partitions.max", Integer.toString(Math.max(1024, partitions)));
    server.put("request.partition.list.max.entries", Integer.toString(Math.max(4096, partitions)));
    // every partition's log stays open for the whole measurement: no LRU or idle close
    server.put("storage.open.logs.max", Integer.toString(total + 1024));
    server.put("storage.open.files.max", Integer.toString(Math.max(4096, 2 * total + 1024)));
    server.put("storage.open.idle.close.ms", "0");
    // The DataNode reserves a whole block of disk space for every block being written: 10,000 open
    // segments at the 128 MiB default need 1.3 TB, and it refuses new ones (the client then excludes
    // it) when the disk is short. 1 MiB (the NameNode's minimum) keeps it to ~10 GB.
    server.put("hadoop.dfs.blocksize", "1048576");
    server.putAll(overrides);
    // one writer per open log holds a DataNode transfer thread (default 4096)
    Map<String, String> mini = Map.of("dfs.datanode.max.transfer.threads", Integer.toString(total + 4096));
    long clkTck = clockTicksPerSecond();
    System.err.println("idle-partitions: " + topics + " topics x " + partitions + " partitions = " + total
        + "; server keys " + server + "; CLK_TCK " + clkTck + "; sandbox " + dir);
    List<Sample> samples = new ArrayList<>();
    Path profiles = dir.resolve("profiles");
    try (Sandbox sandbox = Sandbox.start(new Sandbox.Options(1, dir, List.of(nodeJvm.trim().split("\\s+")), 0, server,
        mini), System.err)) {
      SandboxNode node = sandbox.node(0);
      long pid = node.pid();
      TalosClientConfig cc = TalosClientConfig.builder().endpoint(node.endpoint())
          .credentialFile(sandbox.adminCredentialFile()).connectTimeoutMs(5_000).requestTimeoutMs(60_000).build();
      try (TalosRpc rpc = new TalosRpc(cc)) {
        samples.add(measure("no topics", pid, clkTck, profiles));

        long t0 = System.nanoTime();
        TalosAdmin admin = new TalosAdmin(rpc);
        List<TopicListing> created = new ArrayList<>();
        for (int t = 0; t < topics; t++) created.add(admin.createTopic(String.format(Locale.ROOT, "idle-%03d", t), partitions));
        int local = 0;
        for (TopicListing t : created) {
          GetScheduleInfoResponse info = rpc.cluster(c -> c.getScheduleInfo(new GetScheduleInfoRequest(t.name())));
          for (PartitionOwner o : info.getOwners()) if (node.id().equals(o.getNodeId())) local++;
        }
        System.err.printf(Locale.ROOT, "idle-partitions: %d topics created in %.1f s; %d of %d partitions assigned to %s%n",
            created.size(), (System.nanoTime() - t0) / 1e9, local, total, node.id());
        if (local != total) throw new IllegalStateException("only " + local + " of " + total + " partitions assigned to the node");
        samples.add(measure(total + " partitions owned, no log open", pid, clkTck, profiles));

        t0 = System.nanoTime();
        int opened = open < 0 ? total : Math.min(open, total);
        putOneEach(rpc, created, opened);
        JsonNode status = Sandbox.status(node);
        int owned = status == null ? -1 : status.path("ownedPartitions").asInt(-1);
        System.err.printf(Locale.ROOT, "idle-partitions: one put to each partition in %.1f s; node holds %d partitions"
            + " (ownedPartitions of /ops/cluster)%n", (System.nanoTime() - t0) / 1e9, owned);
        if (owned != opened) throw new IllegalStateException("the node holds " + owned + " partitions, not " + opened);
        samples.add(measure(total + " partitions owned, " + opened + " logs open", pid, clkTck, profiles));
      }
    }
    System.out.println();
    System.out.printf(Locale.ROOT, "Idle node, %d topics x %d partitions, %s, %.0f s settle, %.0f s window (%s)%n%n",
        topics, partitions, nodeJvm, settleSeconds, windowSeconds, Instant.now());
    System.out.println("| state | CPU (% of one core) | CPU ticks / window | threads | RSS (MiB) |");
    System.out.println("|---|---|---|---|---|");
    for (Sample s : samples) {
      System.out.printf(Locale.ROOT, "| %s | %.2f | %d / %.1f s | %d | %d |%n", s.state(), s.cpuPercent(), s.cpuTicks(),
          s.seconds(), s.threads(), s.rssKb() / 1024);
    }
    for (Sample s : samples) {
      System.out.println();
      System.out.println("Threads by CPU, " + s.state() + " (ticks in the window; names with digits folded):");
      s.ticksByThreadName().entrySet().stream().filter(e -> e.getValue() > 0)
          .sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(12)
          .forEach(e -> System.out.printf(Locale.ROOT, "  %6d  %s%n", e.getValue(), e.getKey()));
    }
    return 0;
  }

  /** One put of one small message to every partition, retrying retriable errors (opens queue up). */
  private void putOneEach(TalosRpc rpc, List<TopicListing> created, int count) throws Exception {
    List<SimpleProducer> producers = new ArrayList<>();
    for (int p = 0; p < partitions && producers.size() < count; p++) {
      for (TopicListing t : created) {
        if (producers.size() < count) producers.add(new SimpleProducer(rpc, t.name(), t.resourceName(), p));
      }
    }
    AtomicInteger next = new AtomicInteger();
    AtomicInteger done = new AtomicInteger();
    AtomicLong retries = new AtomicLong();
    byte[] payload = "idle".getBytes(StandardCharsets.UTF_8);
    ExecutorService pool = Executors.newFixedThreadPool(putThreads);
    try {
      List<Future<?>> fs = new ArrayList<>();
      for (int i = 0; i < putThreads; i++) {
        fs.add(pool.submit(() -> {
          for (int k; (k = next.getAndIncrement()) < producers.size(); ) {
            while (true) {
              try {
                producers.get(k).put(List.of(payload));
                break;
              } catch (TalosException e) {
                if (!e.isRetriable()) throw e;
                retries.incrementAndGet();
                Thread.sleep(200);
              }
            }
            int d = done.incrementAndGet();
            if (d % 1000 == 0) System.err.println("idle-partitions: " + d + " partitions written, " + retries + " retries");
          }
          return null;
        }));
      }
      for (Future<?> f : fs) f.get();
    } finally {
      pool.shutdownNow();
    }
  }

  /** Settles, then measures the node over the window; profiles it when over the threshold. */
  private Sample measure(String state, long pid, long clkTck, Path profiles) throws Exception {
    System.err.printf(Locale.ROOT, "idle-partitions: [%s] settling %.0f s, then measuring %.0f s%n", state,
        settleSeconds, windowSeconds);
    Thread.sleep((long) (settleSeconds * 1000));
    long before = cpuTicks(Path.of("/proc", Long.toString(pid), "stat"));
    Map<Long, ThreadTicks> threadsBefore = threadTicks(pid);
    long t0 = System.nanoTime();
    Thread.sleep((long) (windowSeconds * 1000));
    long after = cpuTicks(Path.of("/proc", Long.toString(pid), "stat"));
    double seconds = (System.nanoTime() - t0) / 1e9;
    Map<Long, ThreadTicks> threadsAfter = threadTicks(pid);
    Map<String, Long> byName = new HashMap<>();
    for (var e : threadsAfter.entrySet()) {
      ThreadTicks was = threadsBefore.get(e.getKey());
      long d = e.getValue().ticks() - (was == null ? 0 : was.ticks());
      byName.merge(e.getValue().name().replaceAll("[0-9]+", "#"), d, Long::sum);
    }
    Map<String, String> status = procStatus(pid);
    long ticks = after - before;
    double percent = 100.0 * ticks / clkTck / seconds;
    Sample s = new Sample(state, percent, ticks, seconds, Integer.parseInt(status.getOrDefault("Threads", "-1")),
        Long.parseLong(status.getOrDefault("VmRSS", "-1 kB").split("\\s+")[0]), byName);
    System.err.printf(Locale.ROOT, "idle-partitions: [%s] CPU %.2f%% of one core (%d ticks in %.1f s), %d threads,"
        + " RSS %d MiB%n", state, percent, ticks, seconds, s.threads(), s.rssKb() / 1024);
    if (profileOver >= 0 && percent > profileOver) profile(state, pid, profiles);
    return s;
  }

  /**
   * async-profiler in the node, CPU samples per thread for {@code --profile-seconds}; prints the
   * threads and the innermost frames that took the most samples. Tries perf-event CPU sampling,
   * then the interval timer (perf events may be forbidden).
   */
  private void profile(String state, long pid, Path profiles) throws Exception {
    Files.createDirectories(profiles);
    Path lib = ServerProfiler.extractLibrary(profiles);
    String safe = state.replaceAll("[^A-Za-z0-9]+", "-");
    Path collapsed = profiles.resolve(safe + "-cpu.collapsed");
    String event = "cpu";
    try {
      ServerProfiler.execute(pid, lib, "start,event=cpu,interval=1ms,threads");
    } catch (IOException e) {
      System.err.println("idle-partitions: event=cpu refused (" + e.getMessage() + "); using event=itimer");
      event = "itimer";
      ServerProfiler.execute(pid, lib, "start,event=itimer,interval=1ms,threads");
    }
    Thread.sleep((long) (profileSeconds * 1000));
    ServerProfiler.execute(pid, lib, "dump,collapsed,file=" + collapsed);
    ServerProfiler.execute(pid, lib, "stop,file=" + profiles.resolve(safe + "-cpu.html"));
    Map<String, Long> byThread = new HashMap<>();
    Map<String, Long> byLeaf = new HashMap<>();
    long all = 0;
    for (String line : Files.readAllLines(collapsed, StandardCharsets.UTF_8)) {
      int sp = line.lastIndexOf(' ');
      if (sp < 0) continue;
      long n = Long.parseLong(line.substring(sp + 1).trim());
      String[] frames = line.substring(0, sp).split(";");
      all += n;
      byThread.merge(frames[0].replaceAll("tid=[0-9]+", "").replaceAll("[0-9]+", "#"), n, Long::sum);
      int from = Math.max(1, frames.length - 3);
      byLeaf.merge(String.join(" < ", reversed(List.of(frames).subList(from, frames.length))), n, Long::sum);
    }
    System.out.printf(Locale.ROOT, "%nProfile, %s: %d samples (event=%s, 1 ms) in %.0f s; %s%n", state, all, event,
        profileSeconds, collapsed);
    System.out.println("  by thread:");
    top(byThread, 12, all);
    System.out.println("  by innermost 3 frames:");
    top(byLeaf, 15, all);
  }

  private static List<String> reversed(List<String> l) {
    List<String> r = new ArrayList<>(l);
    java.util.Collections.reverse(r);
    return r;
  }

  private static void top(Map<String, Long> m, int n, long all) {
    m.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(n)
        .forEach(e -> System.out.printf(Locale.ROOT, "    %6d %5.1f%%  %s%n", e.getValue(), 100.0 * e.getValue() / all,
            e.getKey()));
  }

  private record ThreadTicks(String name, long ticks) {}

  /** utime + stime (fields 14 and 15) of a /proc stat file; the name may hold spaces and parentheses. */
  static long cpuTicks(Path stat) throws IOException {
    String s = Files.readString(stat, StandardCharsets.US_ASCII);
    String[] f = s.substring(s.lastIndexOf(')') + 2).trim().split("\\s+");
    // f[0] is field 3 (state): field k is f[k - 3]
    return Long.parseLong(f[11]) + Long.parseLong(f[12]);
  }

  private static Map<Long, ThreadTicks> threadTicks(long pid) throws IOException {
    Map<Long, ThreadTicks> m = new HashMap<>();
    try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc", Long.toString(pid), "task"))) {
      for (Path t : tasks) {
        try {
          String s = Files.readString(t.resolve("stat"), StandardCharsets.US_ASCII);
          String name = s.substring(s.indexOf('(') + 1, s.lastIndexOf(')'));
          m.put(Long.parseLong(t.getFileName().toString()), new ThreadTicks(name, cpuTicks(t.resolve("stat"))));
        } catch (IOException e) {
          // the thread ended meanwhile
        }
      }
    }
    return m;
  }

  private static Map<String, String> procStatus(long pid) throws IOException {
    Map<String, String> m = new HashMap<>();
    for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"), StandardCharsets.US_ASCII)) {
      int c = line.indexOf(':');
      if (c > 0) m.put(line.substring(0, c), line.substring(c + 1).trim());
    }
    return m;
  }

  /** {@code getconf CLK_TCK}: the unit of the /proc times. */
  static long clockTicksPerSecond() throws IOException, InterruptedException {
    Process p = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
    if (p.waitFor() != 0) throw new IOException("getconf CLK_TCK failed: " + out);
    return Long.parseLong(out);
  }
}
