package io.talos.bench.load;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A JVM started as a separate process (so that its memory can be measured apart from the load
 * generator's), its stdout and stderr copied to a log file, plus a {@link MemorySampler} on it.
 */
final class JvmProcess implements AutoCloseable {
  private final String name;
  private final Process process;
  private final Path log;
  private final MemorySampler memory;

  private JvmProcess(String name, Process process, Path log) {
    this.name = name;
    this.process = process;
    this.log = log;
    this.memory = new MemorySampler(process.pid());
  }

  /** Starts {@code java jvmOptions -cp classpath mainClass args}, output to {@code log}. */
  static JvmProcess start(String name, List<String> jvmOptions, String classpath, String mainClass,
      List<String> args, Path log) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(jvmOptions);
    cmd.add("-cp");
    cmd.add(classpath);
    cmd.add(mainClass);
    cmd.addAll(args);
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    return new JvmProcess(name, pb.start(), log);
  }

  /** Runs a JVM to completion (e.g. a storage-format tool); fails on a non-zero exit. */
  static void run(String name, List<String> jvmOptions, String classpath, String mainClass,
      List<String> args, Path log, long timeoutMs) throws IOException, InterruptedException {
    try (JvmProcess p = start(name, jvmOptions, classpath, mainClass, args, log)) {
      if (!p.process.waitFor(timeoutMs, TimeUnit.MILLISECONDS)) {
        throw new IOException(name + " did not finish in " + timeoutMs + " ms; see " + log);
      }
      if (p.process.exitValue() != 0) {
        throw new IOException(name + " exited with " + p.process.exitValue() + "; see " + log
            + ":\n" + tail(log));
      }
    }
  }

  /** Waits for a log line matching {@code ready}; returns it. */
  String awaitLine(Predicate<String> ready, long timeoutMs) throws IOException, InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (System.currentTimeMillis() < deadline) {
      if (Files.exists(log)) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(
            Files.newInputStream(log), StandardCharsets.UTF_8))) {
          String line;
          while ((line = r.readLine()) != null) {
            if (ready.test(line)) return line;
          }
        }
      }
      if (!process.isAlive()) {
        throw new IOException(name + " exited with " + process.exitValue() + " before it was ready; see "
            + log + ":\n" + tail(log));
      }
      Thread.sleep(100);
    }
    throw new IOException(name + " not ready after " + timeoutMs + " ms; see " + log);
  }

  void checkAlive() throws IOException {
    if (!process.isAlive()) {
      throw new IOException(name + " died (exit " + process.exitValue() + "); see " + log);
    }
  }

  long pid() {
    return process.pid();
  }

  MemorySampler memory() {
    return memory;
  }

  Path log() {
    return log;
  }

  static String tail(Path log) {
    try {
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    } catch (IOException e) {
      return "(cannot read " + log + ")";
    }
  }

  /** SIGTERM, then SIGKILL after 15 s. */
  @Override
  public void close() {
    memory.close();
    process.destroy();
    try {
      if (!process.waitFor(15, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}
