package io.talos.server;

import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.io.RandomAccessFile;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * {@code talos server --daemon}: starts the same server as a separate process (same JVM, JVM
 * options and class path; the Java runtime cannot fork itself) with {@code --pid-file} and
 * {@code --log-file}, its stdin from /dev/null and its stdout and stderr appended to
 * {@code LOGFILE.out} (the startup banner, and what the JVM itself prints). Waits until the child
 * has written the pid file (it serves) or has exited (it failed to start: its one-line error is
 * repeated here and the exit code is the child's), so the caller knows how the start went.
 */
final class DaemonLauncher {
  static final long POLL_MS = 50;

  private DaemonLauncher() {}

  /**
   * @param childArgs the server's arguments for the child (without --daemon, with --pid-file and --log-file)
   * @param startTimeoutMs how long to wait for the child to serve
   * @return the exit code for the launching process
   */
  static int launch(List<String> childArgs, PidFile pidFile, Path logFile, long startTimeoutMs,
      PrintStream out, PrintStream err) throws IOException, InterruptedException {
    Path consoleFile = consoleFile(logFile);
    Files.createDirectories(consoleFile.toAbsolutePath().getParent());
    long consoleStart = Files.exists(consoleFile) ? Files.size(consoleFile) : 0;
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (!arg.startsWith("-agentlib:jdwp") && !arg.startsWith("-Xrunjdwp")) command.add(arg);
    }
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(TalosServerMain.class.getName());
    command.addAll(childArgs);
    Process child = new ProcessBuilder(command)
        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
        .redirectOutput(ProcessBuilder.Redirect.appendTo(consoleFile.toFile()))
        .redirectErrorStream(true)
        .start();
    long deadline = System.nanoTime() + startTimeoutMs * 1_000_000L;
    while (true) {
      OptionalLong pid = readQuietly(pidFile);
      if (pid.isPresent() && pid.getAsLong() == child.pid()) {
        out.print(readFrom(consoleFile, consoleStart));
        out.println("Talos runs in the background: pid " + child.pid() + ", log " + logFile.toAbsolutePath()
            + ", pid file " + pidFile.path() + "; stop it with: bin/talos stop --pid-file " + pidFile.path());
        out.flush();
        return 0;
      }
      if (!child.isAlive()) {
        String output = readFrom(consoleFile, consoleStart).strip();
        err.println(output.isEmpty() ? "talos server: the server exited with code " + child.exitValue()
            + " before it was up; see " + logFile.toAbsolutePath() : output);
        err.flush();
        return child.exitValue() == 0 ? 1 : child.exitValue();
      }
      if (System.nanoTime() > deadline) {
        err.println("talos server: still starting after " + startTimeoutMs + " ms (pid " + child.pid()
            + "); it goes on in the background, see " + logFile.toAbsolutePath());
        return 1;
      }
      Thread.sleep(POLL_MS);
    }
  }

  /** Where the daemon's stdout and stderr go, beside its log file. */
  static Path consoleFile(Path logFile) {
    return logFile.resolveSibling(logFile.getFileName() + ".out");
  }

  private static OptionalLong readQuietly(PidFile pidFile) {
    try {
      return pidFile.read();
    } catch (RuntimeException e) {
      return OptionalLong.empty(); // being written
    }
  }

  private static String readFrom(Path file, long offset) throws IOException {
    if (!Files.exists(file)) return "";
    try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "r")) {
      long length = Math.max(0, raf.length() - offset);
      byte[] bytes = new byte[(int) Math.min(length, 1 << 20)];
      raf.seek(offset);
      raf.readFully(bytes);
      return new String(bytes, StandardCharsets.UTF_8);
    }
  }
}
