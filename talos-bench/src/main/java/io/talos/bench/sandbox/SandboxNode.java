package io.talos.bench.sandbox;

import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * One Talos node of a sandbox: a {@code TalosServerMain} process in its own JVM, configured by
 * {@code DIR/nodes/<i>/talos.properties}. Its output is appended to {@code DIR/nodes/<i>/node.log}
 * (its audit log goes to the same directory) and its process id is written to
 * {@code DIR/nodes/<i>/pid}.
 *
 * <p>The node is handled through its process id, not a {@link Process}: {@code bin/talos sandbox
 * start-node} starts it from another JVM than the sandbox's, and the sandbox still stops it on
 * Ctrl-C. A pid is only acted on while it is a live {@code TalosServerMain} (pids are reused).
 *
 * <p>Every node is started with {@code --exit-with <sandbox pid>}: it shuts itself down within a
 * second or two of the sandbox process being gone, even when that was killed (SIGKILL) and could
 * not stop it (the sandbox's mini clusters die with it, so a node left behind would only hold its
 * ports).
 *
 * <p>Not thread-safe: one thread starts, stops and signals a node.
 */
public final class SandboxNode {
  static final String MAIN_CLASS = "io.talos.server.TalosServerMain";
  static final String CONFIG_FILE = "talos.properties";
  static final String PID_FILE = "pid";
  static final String LOG_FILE = "node.log";
  /** How long a clean stop (SIGTERM: drain, then close) may take before SIGKILL. */
  static final long STOP_TIMEOUT_MS = 60_000;

  private final int index;
  private final Path dir;
  private final Properties config;
  private final List<String> jvmOptions;
  private final long sandboxPid;

  /** @param sandboxPid the sandbox process (the mini clusters): the node exits when it is gone */
  SandboxNode(int index, Path dir, Properties config, List<String> jvmOptions, long sandboxPid) {
    this.index = index;
    this.dir = dir;
    this.config = config;
    this.jvmOptions = List.copyOf(jvmOptions);
    this.sandboxPid = sandboxPid;
  }

  /** The node {@code index} of the sandbox in {@code sandboxDir}, from its written configuration. */
  static SandboxNode load(Path sandboxDir, int index, List<String> jvmOptions, long sandboxPid) throws IOException {
    Path dir = nodeDir(sandboxDir, index);
    Path file = dir.resolve(CONFIG_FILE);
    if (!Files.exists(file)) {
      throw new IOException("no node " + index + " in " + sandboxDir + ": " + file + " is missing");
    }
    Properties p = new Properties();
    try (InputStream in = Files.newInputStream(file)) {
      p.load(in);
    }
    return new SandboxNode(index, dir, p, jvmOptions, sandboxPid);
  }

  static Path nodeDir(Path sandboxDir, int index) {
    return sandboxDir.resolve("nodes").resolve(Integer.toString(index));
  }

  public int index() {
    return index;
  }

  /** The cluster node id ({@code cluster.node.id}). */
  public String id() {
    return config.getProperty("cluster.node.id");
  }

  /** The client API URL, e.g. {@code http://127.0.0.1:40123}. */
  public String endpoint() {
    return "http://" + config.getProperty("server.host") + ":" + config.getProperty("server.port");
  }

  /** The ops URL (health, metrics, {@code /ops/cluster}). */
  public String opsEndpoint() {
    return "http://" + config.getProperty("server.host") + ":" + config.getProperty("server.ops.port");
  }

  public Path dir() {
    return dir;
  }

  public Path log() {
    return dir.resolve(LOG_FILE);
  }

  /** The live node process, if there is one (from the pid file). */
  public Optional<ProcessHandle> process() {
    Path pidFile = dir.resolve(PID_FILE);
    if (!Files.exists(pidFile)) return Optional.empty();
    long pid;
    try {
      pid = Long.parseLong(Files.readString(pidFile, StandardCharsets.UTF_8).trim());
    } catch (IOException | NumberFormatException e) {
      return Optional.empty();
    }
    return ProcessHandle.of(pid).filter(ProcessHandle::isAlive).filter(SandboxNode::isTalosNode);
  }

  /**
   * Whether a process runs {@link #MAIN_CLASS}. Read from {@code /proc/<pid>/cmdline} where there is
   * one: {@link ProcessHandle.Info#commandLine()} is cut short for a command line as long as a
   * node's (its class path), which would hide the main class.
   */
  private static boolean isTalosNode(ProcessHandle h) {
    Path cmdline = Path.of("/proc", Long.toString(h.pid()), "cmdline");
    if (Files.isReadable(cmdline)) {
      try {
        return new String(Files.readAllBytes(cmdline), StandardCharsets.UTF_8).contains(MAIN_CLASS);
      } catch (IOException e) {
        return false; // gone meanwhile
      }
    }
    return h.info().commandLine().map(c -> c.contains(MAIN_CLASS)).orElse(true);
  }

  public boolean alive() {
    return process().isPresent();
  }

  public long pid() {
    return process().map(ProcessHandle::pid).orElseThrow(() -> new IllegalStateException("node " + index
        + " is not running"));
  }

  /**
   * Starts the node with its configuration and waits until it prints READY (it serves), at most
   * {@code timeoutMs}.
   *
   * @param classpath the node's class path (the server's, without the mini clusters)
   * @throws IllegalStateException if the node runs already
   */
  public void start(String classpath, long timeoutMs) throws IOException, InterruptedException {
    if (alive()) throw new IllegalStateException("node " + index + " is running already (pid " + pid() + ")");
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(jvmOptions);
    // As bin/talos server: out of memory, exit rather than serve on in an unknown state.
    cmd.add("-XX:+ExitOnOutOfMemoryError");
    cmd.add("-Dlog4j.configuration=log4j-server.properties");
    cmd.add("-Dtalos.log.dir=" + dir.toAbsolutePath());
    cmd.add("-cp");
    cmd.add(classpath);
    cmd.add(MAIN_CLASS);
    cmd.add("--conf");
    cmd.add(dir.resolve(CONFIG_FILE).toAbsolutePath().toString());
    cmd.add("--exit-with");
    cmd.add(Long.toString(sandboxPid));
    Path log = log();
    long from = Files.exists(log) ? Files.size(log) : 0;
    Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
    Files.writeString(dir.resolve(PID_FILE), p.pid() + "\n", StandardCharsets.UTF_8);
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (System.currentTimeMillis() < deadline) {
      if (logSince(from).lines().anyMatch("READY"::equals)) return;
      if (!p.isAlive()) {
        throw new IOException("node " + index + " exited with " + p.exitValue() + " before it was ready; see " + log
            + ":\n" + tail(logSince(from)));
      }
      Thread.sleep(50);
    }
    p.destroyForcibly();
    throw new IOException("node " + index + " not ready after " + timeoutMs + " ms; see " + log);
  }

  /**
   * SIGKILL (no drain, no close: logs left open with their HDFS leases) and wait until it is gone.
   *
   * @return when the signal was sent (epoch ms), or -1 if the node was not running
   */
  public long kill() throws InterruptedException {
    Optional<ProcessHandle> h = process();
    if (h.isEmpty()) return -1;
    h.get().destroyForcibly();
    long sentMs = System.currentTimeMillis();
    await(h.get(), 30_000);
    return sentMs;
  }

  /** SIGTERM: the node drains (its partitions move at once), closes and exits; SIGKILL after a minute. */
  public void stop() throws InterruptedException {
    Optional<ProcessHandle> h = process();
    if (h.isEmpty()) return;
    h.get().destroy();
    if (!await(h.get(), STOP_TIMEOUT_MS)) kill();
  }

  /**
   * SIGSTOP: the process is frozen (no thread runs, its sockets stay open), as in a long GC pause.
   *
   * @return when it was frozen (epoch ms): {@code kill -STOP} had returned
   */
  public long pause() throws IOException, InterruptedException {
    signal("STOP");
    return System.currentTimeMillis();
  }

  /** SIGCONT after {@link #pause}. */
  public void resume() throws IOException, InterruptedException {
    signal("CONT");
  }

  private void signal(String name) throws IOException, InterruptedException {
    long pid = pid();
    Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(pid)).redirectErrorStream(true).start();
    String out = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
      throw new IOException("kill -" + name + " " + pid + " failed: " + out);
    }
  }

  private static boolean await(ProcessHandle h, long timeoutMs) throws InterruptedException {
    try {
      h.onExit().get(timeoutMs, TimeUnit.MILLISECONDS);
      return true;
    } catch (java.util.concurrent.TimeoutException e) {
      return false;
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException(e);
    }
  }

  private String logSince(long from) throws IOException {
    Path log = log();
    if (!Files.exists(log)) return "";
    try (RandomAccessFile f = new RandomAccessFile(log.toFile(), "r")) {
      long len = f.length() - from;
      if (len <= 0) return "";
      byte[] b = new byte[(int) Math.min(len, 16 * 1024 * 1024)];
      f.seek(from);
      f.readFully(b);
      return new String(b, StandardCharsets.UTF_8);
    }
  }

  private static String tail(String text) {
    List<String> lines = text.lines().toList();
    return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
  }

  @Override
  public String toString() {
    return "node " + index + " (" + id() + ", " + endpoint() + ")";
  }
}
