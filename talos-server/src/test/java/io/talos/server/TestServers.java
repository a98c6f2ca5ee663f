package io.talos.server;

import java.nio.file.Path;
import java.util.Properties;

/** Starts real servers for tests: loopback, a free port, data under a test's temp dir. */
public final class TestServers {
  private TestServers() {}

  public static Properties props(Path dataDir, String... overrides) {
    Properties p = new Properties();
    p.setProperty(ServerConfig.PORT, "0");
    p.setProperty(ServerConfig.OPS_PORT, "0");
    p.setProperty(ServerConfig.DATA_DIR, dataDir.toString());
    for (int i = 0; i < overrides.length; i += 2) p.setProperty(overrides[i], overrides[i + 1]);
    return p;
  }

  public static TalosServer start(Path dataDir, String... overrides) throws Exception {
    return TalosServer.start(new ServerConfig(props(dataDir, overrides)));
  }
}
