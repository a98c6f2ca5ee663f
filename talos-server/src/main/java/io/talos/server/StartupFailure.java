package io.talos.server;

import io.talos.common.config.ConfigException;
import java.net.BindException;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Turns an exception that stopped a node from starting into one line for the operator: what is
 * wrong and, where a key is to blame, which key. Stack traces are for {@code --verbose}.
 */
final class StartupFailure {
  private static final Pattern BIND_PORT = Pattern.compile(":(\\d+)\\b");

  private StartupFailure() {}

  /**
   * @param config the configuration the node started with, or null if it was not loaded
   */
  static String describe(Throwable e, ServerConfig config) {
    if (e instanceof ConfigException) return e.getMessage();
    BindException bind = find(e, BindException.class);
    if (bind != null) {
      String where = e.getMessage() == null ? bind.getMessage() : e.getMessage();
      Matcher m = BIND_PORT.matcher(where == null ? "" : where);
      if (config != null && m.find()) {
        int port = Integer.parseInt(m.group(1));
        for (Map.Entry<String, Integer> p : StartupChecks.fixedPorts(config).entrySet()) {
          if (p.getValue() == port) {
            String host = p.getKey().equals(ServerConfig.CLUSTER_PEER_PORT)
                ? config.getString(ServerConfig.CLUSTER_PEER_HOST) : config.getString(ServerConfig.HOST);
            return StartupChecks.portInUse(p.getKey(), host, port);
          }
        }
      }
      return "cannot bind a port: " + where;
    }
    ConfigException config0 = find(e, ConfigException.class);
    if (config0 != null) return config0.getMessage();
    return chain(e);
  }

  /** The messages of {@code e} and its causes, each once: {@code outer: inner: root}. */
  static String chain(Throwable e) {
    StringBuilder sb = new StringBuilder();
    String last = null;
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      String m = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
      if (t instanceof java.nio.file.FileSystemException fse && fse.getReason() == null) {
        m = t.getClass().getSimpleName() + " " + m;
      }
      if (last != null && last.contains(m)) continue;
      if (sb.length() > 0) sb.append(": ");
      sb.append(m.replace('\n', ' '));
      last = m;
    }
    return sb.toString();
  }

  private static <T extends Throwable> T find(Throwable e, Class<T> type) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (type.isInstance(t)) return type.cast(t);
    }
    return null;
  }
}
