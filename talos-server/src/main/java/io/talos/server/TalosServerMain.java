package io.talos.server;

import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code talos server}: starts one node and runs until interrupted (Ctrl-C or SIGTERM). */
@Command(name = "talos server", mixinStandardHelpOptions = true,
    description = "Start a Talos node (standalone: embedded metadata, local storage, unless configured otherwise).")
public final class TalosServerMain implements Callable<Integer> {
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

  @Option(names = "-D", description = "Override one key: -Dkey=value.", mapFallbackValue = "")
  Map<String, String> overrides = Map.of();

  @Override
  public Integer call() throws Exception {
    Properties props = new Properties();
    props.putAll(overrides);
    if (port != null) props.setProperty(ServerConfig.PORT, port.toString());
    if (host != null) props.setProperty(ServerConfig.HOST, host);
    if (dataDir != null) props.setProperty(ServerConfig.DATA_DIR, dataDir.toString());
    if (acceptOrphanData) props.setProperty(ServerConfig.STORAGE_ORPHAN_DATA_ACCEPT, "true");
    ServerConfig config = ServerConfig.load(conf, props);
    TalosServer server = TalosServer.start(config);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      server.close();
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
    System.out.println("READY");
    System.out.flush();
    stopped.await();
    return 0;
  }

  /** Where log4j-server.properties writes the audit log ({@code audit.log}); bin/talos sets it. */
  public static final String LOG_DIR_PROPERTY = "talos.log.dir";

  public static void main(String[] args) {
    // Before anything logs: log4j reads the property when it configures itself.
    if (System.getProperty(LOG_DIR_PROPERTY) == null) System.setProperty(LOG_DIR_PROPERTY, "logs");
    CommandLine cli = new CommandLine(new TalosServerMain());
    cli.setExecutionExceptionHandler((e, cmd, parsed) -> {
      System.err.println("talos server: " + e.getMessage());
      return 1;
    });
    int code = cli.execute(args);
    if (code != 0) System.exit(code);
  }
}
