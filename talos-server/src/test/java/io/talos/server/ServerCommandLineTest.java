package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code talos server} and {@code talos stop} as an operator runs them: real JVM processes on
 * ephemeral ports in a temp directory, started from another working directory than the
 * configuration file's.
 */
class ServerCommandLineTest {
  private static final Pattern OPS = Pattern.compile("Ops \\(health, metrics\\): (\\S+)");
  private static final List<Long> started = new ArrayList<>();

  @TempDir
  Path dir;

  /** What a finished process printed. */
  record Result(int exitCode, String stdout, String stderr) {
    List<String> stderrLines() {
      return stderr.lines().filter(l -> !l.isBlank()).toList();
    }
  }

  static Result run(Path workDir, String mainClass, String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx256m", "-Dlog4j.configuration=log4j-server.properties",
        "-Dtalos.log.dir=" + workDir.resolve("logs"), "-cp", System.getProperty("java.class.path"), mainClass));
    cmd.addAll(List.of(args));
    Path out = Files.createTempFile(workDir, "stdout", ".txt");
    Path err = Files.createTempFile(workDir, "stderr", ".txt");
    Process p = new ProcessBuilder(cmd).directory(workDir.toFile())
        .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "process did not finish: " + cmd);
    return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
  }

  static Result server(Path workDir, String... args) throws IOException, InterruptedException {
    return run(workDir, TalosServerMain.class.getName(), args);
  }

  @AfterAll
  static void killLeftovers() {
    for (long pid : started) ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
  }

  @Test
  void daemonServesWritesPidFileRefusesASecondStartAndStopsCleanly() throws Exception {
    Path confDir = Files.createDirectories(dir.resolve("conf"));
    Path elsewhere = Files.createDirectories(dir.resolve("elsewhere"));
    // Relative paths in the file are relative to conf/, not to the working directory.
    Files.writeString(confDir.resolve("talos.properties"), String.join("\n",
        "server.port=0", "server.ops.port=0", "server.data.dir=../data",
        "auth.admin.credential.file=secrets/admin.properties",
        "log.file.max.bytes=1024", "log.file.backups=2", ""));
    Path pidFile = dir.resolve("run/talos.pid");
    Path logFile = dir.resolve("logs/talos.log");
    String[] args = {"--daemon", "--conf", confDir.resolve("talos.properties").toString(),
        "--pid-file", pidFile.toString(), "--log-file", logFile.toString()};

    Result start = server(elsewhere, args);
    assertEquals(0, start.exitCode(), start.stderr());
    OptionalLong pid = new PidFile(pidFile).read();
    assertTrue(pid.isPresent(), "pid file written");
    started.add(pid.getAsLong());
    ProcessHandle daemon = ProcessHandle.of(pid.getAsLong()).orElseThrow();
    assertTrue(daemon.isAlive());
    assertTrue(start.stdout().contains("READY") && start.stdout().contains("pid " + pid.getAsLong()), start.stdout());
    assertTrue(Files.exists(dir.resolve("data/log")) || Files.exists(dir.resolve("data/metadata")),
        "data dir resolved against the conf file's directory");
    assertTrue(Files.exists(confDir.resolve("secrets/admin.properties")), "credential file under conf/secrets");
    assertFalse(Files.exists(elsewhere.resolve("data")), "nothing written relative to the working directory");

    Matcher ops = OPS.matcher(start.stdout());
    assertTrue(ops.find(), start.stdout());
    HttpResponse<String> health = HttpClient.newHttpClient().send(
        HttpRequest.newBuilder(URI.create(ops.group(1))).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, health.statusCode(), health.body());

    Result second = server(elsewhere, args);
    assertEquals(1, second.exitCode());
    assertEquals(1, second.stderrLines().size(), second.stderr());
    assertTrue(second.stderr().contains("names a running Talos server (pid " + pid.getAsLong() + ")"), second.stderr());
    assertTrue(daemon.isAlive(), "the running server is left alone");

    Result stop = run(elsewhere, TalosStopMain.class.getName(), "--pid-file", pidFile.toString(), "--timeout-ms", "60000");
    assertEquals(0, stop.exitCode(), stop.stdout() + stop.stderr());
    assertTrue(stop.stdout().contains("stopped the Talos server (pid " + pid.getAsLong() + ") cleanly"), stop.stdout());
    assertFalse(daemon.isAlive());
    assertFalse(Files.exists(pidFile), "a clean shutdown removes the pid file");

    String log = Files.readString(logFile) + readIfExists(logFile.resolveSibling("talos.log.1"));
    assertTrue(log.contains("Talos server stopped cleanly"), log);
    assertFalse(Files.exists(logFile.resolveSibling("talos.log.3")), "log.file.backups=2 keeps two");

    Result stopAgain = run(elsewhere, TalosStopMain.class.getName(), "--pid-file", pidFile.toString());
    assertEquals(0, stopAgain.exitCode());
    assertTrue(stopAgain.stdout().contains("no pid file"), stopAgain.stdout());
  }

  private static String readIfExists(Path p) throws IOException {
    return Files.exists(p) ? Files.readString(p) : "";
  }

  @Test
  void stopRefusesToSignalAProcessThatIsNotATalosServer() throws Exception {
    Path pidFile = dir.resolve("other.pid");
    ProcessHandle self = ProcessHandle.current(); // the test JVM: alive, and not a Talos server
    Files.writeString(pidFile, self.pid() + "\n");
    Result stop = run(dir, TalosStopMain.class.getName(), "--pid-file", pidFile.toString());
    assertEquals(1, stop.exitCode(), stop.stdout());
    assertTrue(stop.stderr().contains("is not a Talos server"), stop.stderr());
    assertTrue(self.isAlive());
  }

  @Test
  void startupErrorsAreOneLineNamingTheProblemWithoutAStackTrace() throws Exception {
    Path data = dir.resolve("data");
    try (ServerSocket taken = new ServerSocket()) {
      taken.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      int port = taken.getLocalPort();
      assertOneLineError(server(dir, "--port", String.valueOf(port), "-Dserver.ops.port=0", "--data-dir", data.toString()),
          "port " + port + " (server.port) is already in use on 127.0.0.1");
      assertOneLineError(server(dir, "--port", "0", "-Dserver.ops.port=" + port, "--data-dir", data.toString()),
          "port " + port + " (server.ops.port) is already in use");
    }
    assertOneLineError(server(dir, "--conf", "missing.properties"),
        "configuration file missing.properties (--conf) does not exist");
    assertOneLineError(server(dir, "--port", "0", "-Dstorage.durability=maybe", "-Dserver.http.threads.max=x"),
        "storage.durability=maybe: must be one of flush, sync");
    Path file = Files.writeString(dir.resolve("a-file"), "not a directory");
    assertOneLineError(server(dir, "--port", "0", "-Dserver.ops.port=0", "--data-dir", file.resolve("data").toString()),
        "server.data.dir=" + file.resolve("data") + " cannot be used: " + file + " is not a directory");
    assertFalse(Files.exists(dir.resolve("logs/talos.log")), "nothing started");

    Result verbose = server(dir, "--conf", "missing.properties", "--verbose");
    assertNotEquals(0, verbose.exitCode());
    assertTrue(verbose.stderr().contains("at io.talos"), "--verbose prints the stack trace: " + verbose.stderr());
  }

  private static void assertOneLineError(Result r, String expected) {
    assertNotEquals(0, r.exitCode(), r.stdout() + r.stderr());
    assertEquals(1, r.stderrLines().size(), "exactly one line on stderr: " + r.stderr());
    assertTrue(r.stderr().startsWith("talos server: ") && r.stderr().contains(expected), r.stderr());
    assertFalse(r.stderr().contains("at io.talos"), r.stderr());
  }
}
