package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.client.TalosClient;
import io.talos.client.cli.TalosCli;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Properties;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code talos user create|list|rotate|revoke} against a real server: the credential file
 * written with {@code --out} (admin credential format plus accountId, 0600) signs requests,
 * listing never shows a secret, a rotation without grace ends the old file at once, revocation
 * ends the new one, and a non-admin is refused.
 */
class UserCommandEndToEndTest {
  private record Run(int code, String out, String err) {}

  private static Run cli(TalosServer server, Path credential, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    String[] all = Stream.concat(Stream.of(args), Stream.of("--endpoint", server.endpoint().toString(),
        "--credential", credential.toString())).toArray(String[]::new);
    int code = new TalosCli(new ByteArrayInputStream(new byte[0]), new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8), TalosClient::create).execute(all);
    return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  private static Properties load(Path file) throws Exception {
    Properties p = new Properties();
    try (InputStream in = Files.newInputStream(file)) {
      p.load(in);
    }
    return p;
  }

  @Test
  void aclSetListRevokeFromTheCommandLine(@TempDir Path dir) throws Exception {
    try (TalosServer server = TestServers.start(dir.resolve("data"))) {
      Path admin = dir.resolve("data").resolve("admin-credential.properties");
      Path alice = dir.resolve("alice.properties");
      Path bob = dir.resolve("bob.properties");
      assertEquals(0, cli(server, admin, "user", "create", "alice", "--out", alice.toString()).code());
      assertEquals(0, cli(server, admin, "user", "create", "bob", "--out", bob.toString()).code());
      assertEquals(0, cli(server, alice, "topic", "create", "shared", "--partitions", "1").code());
      // bob sees nothing of alice's topic until she grants him a level.
      Run before = cli(server, bob, "acl", "list", "shared");
      assertTrue(before.code() != 0 && before.err().contains("PERMISSION_DENIED"), before.out() + before.err());
      Run set = cli(server, alice, "acl", "set", "shared", "bob", "get_message_and_describe_topic");
      assertEquals(0, set.code(), set.err());
      Run listed = cli(server, bob, "acl", "list", "shared");
      assertEquals(0, listed.code(), listed.err());
      assertTrue(listed.out().contains("bob") && listed.out().contains("GET_MESSAGE_AND_DESCRIBE_TOPIC")
          && listed.out().contains("alice") && listed.out().contains("ADMIN"), listed.out());
      // bob may read but not change permissions.
      Run bobSets = cli(server, bob, "acl", "set", "shared", "bob", "ADMIN");
      assertTrue(bobSets.code() != 0 && bobSets.err().contains("CHANGE_PERMISSION"), bobSets.err());
      Run bad = cli(server, alice, "acl", "set", "shared", "bob", "EVERYTHING");
      assertTrue(bad.code() != 0 && bad.err().contains("unknown permission level"), bad.err());
      assertEquals(0, cli(server, alice, "acl", "revoke", "shared", "bob").code());
      Run after = cli(server, bob, "acl", "list", "shared");
      assertTrue(after.code() != 0 && after.err().contains("PERMISSION_DENIED"), after.out() + after.err());
    }
  }

  @Test
  void createListRotateRevokeFromTheCommandLine(@TempDir Path dir) throws Exception {
    try (TalosServer server = TestServers.start(dir.resolve("data"))) {
      Path admin = dir.resolve("data").resolve("admin-credential.properties");
      Path alice = dir.resolve("alice.properties");
      Run created = cli(server, admin, "user", "create", "alice", "--out", alice.toString());
      assertEquals(0, created.code(), created.err());
      Properties p = load(alice);
      assertEquals("alice", p.getProperty("accountId"));
      assertTrue(p.getProperty("secretKeyId").startsWith("TK"));
      String secret1 = p.getProperty("secretKey");
      assertEquals(32, secret1.length());
      assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(alice)));
      assertFalse(created.out().contains(secret1), "--out: the secret is not printed");

      Run made = cli(server, alice, "topic", "create", "t-alice", "--partitions", "1");
      assertEquals(0, made.code(), made.err());

      Run list = cli(server, admin, "user", "list");
      assertEquals(0, list.code(), list.err());
      assertTrue(list.out().contains(p.getProperty("secretKeyId")) && list.out().contains("alice"), list.out());
      assertFalse(list.out().contains(secret1), list.out());

      // The file must be new: refused before the server is asked.
      Run exists = cli(server, admin, "user", "create", "bob", "--out", alice.toString());
      assertEquals(1, exists.code());
      assertTrue(exists.err().contains("exists"), exists.err());

      // Non-admin.
      Run denied = cli(server, alice, "user", "create", "mallory");
      assertEquals(1, denied.code());
      assertTrue(denied.err().contains("PERMISSION_DENIED_ERROR"), denied.err());

      // Rotation without grace: the old file stops at once, the new one works.
      Path alice2 = dir.resolve("alice-2.properties");
      Run rotated = cli(server, admin, "user", "rotate", "alice", "--grace-ms", "0", "--out", alice2.toString());
      assertEquals(0, rotated.code(), rotated.err());
      assertEquals(p.getProperty("secretKeyId"), load(alice2).getProperty("secretKeyId"));
      Run old = cli(server, alice, "topic", "list");
      assertEquals(1, old.code());
      assertTrue(old.err().contains("401"), old.err());
      assertEquals(0, cli(server, alice2, "topic", "list").code());

      // Revocation.
      Run revoked = cli(server, admin, "user", "revoke", p.getProperty("secretKeyId"));
      assertEquals(0, revoked.code(), revoked.err());
      Run after = cli(server, alice2, "topic", "list");
      assertEquals(1, after.code());
      assertTrue(after.err().contains("401") && after.err().contains("revoked"), after.err());
    }
  }
}
