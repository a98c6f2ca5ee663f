package io.talos.client.internals;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/** This client's version and the User-Agent it sends. */
public final class ClientVersion {
  /**
   * The User-Agent prefix by which the server recognizes this client and sends it the Talos
   * extension error codes (numbers above 32) instead of their SDK 2.0.2 stand-ins.
   */
  public static final String USER_AGENT_PRODUCT = "talos-java-client";

  private static final String VERSION = load();

  private ClientVersion() {}

  /** e.g. {@code 0.1.0}, or {@code unknown} when the build did not record it. */
  public static String version() {
    return VERSION;
  }

  /** {@code talos-java-client/<version>}. */
  public static String userAgent() {
    return USER_AGENT_PRODUCT + "/" + VERSION;
  }

  private static String load() {
    Properties p = new Properties();
    try (InputStream in = ClientVersion.class.getResourceAsStream("client-version.properties")) {
      if (in != null) p.load(in);
    } catch (IOException e) {
      return "unknown";
    }
    String v = p.getProperty("version", "").strip();
    return v.isEmpty() || v.startsWith("${") ? "unknown" : v;
  }
}
