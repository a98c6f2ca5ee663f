package io.talos.bench.reliability;

import io.talos.client.TalosClient;
import io.talos.client.TalosClientConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real Talos server process ({@code io.talos.server.TalosServerMain} in its own JVM, on this
 * JVM's class path, which holds talos-server) on a free loopback port, over a data directory that
 * outlives it: the reliability scenarios kill it (SIGKILL) and start it again on the same data.
 * Each start writes its output to a new {@code server-N.log} beside the data directory.
 *
 * <p>Not thread-safe: one scenario thread starts and kills it.
 */
final class ServerProcess implements AutoCloseable {
  private final Path dataDir;
  private final Map<String, String> props;
  private final String jvmOptions;
  private Process process;
  private String endpoint;
  private Path log;
  private int starts;
  /** The HTTP port every start uses; 0: a free one each time. */
  private int port;

  ServerProcess(Path dataDir, Map<String, String> props, String jvmOptions) {
    this.dataDir = dataDir;
    this.props = props;
    this.jvmOptions = jvmOptions;
  }

  /** Starts the server and waits until it answers (READY), at most {@code timeoutMs}. */
  void start(long timeoutMs) throws IOException, InterruptedException {
    if (process != null && process.isAlive()) throw new IllegalStateException("already running");
    Files.createDirectories(dataDir);
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    for (String o : jvmOptions.trim().split("\\s+")) if (!o.isEmpty()) cmd.add(o);
    cmd.add("-Dlog4j.configuration=log4j-server.properties");
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add("io.talos.server.TalosServerMain");
    cmd.addAll(List.of("--port", Integer.toString(port), "--host", "127.0.0.1", "--data-dir", dataDir.toString()));
    cmd.add("-Dserver.ops.port=0"); // the ops listener too: several servers may run on this machine
    // The scenarios load the server as hard as they can; per-partition rate limits would only slow them.
    cmd.add("-Dquota.partition.put.bytes.per.sec=0");
    cmd.add("-Dquota.partition.get.bytes.per.sec=0");
    props.forEach((k, v) -> cmd.add("-D" + k + "=" + v));
    log = dataDir.resolveSibling("server-" + (++starts) + ".log");
    process = new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.to(log.toFile())).start();
    long deadline = System.currentTimeMillis() + timeoutMs;
    String up = null;
    while (System.currentTimeMillis() < deadline) {
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      for (String l : lines) {
        if (l.startsWith("Talos is up: endpoint ")) up = l;
      }
      if (up != null && lines.contains("READY")) {
        endpoint = up.substring("Talos is up: endpoint ".length()).split(",")[0].trim();
        return;
      }
      if (!process.isAlive()) {
        throw new IOException("server exited with " + process.exitValue() + " before it was ready; see " + log
            + ":\n" + tail());
      }
      Thread.sleep(50);
    }
    kill();
    throw new IOException("server not ready after " + timeoutMs + " ms; see " + log);
  }

  /**
   * Makes every later start listen on one port, picked free now, so that a client made once
   * reaches the server across restarts.
   */
  void fixPort() throws IOException {
    try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
  }

  /** SIGKILL (no shutdown hook, no flush, no close) and wait until it is gone. */
  void kill() throws InterruptedException {
    if (process == null) return;
    process.destroyForcibly();
    process.waitFor(30, TimeUnit.SECONDS);
  }

  /** SIGTERM: the orderly shutdown; SIGKILL after 30 s. */
  void stop() throws InterruptedException {
    if (process == null) return;
    process.destroy();
    if (!process.waitFor(30, TimeUnit.SECONDS)) kill();
  }

  boolean isAlive() {
    return process != null && process.isAlive();
  }

  long pid() {
    return process.pid();
  }

  String endpoint() {
    return endpoint;
  }

  Path log() {
    return log;
  }

  Path dataDir() {
    return dataDir;
  }

  /** A client of this server with the admin credential it wrote on first start. */
  TalosClient client(int requestTimeoutMs) {
    return TalosClient.create(TalosClientConfig.builder().endpoint(endpoint)
        .credentialFile(dataDir.resolve("admin-credential.properties"))
        .connectTimeoutMs(2_000).requestTimeoutMs(requestTimeoutMs).build());
  }

  String tail() {
    try {
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    } catch (IOException e) {
      return "(cannot read " + log + ")";
    }
  }

  /** Lines of every log this process wrote so far that contain {@code text}. */
  long countLogLines(String text) throws IOException {
    long n = 0;
    for (int i = 1; i <= starts; i++) {
      Path p = dataDir.resolveSibling("server-" + i + ".log");
      if (Files.exists(p)) n += Files.readAllLines(p, StandardCharsets.UTF_8).stream().filter(l -> l.contains(text)).count();
    }
    return n;
  }

  @Override
  public void close() throws InterruptedException {
    stop();
  }
}
