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

  BenchContext(Path talosHome, Path workDir, String talosJvm, String kafkaJvm, String durability,
      Map<String, String> extraTalosProps, boolean kafka, Path docsDir, Report report, Progress progress) {
    this.talosHome = talosHome;
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
    progress.note("starting a Talos server (" + String.join(" ", talosJvm) + ", durability=" + durability + ")...");
    TalosNode node = TalosNode.start(talosHome, workDir, talosJvm, talosProps);
    progress.note("Talos up at " + node.endpoint() + " (pid " + node.process().pid() + ")");
    return node;
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
