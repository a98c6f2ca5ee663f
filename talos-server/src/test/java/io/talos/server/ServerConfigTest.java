package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.common.config.ConfigException;
import io.talos.server.scheduling.ThreadSlicePolicy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class ServerConfigTest {
  /** conf/talos.properties is rendered from ServerConfig.DEF; regenerate it with -Dtalos.writeConf=true. */
  @Test
  void theTailCacheIsChosenByStorageUnlessSet() {
    long auto = new ServerConfig(new Properties()).getLong(ServerConfig.STORAGE_TAIL_CACHE_BYTES);
    assertEquals(ServerConfig.TAIL_CACHE_AUTO, auto);
    assertEquals(0, ServerConfig.tailCacheBytes(auto, java.net.URI.create("file:///var/talos")));
    assertEquals(64L << 20, ServerConfig.tailCacheBytes(auto, java.net.URI.create("hdfs://nn:8020/talos")));
    assertEquals(1234, ServerConfig.tailCacheBytes(1234, java.net.URI.create("file:///var/talos")));
    assertEquals(0, ServerConfig.tailCacheBytes(0, java.net.URI.create("hdfs://nn:8020/talos")));
  }

  @Test
  void confFileListsEveryKeyAtItsDefault() throws Exception {
    Path conf = Path.of(System.getProperty("user.dir")).getParent().resolve("conf/talos.properties");
    String expected = ServerConfig.DEF.toPropertiesFile(ServerConfig.CONF_FILE_HEADER);
    if (Boolean.getBoolean("talos.writeConf")) Files.writeString(conf, expected, StandardCharsets.UTF_8);
    assertEquals(expected, Files.readString(conf, StandardCharsets.UTF_8),
        "conf/talos.properties is out of date: run mvn -pl talos-server test -Dtest=ServerConfigTest -Dtalos.writeConf=true");
    // And the file, uncommented, parses to the defaults.
    Properties p = new Properties();
    for (String line : expected.split("\n")) {
      if (line.startsWith("#") && !line.startsWith("# ") && !line.startsWith("##") && line.contains("=") && !line.contains("...")) {
        p.setProperty(line.substring(1, line.indexOf('=')), line.substring(line.indexOf('=') + 1));
      }
    }
    assertEquals(ServerConfig.DEF.keys().size(), p.size());
    new ServerConfig(p);
  }

  /** docs/configuration.md holds the generated key tables between two marker lines. */
  @Test
  void configurationDocListsEveryKey() throws Exception {
    Path doc = Path.of(System.getProperty("user.dir")).getParent().resolve("docs/configuration.md");
    String text = Files.readString(doc, StandardCharsets.UTF_8);
    String begin = "<!-- keys: generated from ServerConfig -->\n";
    String end = "<!-- end of keys -->";
    int from = text.indexOf(begin);
    int to = text.indexOf(end);
    assertTrue(from >= 0 && to > from, "markers missing in docs/configuration.md");
    String expected = text.substring(0, from + begin.length()) + ServerConfig.DEF.toMarkdown() + "\n" + text.substring(to);
    if (Boolean.getBoolean("talos.writeConf")) Files.writeString(doc, expected, StandardCharsets.UTF_8);
    assertEquals(expected, Files.readString(doc, StandardCharsets.UTF_8),
        "docs/configuration.md is out of date: run mvn -pl talos-server test -Dtest=ServerConfigTest -Dtalos.writeConf=true");
  }

  @Test
  void badValuesNameTheKey() {
    Properties p = new Properties();
    p.setProperty(ServerConfig.STORAGE_DURABILITY, "maybe");
    p.setProperty(ServerConfig.PORT, "99999");
    ConfigException e = assertThrows(ConfigException.class, () -> new ServerConfig(p));
    assertTrue(e.getMessage().contains("storage.durability=maybe: must be one of flush, sync"), e.getMessage());
    assertTrue(e.getMessage().contains("server.port=99999"), e.getMessage());
  }

  @Test
  void threadSliceIsZeroOrWhatTheKernelAccepts() {
    for (String bad : new String[] {"99", "100001", "-1"}) {
      Properties p = new Properties();
      p.setProperty(ServerConfig.SCHEDULING_THREAD_SLICE_US, bad);
      ConfigException e = assertThrows(ConfigException.class, () -> new ServerConfig(p));
      assertTrue(e.getMessage().contains("scheduling.thread.slice.us=" + bad
          + ": must be 0 (the kernel's default) or between 100 and 100000"), e.getMessage());
    }
    Properties p = new Properties();
    p.setProperty(ServerConfig.SCHEDULING_THREAD_SLICE_US, "300");
    ThreadSlicePolicy contended = TalosServer.threadSlices(new ServerConfig(p));
    assertEquals(300, contended.sliceUs());
    assertEquals(0, contended.currentUs(), "contended (the default): no short slice before a sample says so");
    p.setProperty(ServerConfig.SCHEDULING_THREAD_SLICE_WHEN, "always");
    ThreadSlicePolicy always = TalosServer.threadSlices(new ServerConfig(p));
    assertEquals(300, always.currentUs());
    assertSame(always, TalosServer.poolConfig(new ServerConfig(p), always).threadSlices());
    p.setProperty(ServerConfig.SCHEDULING_THREAD_SLICE_WHEN, "sometimes");
    p.setProperty(ServerConfig.SCHEDULING_THREAD_SLICE_PROCESS_CPU_MAX_PERCENT, "101");
    ConfigException e = assertThrows(ConfigException.class, () -> new ServerConfig(p));
    assertTrue(e.getMessage().contains("scheduling.thread.slice.when=sometimes: must be one of contended, always"),
        e.getMessage());
    assertTrue(e.getMessage().contains("scheduling.thread.slice.process.cpu.max.percent=101"), e.getMessage());
  }

  @Test
  void derivedPathsDefaultUnderTheDataDir() {
    Properties p = new Properties();
    p.setProperty(ServerConfig.DATA_DIR, "/tmp/talos-x");
    ServerConfig c = new ServerConfig(p);
    assertEquals(Path.of("/tmp/talos-x/metadata"), c.metadataDir());
    assertEquals("file:/tmp/talos-x/log", c.storageRootUri().replace("file:///", "file:/"));
    assertEquals(Path.of("/tmp/talos-x/admin-credential.properties"), c.adminCredentialFile());
  }

  @Test
  void relativePathsInTheFileResolveAgainstTheFilesDirectoryAndCommandLineOnesAgainstTheWorkingDirectory(
      @org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
    Path conf = Files.createDirectories(dir.resolve("etc/talos")).resolve("talos.properties");
    Files.writeString(conf, String.join("\n",
        "server.data.dir=../../var/data",
        "storage.root.uri=file:log",
        "auth.admin.credential.file=secrets/admin.properties",
        "server.tls.keystore.path=tls/server.p12",
        "server.tls.truststore.path=/abs/trust.p12",
        "cluster.peer.secret.file=./peer.secret",
        "metadata.dir=meta", ""));
    Path base = dir.resolve("etc/talos");
    ServerConfig c = ServerConfig.load(conf, new Properties());
    assertEquals(dir.resolve("var/data"), c.dataDir());
    assertEquals(base.resolve("log").toUri().toString(), c.storageRootUri());
    assertEquals(base.resolve("secrets/admin.properties"), c.adminCredentialFile());
    assertEquals(base.resolve("tls/server.p12").toString(), c.getString(ServerConfig.TLS_KEYSTORE_PATH));
    assertEquals("/abs/trust.p12", c.getString(ServerConfig.TLS_TRUSTSTORE_PATH));
    assertEquals(base.resolve("peer.secret").toString(), c.getString(ServerConfig.CLUSTER_PEER_SECRET_FILE));
    assertEquals(base.resolve("meta"), c.metadataDir());

    Properties cli = new Properties();
    cli.setProperty(ServerConfig.DATA_DIR, "cli-data");
    assertEquals(Path.of("cli-data").toAbsolutePath(), ServerConfig.load(conf, cli).dataDir(),
        "a -D or --data-dir value is relative to the working directory");
  }

  @Test
  void aMissingConfigurationFileIsNamed() {
    ConfigException e = assertThrows(ConfigException.class, () -> ServerConfig.load(Path.of("no/such.properties"), new Properties()));
    assertEquals("configuration file no/such.properties (--conf) does not exist", e.getMessage());
  }
}
