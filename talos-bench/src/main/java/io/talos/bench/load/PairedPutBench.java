package io.talos.bench.load;

import io.talos.client.TalosClient;
import io.talos.client.consumer.ConsumedMessage;
import io.talos.client.consumer.SimpleConsumer;
import io.talos.client.producer.SimpleProducer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Lone synchronous puts to two Talos builds at once, for a before/after comparison that a busy
 * machine cannot skew: both servers run side by side (each in its own JVM, as the load benchmark
 * starts them), and one client thread alternates one put to the baseline's one-partition topic,
 * one to the candidate's, and so on. Whatever else the machine does at a given moment weighs on
 * both alike, so the ratio of their latencies is a measurement of the code even where the
 * absolute latencies are not. The order of the pair alternates too (A B, B A, ...), so neither
 * server always goes first.
 *
 * <pre>
 *   java -cp talos-bench/target/talos-bench-*.jar:talos-bench/target/lib/* io.talos.bench.load.PairedPutBench \
 *       --baseline-home /path/to/old/checkout --candidate-home . [--seconds 20] [--warmup 5] [--message-bytes 100]
 * </pre>
 *
 * Each home is a repository root with {@code talos-server/target} built (jar and {@code lib/}).
 * Latency is the client-side time of one {@code SimpleProducer.put} of one message. Beside it, per
 * put, what each server process spent in the measured window, from Linux's per-thread counters
 * (summed over {@code /proc/<pid>/task/*}; threads that end within the window are missed): CPU
 * time ({@code schedstat}, ns) and voluntary context switches ({@code status}), i.e. how often a
 * server thread blocked, which is how many thread hand-offs and waits a put costs. Both count the
 * server's own work only and hardly move with the machine's load.
 *
 * <p>With {@code --tail-wait-ms}, each server also has a consumer tailing its partition with long
 * polls of that wait, as a consumer at the tail does: each put then wakes a parked get, and the
 * counters include serving it.
 */
@Command(name = "paired-put", mixinStandardHelpOptions = true,
    description = "Lone synchronous puts alternating between two Talos builds running side by side.")
public final class PairedPutBench implements Callable<Integer> {
  @Option(names = "--baseline-home", required = true, description = "Repository root of the baseline build.")
  Path baselineHome;

  @Option(names = "--candidate-home", description = "Repository root of the candidate build (default: ${DEFAULT-VALUE}).")
  Path candidateHome = Path.of(".");

  @Option(names = "--seconds", description = "Measured seconds (default: ${DEFAULT-VALUE}).")
  double seconds = 20;

  @Option(names = "--warmup", description = "Seconds of alternating puts before measuring (default: ${DEFAULT-VALUE}).")
  double warmup = 5;

  @Option(names = "--message-bytes", description = "Message size (default: ${DEFAULT-VALUE}).")
  int messageBytes = 100;

  @Option(names = "--tail-wait-ms", description = "A consumer per server tailing the partition with long polls"
      + " of this wait (GetMessageRequest.maxWaitMs), so that each put wakes a parked get; 0: no consumer"
      + " (default: ${DEFAULT-VALUE}).")
  long tailWaitMs = 0;

  @Option(names = "--talos-jvm", description = "JVM options of both servers (default: '${DEFAULT-VALUE}').")
  String talosJvm = "-Xms512m -Xmx512m";

  @Option(names = "-D", description = "A server key for both, -Dkey=value.", mapFallbackValue = "")
  Map<String, String> props = new LinkedHashMap<>();

  @Option(names = "--baseline-D", description = "A server key for the baseline only, key=value.", mapFallbackValue = "")
  Map<String, String> baselineProps = new LinkedHashMap<>();

  @Option(names = "--candidate-D", description = "A server key for the candidate only, key=value.", mapFallbackValue = "")
  Map<String, String> candidateProps = new LinkedHashMap<>();

  public static void main(String[] args) {
    System.exit(new CommandLine(new PairedPutBench()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    Path work = Files.createTempDirectory("talos-paired-put-");
    List<String> jvm = talosJvm.isBlank() ? List.of() : List.of(talosJvm.trim().split("\\s+"));
    Map<String, String> a = new LinkedHashMap<>(props);
    a.putAll(baselineProps);
    Map<String, String> b = new LinkedHashMap<>(props);
    b.putAll(candidateProps);
    try (TalosNode base = TalosNode.start(baselineHome.toAbsolutePath().normalize(), work, jvm, a);
        TalosNode cand = TalosNode.start(candidateHome.toAbsolutePath().normalize(), work, jvm, b);
        TalosClient baseClient = base.client();
        TalosClient candClient = cand.client()) {
      baseClient.admin().createTopic("paired-put", 1);
      candClient.admin().createTopic("paired-put", 1);
      SimpleProducer[] producers = {baseClient.producer("paired-put", 0), candClient.producer("paired-put", 0)};
      Tail[] tails = tailWaitMs <= 0 ? null
          : new Tail[] {new Tail(baseClient.consumer("paired-put", 0), tailWaitMs), new Tail(candClient.consumer("paired-put", 0), tailWaitMs)};
      Histogram[] latency = {new Histogram(TimeUnit.SECONDS.toNanos(60), 3), new Histogram(TimeUnit.SECONDS.toNanos(60), 3)};
      byte[] payload = BenchContext.payload(messageBytes);
      List<byte[]> batch = List.of(payload);
      long start = System.nanoTime();
      long measureFrom = start + (long) (warmup * 1e9);
      long end = measureFrom + (long) (seconds * 1e9);
      long pairs = 0;
      long[][] before = null;
      while (System.nanoTime() < end) {
        if (before == null && System.nanoTime() >= measureFrom) {
          before = new long[][] {threadCounters(base.process().pid()), threadCounters(cand.process().pid())};
        }
        for (int k = 0; k < 2; k++) {
          int which = (int) ((pairs + k) & 1); // A B, then B A, ...
          long t0 = System.nanoTime();
          producers[which].put(batch);
          long t1 = System.nanoTime();
          if (t0 >= measureFrom) latency[which].recordValue(Math.min(t1 - t0, latency[which].getHighestTrackableValue()));
        }
        pairs++;
      }
      long[][] after = {threadCounters(base.process().pid()), threadCounters(cand.process().pid())};
      long[] consumed = {0, 0};
      if (tails != null) {
        for (int i = 0; i < 2; i++) consumed[i] = tails[i].stop();
      }
      String[] names = {"baseline (" + baselineHome + ")", "candidate (" + candidateHome + ")"};
      System.out.printf(Locale.ROOT, "Lone puts of %d bytes, alternating, %s s after %s s warm-up%s; load average at the end %s%n%n",
          messageBytes, SyncScenario.fmt(seconds), SyncScenario.fmt(warmup),
          tails == null ? "" : ", a consumer per server tailing with long polls of " + tailWaitMs + " ms (consumed: baseline "
              + consumed[0] + ", candidate " + consumed[1] + " messages)", loadAverage());
      System.out.println("| server | puts | mean ms | P50 ms | P90 ms | P99 ms | P99.9 ms | max ms | server CPU µs / put"
          + " | server context switches / put |");
      System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
      for (int i = 0; i < 2; i++) {
        Histogram h = latency[i];
        double n = Math.max(1, h.getTotalCount());
        System.out.printf(Locale.ROOT, "| %s | %d | %s | %s | %s | %s | %s | %s | %.0f | %.2f |%n", names[i],
            h.getTotalCount(), Table.ms(h.getMean()), Table.ms(h.getValueAtPercentile(50)),
            Table.ms(h.getValueAtPercentile(90)), Table.ms(h.getValueAtPercentile(99)),
            Table.ms(h.getValueAtPercentile(99.9)), Table.ms(h.getMaxValue()),
            (after[i][0] - before[i][0]) / 1e3 / n, (after[i][1] - before[i][1]) / n);
      }
      List<String> ratios = new ArrayList<>();
      for (double p : new double[] {50, 90, 99, 99.9}) {
        ratios.add("P" + SyncScenario.fmt(p) + " " + Table.ratio(latency[1].getValueAtPercentile(p), latency[0].getValueAtPercentile(p)));
      }
      ratios.add("mean " + Table.ratio(latency[1].getMean(), latency[0].getMean()));
      System.out.println();
      System.out.println("candidate / baseline: " + String.join(", ", ratios));
    } finally {
      BenchContext.deleteTree(work);
    }
    return 0;
  }

  /** A thread fetching a partition from its end on, with long polls, until stopped. */
  private static final class Tail {
    private final Thread thread;
    private final java.util.concurrent.atomic.AtomicLong consumed = new java.util.concurrent.atomic.AtomicLong();
    private volatile boolean stopped;
    private volatile RuntimeException failure;

    Tail(SimpleConsumer consumer, long waitMs) {
      thread = new Thread(() -> {
        long next = 0;
        try {
          while (!stopped) {
            List<ConsumedMessage> got = consumer.fetch(next, 1000, waitMs).messages();
            if (got.isEmpty()) continue;
            next = got.get(got.size() - 1).offset() + 1;
            consumed.addAndGet(got.size());
          }
        } catch (RuntimeException e) {
          if (!stopped) failure = e;
        }
      }, "paired-put-tail");
      thread.setDaemon(true);
      thread.start();
    }

    /** Stops after the fetch in progress; the messages consumed. */
    long stop() throws InterruptedException {
      stopped = true;
      thread.join(TimeUnit.SECONDS.toMillis(30));
      if (failure != null) throw failure;
      return consumed.get();
    }
  }

  /**
   * CPU ns and voluntary context switches of {@code pid}'s live threads, summed; zeros where
   * {@code /proc} cannot be read.
   */
  static long[] threadCounters(long pid) {
    long cpu = 0;
    long switches = 0;
    try (java.nio.file.DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc", Long.toString(pid), "task"))) {
      for (Path task : tasks) {
        try {
          cpu += Long.parseLong(Files.readString(task.resolve("schedstat")).trim().split("\\s+")[0]);
          for (String line : Files.readAllLines(task.resolve("status"))) {
            if (line.startsWith("voluntary_ctxt_switches:")) switches += Long.parseLong(line.substring(24).trim());
          }
        } catch (java.io.IOException | RuntimeException e) {
          // the thread ended meanwhile
        }
      }
    } catch (java.io.IOException e) {
      return new long[] {0, 0};
    }
    return new long[] {cpu, switches};
  }

  private static String loadAverage() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
    } catch (java.io.IOException e) {
      return "unknown";
    }
  }
}
