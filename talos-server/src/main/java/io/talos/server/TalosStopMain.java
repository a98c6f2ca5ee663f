package io.talos.server;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code talos stop}: stops the server named by a pid file with SIGTERM (its shutdown hook drains
 * and closes it: in-flight requests end, partitions are closed, in cluster mode the node drains),
 * waits for the process to exit and reports whether the shutdown was clean (the server removes its
 * pid file as the last step of a clean shutdown).
 *
 * <p>Exit codes: 0 stopped cleanly or not running, 1 not stopped in time or not cleanly, 2 wrong usage.
 */
@Command(name = "talos stop", mixinStandardHelpOptions = true,
    description = "Stop a server started with --daemon (or --pid-file): SIGTERM, wait for it to drain and exit.")
public final class TalosStopMain implements Callable<Integer> {
  @Option(names = "--pid-file", paramLabel = "FILE",
      description = "The server's pid file (default: $TALOS_LOG_DIR/talos.pid).")
  Path pidFile;

  @Option(names = "--timeout-ms", paramLabel = "MS", defaultValue = "60000",
      description = "Longest wait for the server to exit (default: ${DEFAULT-VALUE}; above cluster.drain.timeout.ms).")
  long timeoutMs;

  @Option(names = "--force", description = "If it has not exited within --timeout-ms, kill it (SIGKILL).")
  boolean force;

  private final PrintStream out;
  private final PrintStream err;

  TalosStopMain(PrintStream out, PrintStream err) {
    this.out = out;
    this.err = err;
  }

  @Override
  public Integer call() throws IOException, InterruptedException {
    PidFile file = new PidFile(pidFile != null ? pidFile : TalosServerMain.defaultLogDir().resolve("talos.pid"));
    OptionalLong pid = file.read();
    if (pid.isEmpty()) {
      out.println("talos stop: no pid file " + file.path() + "; no server to stop there");
      return 0;
    }
    Optional<ProcessHandle> process = ProcessHandle.of(pid.getAsLong()).filter(ProcessHandle::isAlive);
    if (process.isEmpty()) {
      file.delete();
      out.println("talos stop: pid " + pid.getAsLong() + " is not running; removed the stale pid file " + file.path());
      return 0;
    }
    if (!PidFile.isTalosServer(process.get())) {
      err.println("talos stop: pid " + pid.getAsLong() + " named by " + file.path() + " is not a Talos server ("
          + process.get().info().command().orElse("?") + "); not stopping it. Remove the stale pid file.");
      return 1;
    }
    long startNs = System.nanoTime();
    process.get().destroy(); // SIGTERM: the server's shutdown hook drains and closes it
    try {
      process.get().onExit().get(timeoutMs, TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      if (!force) {
        err.println("talos stop: pid " + pid.getAsLong() + " has not exited within " + timeoutMs
            + " ms; it may still be draining (see its log). Run again with a longer --timeout-ms, or --force to kill it.");
        return 1;
      }
      process.get().destroyForcibly();
      process.get().onExit().join();
      file.delete();
      err.println("talos stop: pid " + pid.getAsLong() + " did not exit within " + timeoutMs + " ms; killed it (SIGKILL)");
      return 1;
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException("waiting for pid " + pid.getAsLong() + " failed", e);
    }
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
    if (file.read().isPresent()) {
      file.delete();
      err.println("talos stop: pid " + pid.getAsLong() + " exited after " + tookMs
          + " ms without completing a clean shutdown (see its log); removed its pid file");
      return 1;
    }
    out.println("talos stop: stopped the Talos server (pid " + pid.getAsLong() + ") cleanly in " + tookMs + " ms");
    return 0;
  }

  public static void main(String[] args) {
    TalosStopMain stop = new TalosStopMain(System.out, System.err);
    CommandLine cli = new CommandLine(stop);
    cli.setExecutionExceptionHandler((e, cmd, parsed) -> {
      System.err.println("talos stop: " + StartupFailure.chain(e));
      return 1;
    });
    System.exit(cli.execute(args));
  }
}
