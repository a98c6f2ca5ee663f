package io.talos.server;

import io.talos.common.config.ConfigException;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a node checks before it opens anything, so that the commonest mistakes (a port in use, a
 * data directory it cannot write) fail at once with one line naming the key, not after the
 * metadata store was opened and with a library's message. The checks can race with another
 * program (a port taken between the check and the bind); {@link StartupFailure} names those
 * failures too.
 */
final class StartupChecks {
  private StartupChecks() {}

  static void check(ServerConfig config) {
    checkDataDir(config);
    checkPorts(config);
  }

  /** The data directory, or the nearest existing directory above it, must be a writable directory. */
  static void checkDataDir(ServerConfig config) {
    Path dir = config.dataDir();
    Path existing = dir;
    while (existing != null && !Files.exists(existing)) existing = existing.getParent();
    String problem = null;
    if (existing == null) {
      problem = "no part of the path exists";
    } else if (!Files.isDirectory(existing)) {
      problem = existing.equals(dir) ? "it is not a directory" : existing + " is not a directory";
    } else if (!Files.isWritable(existing)) {
      problem = existing.equals(dir) ? "it is not writable by this user" : existing + " is not writable by this user";
    }
    if (problem != null) {
      throw new ConfigException(ServerConfig.DATA_DIR + "=" + dir + " cannot be used: " + problem);
    }
  }

  /** Each fixed port (0 picks a free one, -1 is off) must be free on its bind address. */
  static void checkPorts(ServerConfig config) {
    String host = config.getString(ServerConfig.HOST);
    for (Map.Entry<String, Integer> port : fixedPorts(config).entrySet()) {
      String bindHost = port.getKey().equals(ServerConfig.CLUSTER_PEER_PORT)
          ? config.getString(ServerConfig.CLUSTER_PEER_HOST) : host;
      try (ServerSocket socket = new ServerSocket()) {
        socket.setReuseAddress(true); // as Jetty and Netty bind: TIME_WAIT does not count as in use
        socket.bind(new InetSocketAddress(bindHost, port.getValue()));
      } catch (BindException e) {
        throw new ConfigException(portInUse(port.getKey(), bindHost, port.getValue()));
      } catch (IOException e) {
        throw new ConfigException("cannot bind " + port.getKey() + "=" + port.getValue() + " on " + bindHost + ": " + e.getMessage());
      }
    }
  }

  static String portInUse(String key, String host, int port) {
    return "port " + port + " (" + key + ") is already in use on " + host
        + "; stop what holds it or choose another port (0 picks a free one)";
  }

  /** The ports this configuration binds that are fixed numbers, by key. */
  static Map<String, Integer> fixedPorts(ServerConfig config) {
    Map<String, Integer> ports = new LinkedHashMap<>();
    if (config.getBoolean(ServerConfig.HTTP_ENABLED)) ports.put(ServerConfig.PORT, config.getInt(ServerConfig.PORT));
    ports.put(ServerConfig.OPS_PORT, config.getInt(ServerConfig.OPS_PORT));
    ports.put(ServerConfig.TLS_PORT, config.getInt(ServerConfig.TLS_PORT));
    if (config.getBoolean(ServerConfig.CLUSTER_ENABLED)) {
      ports.put(ServerConfig.CLUSTER_PEER_PORT, config.getInt(ServerConfig.CLUSTER_PEER_PORT));
    }
    ports.values().removeIf(p -> p <= 0);
    return ports;
  }
}
