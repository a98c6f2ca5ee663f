package io.talos.server;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code talos server}: starts one node and runs until interrupted (Ctrl-C or SIGTERM), in the
 * foreground or, with {@code --daemon}, as a background process ({@link DaemonLauncher}).
 *
 * <p>A node that cannot start prints one line on stderr saying why ({@link StartupFailure}; the
 * stack trace too with {@code --verbose}) and exits with code 1 (2 for wrong usage).
 */
@Command(name = "talos server", mixinStandardHelpOptions = true,
    description = "Start a Talos node (standalone: embedded metadata, local storage, unless configured otherwise).",
    footer = {"", "Relative paths in the --conf file are relative to that file's directory; on the command line,"
        + " to the working directory."})
public final class TalosServerMain implements Callable<Integer> {
  private static final Logger LOG = LoggerFactory.getLogger(TalosServerMain.class);

  @Option(names = "--port", description = "HTTP port (server.port); default 8080.")
  Integer port;

  @Option(names = "--host", description = "Bind address (server.host); default 127.0.0.1.")
  String host;

  @Option(names = "--data-dir", description = "Data directory (server.data.dir); default ./data.")
  Path dataDir;

  @Option(names = "--conf", description = "Properties file with server keys (see conf/talos.properties).")
  Path conf;

  /** The flag that starts a node over topic data its (empty) metadata store does not know. */
  public static final String ACCEPT_ORPHAN_DATA_FLAG = "--accept-orphan-data";

  @Option(names = ACCEPT_ORPHAN_DATA_FLAG, description = "Start even if the metadata store is empty while the"
      + " storage root holds topic data (storage.orphan.data.accept); that data is kept, never deleted.")
  boolean acceptOrphanData;

  @Option(names = "--daemon", description = "Run in the background: start, wait until the node serves (or report why"
      + " it could not), then return. Writes --pid-file and logs to --log-file.")
  boolean daemon;

  @Option(names = "--pid-file", paramLabel = "FILE", description = "Write the process id here once serving, remove it"
      + " on a clean shutdown; refuse to start if it names a running server. Default with --daemon:"
      + " $TALOS_LOG_DIR/talos.pid.")
  Path pidFile;

  @Option(names = "--log-file", paramLabel = "FILE", description = "Log to this file, rolled by size (log.file.max.bytes,"
      + " log.file.backups), instead of stderr. Default with --daemon: $TALOS_LOG_DIR/talos.log.")
  Path logFile;

  @Option(names = "--start-timeout-ms", paramLabel = "MS", defaultValue = "300000",
      description = "With --daemon: longest wait for the node to serve (default: ${DEFAULT-VALUE}).")
  long startTimeoutMs;

  @Option(names = "--exit-with", paramLabel = "PID", description = "Shut this node down when process PID is gone"
      + " (checked every second; halted if the clean close takes over 10 s). bin/talos sandbox passes its own pid so"
      + " its nodes never outlive it.")
  Long exitWithPid;

  @Option(names = "--verbose", description = "Print the stack trace of a startup error.")
  boolean verbose;

  @Option(names = "-D", description = "Override one key: -Dkey=value.", mapFallbackValue = "")
  Map<String, String> overrides = Map.of();

  private final List<String> rawArgs;
  private ServerConfig config;

  TalosServerMain(String... rawArgs) {
    this.rawArgs = List.of(rawArgs);
  }

  @Override
  public Integer call() throws Exception {
    Properties props = new Properties();
    props.putAll(overrides);
    if (port != null) props.setProperty(ServerConfig.PORT, port.toString());
    if (host != null) props.setProperty(ServerConfig.HOST, host);
    if (dataDir != null) props.setProperty(ServerConfig.DATA_DIR, dataDir.toString());
    if (acceptOrphanData) props.setProperty(ServerConfig.STORAGE_ORPHAN_DATA_ACCEPT, "true");
    config = ServerConfig.load(conf, props);
    if (daemon) {
      if (pidFile == null) pidFile = defaultLogDir().resolve("talos.pid");
      if (logFile == null) logFile = defaultLogDir().resolve("talos.log");
    }
    PidFile pid = pidFile == null ? null : new PidFile(pidFile);
    if (pid != null) pid.checkNotRunning();
    StartupChecks.check(config);
    if (daemon) return DaemonLauncher.launch(childArgs(), pid, logFile, startTimeoutMs, System.out, System.err);
    if (logFile != null) ServerLogFile.configure(logFile, config);
    if (exitWithPid != null) ExitWithProcess.start(exitWithPid); // before the start, which may take minutes

    TalosServer server = TalosServer.start(config);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      LOG.info("Shutting down (signal or exit)");
      server.close();
      // Removed only after a complete close: talos stop reads a remaining file as an unclean stop.
      if (pid != null) pid.deleteIfCurrent();
      LOG.info("Talos server stopped cleanly");
      stopped.countDown();
    }, "talos-shutdown"));
    if (server.cluster() != null) {
      // bin/talos cluster drain <node>: once drained, the process exits (the hook closes the rest).
      server.cluster().drained().thenRun(() -> new Thread(() -> System.exit(0), "talos-drained-exit").start());
    }
    System.out.println("Talos is up: endpoint " + server.endpoint() + ", data in " + config.dataDir());
    if (server.opsEndpoint() != null) System.out.println("Ops (health, metrics): " + server.opsEndpoint() + "/ops/health");
    // Never the secret itself: stdout ends up in terminals, logs and service managers' journals.
    if (server.adminCredentialCreated()) {
      System.out.println("Created the admin credential in " + config.adminCredentialFile() + " (mode 0600)");
    } else {
      System.out.println("Admin credential: " + config.adminCredentialFile());
    }
    if (pid != null) pid.writeCurrent();
    System.out.println("READY");
    System.out.flush();
    stopped.await();
    return 0;
  }

  /** The arguments of the background process: these, less --daemon, with the pid and log files made explicit. */
  List<String> childArgs() {
    List<String> args = new ArrayList<>();
    for (int i = 0; i < rawArgs.size(); i++) {
      String a = rawArgs.get(i);
      if (a.equals("--daemon")) continue;
      if (a.equals("--pid-file") || a.equals("--log-file") || a.equals("--start-timeout-ms")) {
        i++;
        continue;
      }
      if (a.startsWith("--pid-file=") || a.startsWith("--log-file=") || a.startsWith("--start-timeout-ms=")) continue;
      args.add(a);
    }
    args.addAll(Arrays.asList("--pid-file", pidFile.toAbsolutePath().toString(),
        "--log-file", logFile.toAbsolutePath().toString()));
    return args;
  }

  static Path defaultLogDir() {
    return Path.of(System.getProperty(LOG_DIR_PROPERTY, "logs"));
  }

  /** Where log4j-server.properties writes the audit log ({@code audit.log}); bin/talos sets it. */
  public static final String LOG_DIR_PROPERTY = "talos.log.dir";

  public static void main(String[] args) {
    // Before anything logs: log4j reads the property when it configures itself.
    if (System.getProperty(LOG_DIR_PROPERTY) == null) System.setProperty(LOG_DIR_PROPERTY, "logs");
    TalosServerMain main = new TalosServerMain(args);
    CommandLine cli = new CommandLine(main);
    cli.setExecutionExceptionHandler((e, cmd, parsed) -> {
      System.err.println("talos server: " + StartupFailure.describe(e, main.config));
      if (main.verbose) e.printStackTrace(System.err);
      System.err.flush();
      return 1;
    });
    int code = cli.execute(args);
    if (code != 0) System.exit(code);
  }
}
