package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.xiaomi.infra.galaxy.rpc.thrift.Credential;
import com.xiaomi.infra.galaxy.rpc.thrift.UserType;
import com.xiaomi.infra.galaxy.talos.admin.TalosAdmin;
import com.xiaomi.infra.galaxy.talos.client.TalosClientConfig;
import com.xiaomi.infra.galaxy.talos.client.TalosClientFactory;
import com.xiaomi.infra.galaxy.talos.thrift.CreateTopicRequest;
import com.xiaomi.infra.galaxy.talos.thrift.DescribeTopicRequest;
import com.xiaomi.infra.galaxy.talos.thrift.TopicAttribute;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.Properties;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.apache.http.conn.scheme.Scheme;
import org.apache.http.conn.scheme.SchemeRegistry;
import org.apache.http.conn.ssl.SSLSocketFactory;
import org.apache.http.impl.client.DefaultHttpClient;
import org.apache.http.impl.conn.PoolingClientConnectionManager;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The API over TLS with the unmodified SDK 2.0.2: a key store generated here with the JDK's
 * keytool (no key is committed), a server with plain HTTP off, the SDK trusting that
 * certificate; and a plain listener that redirects to https.
 */
class TlsEndToEndTest {
  @TempDir static Path dir;
  static Path keystore;
  static final String PASSWORD = "test-only-password";

  @BeforeAll
  static void generateKeystore() throws Exception {
    keystore = dir.resolve("server.p12");
    Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
        "-genkeypair", "-alias", "talos", "-keyalg", "RSA", "-keysize", "2048", "-validity", "2",
        "-dname", "CN=localhost", "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-storetype", "PKCS12",
        "-keystore", keystore.toString(), "-storepass", PASSWORD, "-keypass", PASSWORD)
        .redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    assertEquals(0, p.waitFor(), out);
  }

  private static TalosServer start(Path data, String... more) throws Exception {
    String[] base = {ServerConfig.TLS_PORT, "0", ServerConfig.TLS_KEYSTORE_PATH, keystore.toString(),
        ServerConfig.TLS_KEYSTORE_PASSWORD, PASSWORD};
    String[] all = new String[base.length + more.length];
    System.arraycopy(base, 0, all, 0, base.length);
    System.arraycopy(more, 0, all, base.length, more.length);
    return TestServers.start(data, all);
  }

  /** The SDK's own HTTP client type (HttpClient 4.2), trusting the test certificate. */
  private static org.apache.http.client.HttpClient trustingClient() throws Exception {
    KeyStore trust = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(keystore)) {
      trust.load(in, PASSWORD.toCharArray());
    }
    SchemeRegistry schemes = new SchemeRegistry();
    schemes.register(new Scheme("https", 443, new SSLSocketFactory(trust)));
    return new DefaultHttpClient(new PoolingClientConnectionManager(schemes));
  }

  @Test
  void theOfficialSdkWorksOverHttpsWithPlainHttpOff() throws Exception {
    try (TalosServer server = start(dir.resolve("tls-only"), ServerConfig.HTTP_ENABLED, "false")) {
      URI endpoint = server.endpoint();
      assertEquals("https", endpoint.getScheme());
      assertEquals(endpoint, server.tlsEndpoint());
      Properties props = new Properties();
      props.setProperty("galaxy.talos.service.endpoint", endpoint.toString());
      Credential admin = new Credential().setType(UserType.APP_SECRET)
          .setSecretKeyId(server.adminCredential().secretKeyId()).setSecretKey(server.adminCredential().secretKey());
      TalosAdmin sdk = new TalosAdmin(new TalosClientFactory(new TalosClientConfig(props), admin, trustingClient()));
      sdk.createTopic(new CreateTopicRequest("secure", new TopicAttribute().setPartitionNumber(2)));
      assertEquals(2, sdk.describeTopic(new DescribeTopicRequest("secure")).getTopicAttribute().getPartitionNumber());
      assertEquals(1, sdk.listTopic().size());
    }
  }

  /**
   * Our client over https takes its trust from the JVM's default TLS context (set here to trust
   * the test certificate), verifies the server's name, and keeps its connection alive.
   */
  @Test
  void ourClientWorksOverHttpsWithTheJvmDefaultTrust() throws Exception {
    KeyStore trust = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(keystore)) {
      trust.load(in, PASSWORD.toCharArray());
    }
    TrustManagerFactory trustManagers = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    trustManagers.init(trust);
    SSLContext trusting = SSLContext.getInstance("TLS");
    trusting.init(null, trustManagers.getTrustManagers(), null);
    SSLContext jvmDefault = SSLContext.getDefault();
    try (TalosServer server = start(dir.resolve("ours"), ServerConfig.HTTP_ENABLED, "false")) {
      SSLContext.setDefault(trusting);
      try (io.talos.client.TalosClient client = io.talos.client.TalosClient.create(
          io.talos.client.TalosClientConfig.builder().endpoint(server.tlsEndpoint().toString())
              .credentials(server.adminCredential().secretKeyId(), server.adminCredential().secretKey())
              .build())) {
        client.admin().createTopic("ours-secure", 2);
        assertTrue(client.admin().listTopics().stream().anyMatch(t -> t.name().equals("ours-secure")));
      } finally {
        SSLContext.setDefault(jvmDefault);
      }
      // with the JVM's usual trust the self-signed server is refused
      try (io.talos.client.TalosClient untrusting = io.talos.client.TalosClient.create(
          io.talos.client.TalosClientConfig.builder().endpoint(server.tlsEndpoint().toString())
              .credentials(server.adminCredential().secretKeyId(), server.adminCredential().secretKey())
              .build())) {
        io.talos.client.TalosException e = org.junit.jupiter.api.Assertions.assertThrows(
            io.talos.client.TalosException.class, () -> untrusting.admin().listTopics());
        assertTrue(e.getMessage().startsWith("I/O error talking to https://"), e.getMessage());
      }
    }
  }

  @Test
  void plainHttpRedirectsToHttpsWhenAsked() throws Exception {
    try (TalosServer server = start(dir.resolve("redirect"), ServerConfig.HTTP_REDIRECT_HTTPS, "true")) {
      assertEquals("http", server.endpoint().getScheme());
      assertNotNull(server.tlsEndpoint());
      HttpResponse<Void> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
          server.endpoint().resolve("/v1/api/topic?type=listTopics")).POST(HttpRequest.BodyPublishers.noBody()).build(),
          HttpResponse.BodyHandlers.discarding());
      assertEquals(308, r.statusCode());
      String location = r.headers().firstValue("Location").orElse("");
      assertTrue(location.startsWith("https://") && location.contains(":" + server.tlsEndpoint().getPort() + "/"),
          location);
    }
  }
}
