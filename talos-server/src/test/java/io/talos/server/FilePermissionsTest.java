package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicTalosResourceName;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a server writes is private to its user: directories 0700, files 0600 (messages, the
 * metadata store with the credentials' secrets, the admin credential), and the admin secret is
 * never printed.
 */
class FilePermissionsTest {
  @BeforeAll
  static void posixOnly() {
    // Not java.io.tmpdir's store: an HBase mini cluster earlier in the JVM points it at a deleted dir.
    org.junit.jupiter.api.Assumptions.assumeTrue(
        java.nio.file.FileSystems.getDefault().supportedFileAttributeViews().contains("posix"),
        "no POSIX permissions here");
  }

  private static String mode(Path p) throws Exception {
    return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
  }

  @Test
  void everythingAServerCreatesIsOwnerOnly(@TempDir Path tmp) throws Exception {
    Path dir = tmp.resolve("data");
    try (TalosServer server = TestServers.start(dir, ServerConfig.STORAGE_SEGMENT_BYTES, "1024")) {
      RawApi api = RestartTest.api(server);
      TopicTalosResourceName trn = api.createTopic("private", 2);
      for (int i = 0; i < 20; i++) api.put(new TopicAndPartition("private", trn, i % 2), List.of("message-" + i + "-".repeat(100)));
    }
    assertEquals("rwx------", mode(dir));
    assertEquals("rwx------", mode(dir.resolve("metadata")));
    assertEquals("rw-------", mode(dir.resolve("metadata/metadata.mv.db")));
    assertEquals("rw-------", mode(dir.resolve("admin-credential.properties")));
    int files = 0;
    try (Stream<Path> all = Files.walk(dir.resolve("log"))) {
      for (Path p : all.toList()) {
        if (Files.isDirectory(p)) {
          assertEquals("rwx------", mode(p), p.toString());
        } else {
          assertEquals("rw-------", mode(p), p.toString());
          files++;
        }
      }
    }
    assertTrue(files >= 4, "segments and indexes were written: " + files);
  }

  @Test
  void theAdminSecretIsNotPrintedOnlyWhereItIs(@TempDir Path tmp) throws Exception {
    Path dataDir = tmp.resolve("data");
    Path log = tmp.resolve("server.log");
    Process child = RestartTest.startChild(dataDir, log);
    try {
      RestartTest.endpointOf(log); // waits for READY
      Properties p = new Properties();
      try (InputStream in = Files.newInputStream(dataDir.resolve("admin-credential.properties"))) {
        p.load(in);
      }
      String output = Files.readString(log);
      assertFalse(output.contains(p.getProperty("secretKey")), "the secret key was printed:\n" + output);
      assertTrue(output.contains(dataDir.resolve("admin-credential.properties").toString()), output);
    } finally {
      child.destroy();
      child.waitFor(30, TimeUnit.SECONDS);
    }
  }
}
