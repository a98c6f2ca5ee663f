package io.talos.server.frontend;

import io.talos.common.config.ConfigException;
import io.talos.server.ServerConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.server.handler.SecuredRedirectHandler;
import org.eclipse.jetty.util.ssl.SslContextFactory;

/**
 * The API's https listener ({@code server.tls.*}): the same handlers as the plain-HTTP one,
 * behind TLS with the configured key store (and trust store, for client certificates). TLS
 * protects the signed requests from being read or replayed on the network; the signature still
 * authenticates every request. Protocols and ciphers are Jetty's defaults (TLS 1.2 and 1.3, no
 * weak suites). Optionally the plain listener redirects to it ({@link #redirectingPlainHttp}).
 */
public final class TlsConnector {
  /** The connector's name, to find it among the server's. */
  public static final String NAME = "https";

  private TlsConnector() {}

  /** A connector for {@code server.tls.port}; {@code http} is the plain listener's configuration. */
  public static ServerConnector create(Server server, ServerConfig config, HttpConfiguration http) {
    String keystore = config.getString(ServerConfig.TLS_KEYSTORE_PATH);
    if (keystore == null || keystore.isEmpty()) {
      throw new ConfigException(ServerConfig.TLS_PORT + " is set but " + ServerConfig.TLS_KEYSTORE_PATH
          + " is empty: TLS needs the server's key and certificate");
    }
    if (!Files.isReadable(Path.of(keystore))) {
      throw new ConfigException(ServerConfig.TLS_KEYSTORE_PATH + " '" + keystore + "' is not a readable file");
    }
    SslContextFactory.Server ssl = new SslContextFactory.Server();
    ssl.setKeyStorePath(keystore);
    ssl.setKeyStorePassword(config.getString(ServerConfig.TLS_KEYSTORE_PASSWORD));
    ssl.setKeyStoreType(config.getString(ServerConfig.TLS_KEYSTORE_TYPE));
    String truststore = config.getString(ServerConfig.TLS_TRUSTSTORE_PATH);
    if (truststore != null && !truststore.isEmpty()) {
      ssl.setTrustStorePath(truststore);
      ssl.setTrustStorePassword(config.getString(ServerConfig.TLS_TRUSTSTORE_PASSWORD));
      ssl.setTrustStoreType(config.getString(ServerConfig.TLS_KEYSTORE_TYPE));
    }
    switch (config.getString(ServerConfig.TLS_CLIENT_AUTH)) {
      case "want" -> ssl.setWantClientAuth(true);
      case "need" -> ssl.setNeedClientAuth(true);
      default -> { }
    }
    HttpConfiguration https = new HttpConfiguration(http);
    SecureRequestCustomizer secure = new SecureRequestCustomizer();
    // Clients connect by address as often as by name; the certificate is checked by the client.
    secure.setSniHostCheck(false);
    https.addCustomizer(secure);
    ServerConnector connector = new ServerConnector(server, new SslConnectionFactory(ssl, "http/1.1"),
        new HttpConnectionFactory(https));
    connector.setName(NAME);
    connector.setHost(config.getString(ServerConfig.HOST));
    connector.setPort(config.getInt(ServerConfig.TLS_PORT));
    connector.setIdleTimeout(config.getLong(ServerConfig.HTTP_IDLE_TIMEOUT_MS));
    return connector;
  }

  /** {@code api} behind a redirect of every plain-HTTP request to the https listener (308). */
  public static Handler redirectingPlainHttp(Handler api) {
    SecuredRedirectHandler redirect = new SecuredRedirectHandler(308);
    redirect.setHandler(api);
    return redirect;
  }

  /**
   * Once the server is started: points the plain listener's redirects at the https port it got
   * (it may have been 0, any free port).
   */
  public static void started(Server server, HttpConfiguration http) {
    for (org.eclipse.jetty.server.Connector c : server.getConnectors()) {
      if (NAME.equals(c.getName())) {
        http.setSecureScheme("https");
        http.setSecurePort(((ServerConnector) c).getLocalPort());
      }
    }
  }
}
