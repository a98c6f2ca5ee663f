package io.talos.bench.load;

import io.talos.client.TalosClient;
import io.talos.client.TalosClientConfig;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The Talos server a scenario drives: either a node the bench starts in its own JVM ({@code
 * io.talos.server.TalosServerMain} from {@code talos-server/target}: the jar and {@code lib/}, as
 * {@code bin/talos server} runs it), on a free loopback port, with its data in a fresh directory;
 * or a server that is already running ({@link #remote}), which the bench neither starts, stops,
 * configures nor measures the memory of.
 */
final class TalosNode implements AutoCloseable {
  /** Null for a remote server. */
  private final JvmProcess process;
  private final String endpoint;
  private final Path credentialFile;
  /** Null for a remote server, or when the JVM options log GC elsewhere. */
  private final GcLog gcLog;

  private io.talos.client.BodyDigest bodyDigest;

  private TalosNode(JvmProcess process, String endpoint, Path credentialFile, GcLog gcLog) {
    this.process = process;
    this.endpoint = endpoint;
    this.credentialFile = credentialFile;
    this.gcLog = gcLog;
  }

  /** A server that is already running at {@code endpoint}, used with the credential in the file. */
  static TalosNode remote(String endpoint, Path credentialFile) throws IOException {
    if (!Files.isReadable(credentialFile)) {
      throw new IOException("credential file " + credentialFile + " is not readable (the properties file"
          + " bin/talos user create --out writes)");
    }
    return new TalosNode(null, endpoint, credentialFile, null);
  }

  static TalosNode start(Path talosHome, Path workDir, List<String> jvmOptions,
      Map<String, String> serverProps) throws IOException, InterruptedException {
    Path dataDir = Files.createTempDirectory(workDir, "talos-data-");
    List<String> args = new ArrayList<>(List.of("--port", "0", "--host", "127.0.0.1",
        "--data-dir", dataDir.toString(), "-Dserver.ops.port=0",
        // Measures the server, not its per-partition rate limits (Kafka has none by default).
        "-Dquota.partition.put.bytes.per.sec=0", "-Dquota.partition.get.bytes.per.sec=0"));
    serverProps.forEach((k, v) -> args.add("-D" + k + "=" + v));
    List<String> jvm = new ArrayList<>();
    // as bin/talos server; the options given may override them
    jvm.add("-XX:MaxGCPauseMillis=20");
    jvm.add("-XX:MaxTenuringThreshold=1");
    jvm.addAll(jvmOptions);
    jvm.add("-Dlog4j.configuration=log4j-server.properties");
    // GC pauses and safepoints, one line each, so that a scenario can tell its stalls from them (GcLog)
    GcLog gcLog = null;
    if (jvmOptions.stream().noneMatch(o -> o.startsWith("-Xlog:gc"))) {
      gcLog = new GcLog(dataDir.resolveSibling(dataDir.getFileName() + ".gc.log"));
      jvm.add("-Xlog:gc,safepoint:file=" + gcLog.file() + ":" + GcLog.DECORATIONS);
    }
    jvm.add("-Djdk.nio.maxCachedBufferSize=262144"); // as bin/talos server
    JvmProcess p = JvmProcess.start("talos-server", jvm, serverClasspath(talosHome),
        "io.talos.server.TalosServerMain", args, dataDir.resolveSibling(dataDir.getFileName() + ".log"));
    try {
      String up = p.awaitLine(l -> l.startsWith("Talos is up: endpoint "), 60_000);
      String endpoint = up.substring("Talos is up: endpoint ".length()).split(",")[0].trim();
      p.awaitLine(l -> l.equals("READY"), 30_000);
      return new TalosNode(p, endpoint, dataDir.resolve("admin-credential.properties"), gcLog);
    } catch (IOException | InterruptedException | RuntimeException e) {
      p.close();
      throw e;
    }
  }

  /** talos-server/target/talos-server-*.jar and talos-server/target/lib/*. */
  static String serverClasspath(Path talosHome) throws IOException {
    Path target = talosHome.resolve("talos-server").resolve("target");
    Path jar = null;
    if (Files.isDirectory(target)) {
      try (DirectoryStream<Path> s = Files.newDirectoryStream(target, "talos-server-*.jar")) {
        for (Path p : s) {
          if (!p.getFileName().toString().contains("-sources") && !p.getFileName().toString().contains("-tests")) jar = p;
        }
      }
    }
    if (jar == null || !Files.isDirectory(target.resolve("lib"))) {
      throw new IOException("no server build under " + target + " (talos-server-*.jar and lib/):"
          + " run `mvn -q -DskipTests package` in " + talosHome + " or pass --talos-home");
    }
    return jar + java.io.File.pathSeparator + target.resolve("lib") + "/*";
  }

  /** The body digest of the clients {@link #client()} makes; null: the client's default. */
  TalosNode bodyDigest(io.talos.client.BodyDigest digest) {
    this.bodyDigest = digest;
    return this;
  }

  TalosClient client() {
    TalosClientConfig.Builder b = TalosClientConfig.builder().endpoint(endpoint)
        .credentialFile(credentialFile)
        .requestTimeoutMs(30_000);
    if (bodyDigest != null) b.bodyDigest(bodyDigest);
    return TalosClient.create(b.build());
  }

  /** The body of GET /ops/metrics (JSON). */
  String opsMetrics() throws IOException, InterruptedException {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(endpoint + "/ops/metrics"))
        .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
    return r.body();
  }

  String endpoint() {
    return endpoint;
  }

  /** The server's GC log ({@code -Xlog:gc}), or null (a remote server, or GC logged per --talos-jvm). */
  GcLog gcLog() {
    return gcLog;
  }

  /** Whether the bench started this server (false: a remote one). */
  boolean local() {
    return process != null;
  }

  /** The server process; only for a server the bench started. */
  JvmProcess process() {
    if (process == null) throw new IllegalStateException("the server at " + endpoint + " is not the bench's process");
    return process;
  }

  void resetMemoryPeaks() {
    if (process != null) process.memory().resetPeaks();
  }

  /** The server's memory so far, or null for a remote server (not measured). */
  MemorySampler.Memory memory() {
    return process == null ? null : process.memory().snapshot();
  }

  void checkAlive() throws IOException {
    if (process != null) process.checkAlive();
  }

  @Override
  public void close() {
    if (process != null) process.close();
  }
}
