package io.talos.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.client.codec.CompressionType;
import io.talos.common.config.ConfigException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TalosClientConfigTest {

  @Test
  void shouldApplyDefaults() {
    TalosClientConfig c = TalosClientConfig.builder().credentials("id", "secret").build();
    assertEquals("http://127.0.0.1:8080", c.endpoint());
    assertEquals(5_000, c.connectTimeoutMs());
    assertEquals(10_000, c.requestTimeoutMs());
    assertEquals(10 * 1024 * 1024, c.maxMessageBytes());
    assertEquals(1024 * 1024, c.maxBlockBytes());
    assertEquals(2 * 1024 * 1024, c.maxFetchBytes());
    assertEquals(CompressionType.NONE, c.compressionType());
  }

  @Test
  void shouldReportEveryBadSettingByName() {
    ConfigException e = assertThrows(ConfigException.class, () -> TalosClientConfig.builder()
        .endpoint("ftp://host").requestTimeoutMs(0).maxMessageBytes(11 * 1024 * 1024).build());
    String m = e.getMessage();
    assertTrue(m.contains("endpoint=ftp://host: must start with http:// or https://"), m);
    assertTrue(m.contains("secretKeyId is not set"), m);
    assertTrue(m.contains("secretKey is not set"), m);
    assertTrue(m.contains("requestTimeoutMs=0: must be between 1 and 3600000"), m);
    assertTrue(m.contains("maxMessageBytes=11534336: must be between 1 and 10485760"), m);
  }

  @Test
  void shouldBoundTheResponseSizeAndKeepItAboveTheFetchSize() {
    assertEquals(64 * 1024 * 1024, TalosClientConfig.builder().credentials("a", "b").build().maxResponseBytes());
    ConfigException low = assertThrows(ConfigException.class, () -> TalosClientConfig.builder()
        .credentials("a", "b").maxResponseBytes(1024).build());
    assertTrue(low.getMessage().contains("maxResponseBytes=1024: must be between 1048576 and 2147483639"),
        low.getMessage());
    ConfigException belowFetch = assertThrows(ConfigException.class, () -> TalosClientConfig.builder()
        .credentials("a", "b").maxFetchBytes(4 * 1024 * 1024).maxResponseBytes(2 * 1024 * 1024).build());
    assertTrue(belowFetch.getMessage().contains(
        "maxResponseBytes=2097152: must be at least maxFetchBytes=4194304"), belowFetch.getMessage());
  }

  @Test
  void shouldTrimTrailingSlashesOfTheEndpoint() {
    assertEquals("https://talos.example.com:443/prefix", TalosClientConfig.builder()
        .endpoint("https://talos.example.com:443/prefix/").credentials("a", "b").build().endpoint());
  }

  @Test
  void shouldRejectEndpointsWithQueries() {
    ConfigException e = assertThrows(ConfigException.class, () -> TalosClientConfig.builder()
        .endpoint("http://h:1/?x=1").credentials("a", "b").build());
    assertTrue(e.getMessage().contains("must not have a query"), e.getMessage());
  }

  @Test
  void shouldLoadFromProperties() {
    Properties p = new Properties();
    p.setProperty("endpoint", "http://10.0.0.1:9000");
    p.setProperty("secretKeyId", "id");
    p.setProperty("secretKey", "secret");
    p.setProperty("compressionType", "GZIP");
    p.setProperty("maxFetchBytes", "4096");
    TalosClientConfig c = TalosClientConfig.fromProperties(p);
    assertEquals("http://10.0.0.1:9000", c.endpoint());
    assertEquals(CompressionType.GZIP, c.compressionType());
    assertEquals(4096, c.maxFetchBytes());
  }

  @Test
  void shouldRejectUnknownAndMalformedProperties() {
    Properties p = new Properties();
    p.setProperty("secretKeyId", "id");
    p.setProperty("secretKey", "secret");
    p.setProperty("requestTimeoutMS", "5");
    p.setProperty("connectTimeoutMs", "soon");
    ConfigException e = assertThrows(ConfigException.class,
        () -> TalosClientConfig.fromProperties(p));
    assertTrue(e.getMessage().contains("unknown configuration key 'requestTimeoutMS'"),
        e.getMessage());
    assertTrue(e.getMessage().contains("connectTimeoutMs=soon: expected int"), e.getMessage());
  }

  @Test
  void shouldReadTheServersCredentialFile(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("admin-credential.properties");
    Files.writeString(file, "# written by the server\nsecretKeyId = admin-key\n"
        + "secretKey=admin-secret \nownerId=admin\n");
    TalosClientConfig c = TalosClientConfig.builder().credentialFile(file).build();
    assertEquals("admin-key", c.secretKeyId());
    assertEquals("admin-secret", c.secretKey());
  }

  @Test
  void shouldNameTheProblemWithACredentialFile(@TempDir Path dir) throws Exception {
    Path missing = dir.resolve("nope.properties");
    ConfigException e = assertThrows(ConfigException.class,
        () -> TalosClientConfig.readCredentialFile(missing));
    assertEquals("credential file " + missing + " does not exist", e.getMessage());

    Path partial = dir.resolve("partial.properties");
    Files.writeString(partial, "secretKeyId=x\n");
    e = assertThrows(ConfigException.class, () -> TalosClientConfig.readCredentialFile(partial));
    assertEquals("credential file " + partial + " has no secretKey", e.getMessage());
  }

  @Test
  void shouldNotPrintTheSecret() {
    TalosClientConfig c = TalosClientConfig.builder().credentials("id", "hunter2").build();
    assertFalse(c.toString().contains("hunter2"), c.toString());
    assertTrue(c.toString().contains("secretKeyId=id"), c.toString());
    assertFalse(new TalosClientConfig.Credential("id", "hunter2").toString().contains("hunter2"));
  }

  @Test
  void shouldDeriveChangedCopies() {
    TalosClientConfig base = TalosClientConfig.builder().credentials("id", "s").build();
    TalosClientConfig gzip = base.toBuilder().compressionType(CompressionType.GZIP).build();
    assertEquals(CompressionType.GZIP, gzip.compressionType());
    assertEquals(CompressionType.NONE, base.compressionType());
    assertEquals("id", gzip.secretKeyId());
  }

  @Test
  void shouldSignWithTheAesGcmTagUnlessToldOtherwise() {
    TalosClientConfig.Builder b = TalosClientConfig.builder().credentials("k", "s");
    assertEquals(BodyDigest.AES_GCM, b.build().bodyDigest());
    assertEquals(BodyDigest.SHA256, b.bodyDigest(BodyDigest.SHA256).build().bodyDigest());
    assertEquals(BodyDigest.MD5, b.bodyDigest(BodyDigest.MD5).build().bodyDigest());
    Properties p = new Properties();
    p.setProperty("secretKeyId", "k");
    p.setProperty("secretKey", "s");
    p.setProperty("bodyDigest", "MD5");
    assertEquals(BodyDigest.MD5, TalosClientConfig.fromProperties(p).bodyDigest());
    p.setProperty("bodyDigest", "SHA-256");
    assertEquals(BodyDigest.SHA256, TalosClientConfig.fromProperties(p).bodyDigest());
    p.setProperty("bodyDigest", "AES-GCM");
    assertEquals(BodyDigest.AES_GCM, TalosClientConfig.fromProperties(p).bodyDigest());
    p.setProperty("bodyDigest", "SHA1");
    ConfigException e = assertThrows(ConfigException.class, () -> TalosClientConfig.fromProperties(p));
    assertTrue(e.getMessage().contains("bodyDigest=SHA1"), e.getMessage());
  }

  @Test
  void docsListEveryKey() throws Exception {
    ConfigDocs.assertTableCurrent("client", TalosClientConfig.DEFINITION);
  }
}
