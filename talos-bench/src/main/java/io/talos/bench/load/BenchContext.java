package io.talos.bench.load;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;

/** What every scenario shares: where things are, how servers are started, the report. */
final class BenchContext {
  final Path talosHome;
  final Path workDir;
  final List<String> talosJvm;
  final List<String> kafkaJvm;
  final Map<String, String> talosProps = new LinkedHashMap<>();
  final Map<String, String> kafkaProps = new LinkedHashMap<>();
  final String durability;
  final boolean kafka;
  final Path docsDir;
  final Report report;
  final Progress progress;
  /** Warm-up seconds before each measurement, and of the server warm-up after it starts. */
  final double warmupSeconds;
  /** A running server to drive instead of starting one, or null. */
  String remoteEndpoint;
  Path remoteCredential;
  /** Where flame graphs of the server go, or null (no profiling). */
  Path profileDir;
  /** The body digest of the bench's Talos clients, or null for the client's default. */
  io.talos.client.BodyDigest bodyDigest;

  BenchContext(Path talosHome, Path workDir, String talosJvm, String kafkaJvm, String durability,
      Map<String, String> extraTalosProps, boolean kafka, Path docsDir, Report report, Progress progress,
      double warmupSeconds) {
    this.talosHome = talosHome;
    this.warmupSeconds = warmupSeconds;
    this.workDir = workDir;
    this.talosJvm = split(talosJvm);
    this.kafkaJvm = split(kafkaJvm);
    this.durability = durability;
    this.kafka = kafka;
    this.docsDir = docsDir;
    this.report = report;
    this.progress = progress;
    // Equal durability: "flush" = acknowledged once in the OS page cache (Talos flush, Kafka's
    // default of no log.flush.*); "sync" = fsync before the acknowledgement on both.
    talosProps.put("storage.durability", durability);
    if (durability.equals("sync")) {
      kafkaProps.put("log.flush.interval.messages", "1");
    }
    talosProps.putAll(extraTalosProps);
  }

  TalosNode startTalos() throws IOException, InterruptedException {
    if (remoteEndpoint != null) {
      progress.note("using the running Talos server at " + remoteEndpoint + " (its own configuration; -D keys,"
          + " --durability and --talos-jvm do not apply, and its memory is not measured)");
      return TalosNode.remote(remoteEndpoint, remoteCredential).bodyDigest(bodyDigest);
    }
    List<String> jvm = talosJvm;
    if (profileDir != null) {
      // stacks between safepoints too, so that CPU samples land on the right line
      jvm = new ArrayList<>(talosJvm);
      jvm.add("-XX:+UnlockDiagnosticVMOptions");
      jvm.add("-XX:+DebugNonSafepoints");
    }
    progress.note("starting a Talos server (" + String.join(" ", talosJvm) + ", durability=" + durability + ")...");
    TalosNode node = TalosNode.start(talosHome, workDir, jvm, talosProps).bodyDigest(bodyDigest);
    progress.note("Talos up at " + node.endpoint() + " (pid " + node.process().pid() + ")");
    return node;
  }

  /**
   * Profiles the server for the measurement window that starts {@code delaySeconds} from now and
   * lasts {@code seconds} (CPU, allocation and wall flame graphs named after {@code label}, see
   * {@link ServerProfiler}); does nothing without {@code --profile}. Close it after the window.
   */
  AutoCloseable profile(TalosNode node, String label, double delaySeconds, double seconds) throws IOException {
    long start = System.nanoTime() + (long) (delaySeconds * 1e9);
    return profile(node, label, () -> start, seconds);
  }

  /**
   * As {@link #profile(TalosNode, String, double, double)}, for a window whose start is known only
   * later ({@link ServerProfiler#window}).
   */
  AutoCloseable profile(TalosNode node, String label, java.util.function.LongSupplier startNanos, double seconds)
      throws IOException {
    if (profileDir == null || !node.local()) return () -> { };
    return new ServerProfiler(workDir, node.process().pid(), profileDir, progress).window(label, startNanos, seconds);
  }

  /** As {@link #profile(TalosNode, String, double, double)}, CPU only, from now until closed (a phase of unknown length). */
  AutoCloseable profileCpu(TalosNode node, String label) throws IOException {
    if (profileDir == null || !node.local()) return () -> { };
    return new ServerProfiler(workDir, node.process().pid(), profileDir, progress).until(label, ServerProfiler.Mode.CPU);
  }

  KafkaNode startKafka() throws IOException, InterruptedException {
    progress.note("starting a Kafka 4.3.1 broker, KRaft (" + String.join(" ", kafkaJvm) + ")...");
    KafkaNode node = KafkaNode.start(workDir, kafkaJvm, kafkaProps);
    progress.note("Kafka up at " + node.bootstrap() + " (pid " + node.process().pid() + ")");
    return node;
  }

  /** Random (incompressible) bytes: payloads are sent uncompressed on both systems. */
  static byte[] payload(int size) {
    byte[] b = new byte[size];
    ThreadLocalRandom.current().nextBytes(b);
    return b;
  }

  static void deleteTree(Path root) {
    if (root == null || !Files.exists(root)) return;
    try (Stream<Path> s = Files.walk(root)) {
      s.sorted(Comparator.reverseOrder()).forEach(p -> {
        try {
          Files.deleteIfExists(p);
        } catch (IOException e) {
          // best effort
        }
      });
    } catch (IOException e) {
      // best effort
    }
  }

  private static List<String> split(String options) {
    return options == null || options.isBlank() ? List.of()
        : new ArrayList<>(Arrays.asList(options.trim().split("\\s+")));
  }
}
