package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.server.auth.AuditLog;
import io.talos.thrift.CreateCredentialRequest;
import io.talos.thrift.CreateCredentialResponse;
import io.talos.thrift.CredentialService;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.RevokeCredentialRequest;
import io.talos.thrift.RotateCredentialRequest;
import io.talos.thrift.RotateCredentialResponse;
import io.talos.thrift.TopicService;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.log4j.AppenderSkeleton;
import org.apache.log4j.Logger;
import org.apache.log4j.spi.LoggingEvent;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Credentials on a real server over real HTTP: create, rotate (both secrets valid during the
 * grace period, the old one refused after it, on the server's injected clock), revoke (401 at
 * once on this node), admin only; and what the audit log gets: one line per admin call, rate
 * limited authentication failures, never a secret.
 */
class CredentialsEndToEndTest {
  private static final long GRACE_MS = 60_000;
  private static final long AUDIT_INTERVAL_MS = 10_000;

  /** Every line of the talos.audit logger (also routed to its file by the server's log4j config). */
  static final class Capture extends AppenderSkeleton {
    final List<String> lines = new CopyOnWriteArrayList<>();

    @Override
    protected void append(LoggingEvent event) {
      String[] thrown = event.getThrowableStrRep();
      lines.add(event.getRenderedMessage() + (thrown == null ? "" : "\n" + String.join("\n", thrown)));
    }

    @Override
    public void close() {}

    @Override
    public boolean requiresLayout() {
      return false;
    }
  }

  private final Capture audit = new Capture();
  /** Every line any logger of the server writes (the test log4j configuration: everything at INFO and up). */
  private final Capture all = new Capture();

  @BeforeEach
  void attach() {
    Logger.getLogger(AuditLog.LOGGER_NAME).addAppender(audit);
    Logger.getRootLogger().addAppender(all);
  }

  @AfterEach
  void detach() {
    Logger.getLogger(AuditLog.LOGGER_NAME).removeAppender(audit);
    Logger.getRootLogger().removeAppender(all);
  }

  private static TalosServer start(Path dir, ManualClock clock) throws Exception {
    return TalosServer.start(new ServerConfig(TestServers.props(dir,
        ServerConfig.AUTH_CREDENTIAL_ROTATION_GRACE_MS, Long.toString(GRACE_MS),
        ServerConfig.AUDIT_AUTH_FAILURE_INTERVAL_MS, Long.toString(AUDIT_INTERVAL_MS))), clock);
  }

  private static CreateCredentialResponse create(RawApi admin, String account) throws Exception {
    CredentialService.createCredential_result r = admin.call("credential", "createCredential",
        new CredentialService.createCredential_args(new CreateCredentialRequest(account)),
        new CredentialService.createCredential_result());
    assertFalse(r.isSetE(), String.valueOf(r.getE()));
    return r.getSuccess();
  }

  /** HTTP status of a listTopics signed with {@code keyId}/{@code secret}. */
  private static int listTopicsStatus(TalosServer server, String keyId, String secret) throws Exception {
    HttpResponse<byte[]> response = new RawApi(server.endpoint(), keyId, secret).post("/v1/api/topic", "listTopics",
        RawApi.call("listTopics", new TopicService.listTopics_args()));
    return response.statusCode();
  }

  @Test
  void createRotateRevokeOverHttp(@TempDir Path dir) throws Exception {
    ManualClock clock = new ManualClock(System.currentTimeMillis());
    try (TalosServer server = start(dir, clock)) {
      RawApi admin = RestartTest.api(server);
      CreateCredentialResponse alice = create(admin, "alice");
      String keyId = alice.getCredential().getSecretKeyId();
      String secret1 = alice.getSecretKey();
      assertEquals("alice", alice.getCredential().getAccountId());
      assertFalse(alice.getCredential().isAdmin());
      assertEquals(200, listTopicsStatus(server, keyId, secret1));

      // The topic alice creates is hers.
      RawApi asAlice = new RawApi(server.endpoint(), keyId, secret1);
      TopicService.createTopic_result topic = asAlice.call("topic", "createTopic", new TopicService.createTopic_args(
          new io.talos.thrift.CreateTopicRequest("alices", new io.talos.thrift.TopicAttribute().setPartitionNumber(1))),
          new TopicService.createTopic_result());
      assertEquals("alice", topic.getSuccess().getTopicInfo().getOwnerId());

      // A second active credential for the same account is refused; so is the reserved admin account.
      // (The same call signed in the same second would be a replay: 409.)
      Thread.sleep(1_100);
      CredentialService.createCredential_result again = admin.call("credential", "createCredential",
          new CredentialService.createCredential_args(new CreateCredentialRequest("alice")),
          new CredentialService.createCredential_result());
      assertEquals(ErrorCode.OPERATION_FAILED, again.getE().getErrorCode());
      CredentialService.createCredential_result reserved = admin.call("credential", "createCredential",
          new CredentialService.createCredential_args(new CreateCredentialRequest("admin")),
          new CredentialService.createCredential_result());
      assertEquals(ErrorCode.INVALID_REQUEST_PARAMS, reserved.getE().getErrorCode());
      CredentialService.createCredential_result badName = admin.call("credential", "createCredential",
          new CredentialService.createCredential_args(new CreateCredentialRequest("a#b")),
          new CredentialService.createCredential_result());
      assertEquals(ErrorCode.INVALID_REQUEST_PARAMS, badName.getE().getErrorCode());
      assertTrue(badName.getE().getErrMsg().contains("A-Z a-z 0-9 . _ -"), badName.getE().getErrMsg());

      // Non-admin: every credential call is refused.
      CredentialService.createCredential_result byAlice = asAlice.call("credential", "createCredential",
          new CredentialService.createCredential_args(new CreateCredentialRequest("mallory")),
          new CredentialService.createCredential_result());
      assertEquals(ErrorCode.PERMISSION_DENIED_ERROR, byAlice.getE().getErrorCode());
      CredentialService.listCredentials_result listByAlice = asAlice.call("credential", "listCredentials",
          new CredentialService.listCredentials_args(), new CredentialService.listCredentials_result());
      assertEquals(ErrorCode.PERMISSION_DENIED_ERROR, listByAlice.getE().getErrorCode());

      // Rotation: both secrets valid during the grace period, the old one refused after it.
      CredentialService.rotateCredential_result rotated = admin.call("credential", "rotateCredential",
          new CredentialService.rotateCredential_args(new RotateCredentialRequest(keyId)),
          new CredentialService.rotateCredential_result());
      assertFalse(rotated.isSetE(), String.valueOf(rotated.getE()));
      RotateCredentialResponse r = rotated.getSuccess();
      String secret2 = r.getSecretKey();
      assertFalse(secret2.equals(secret1));
      assertEquals(keyId, r.getCredential().getSecretKeyId());
      assertEquals(clock.millis() + GRACE_MS, r.getCredential().getPreviousSecretExpiresMs());
      assertEquals(200, listTopicsStatus(server, keyId, secret1));
      assertEquals(200, listTopicsStatus(server, keyId, secret2));
      clock.advanceMs(GRACE_MS - 1);
      assertEquals(200, listTopicsStatus(server, keyId, secret1), "last ms of the grace period");
      clock.advanceMs(1);
      assertEquals(401, listTopicsStatus(server, keyId, secret1), "grace period over");
      assertEquals(200, listTopicsStatus(server, keyId, secret2));

      // A grace period beyond the limit is refused, naming the key.
      CredentialService.rotateCredential_result tooLong = admin.call("credential", "rotateCredential",
          new CredentialService.rotateCredential_args(new RotateCredentialRequest(keyId).setGraceMs(Long.MAX_VALUE)),
          new CredentialService.rotateCredential_result());
      assertEquals(ErrorCode.INVALID_REQUEST_PARAMS, tooLong.getE().getErrorCode());
      assertTrue(tooLong.getE().getErrMsg().contains("auth.credential.rotation.grace.max.ms"));

      // Revocation: refused at once on this node, with 401 saying so; the admin credential cannot be revoked.
      CredentialService.revokeCredential_result revoked = admin.call("credential", "revokeCredential",
          new CredentialService.revokeCredential_args(new RevokeCredentialRequest(keyId)),
          new CredentialService.revokeCredential_result());
      assertFalse(revoked.isSetE(), String.valueOf(revoked.getE()));
      assertTrue(revoked.getSuccess().getCredential().isSetRevokedMs());
      HttpResponse<byte[]> refused = new RawApi(server.endpoint(), keyId, secret2).post("/v1/api/topic", "listTopics",
          RawApi.call("listTopics", new TopicService.listTopics_args()));
      assertEquals(401, refused.statusCode());
      assertTrue(RawApi.text(refused).contains("revoked"), RawApi.text(refused));
      HttpResponse<byte[]> guessed = new RawApi(server.endpoint(), keyId, "a-guess").post("/v1/api/topic", "listTopics",
          RawApi.call("listTopics", new TopicService.listTopics_args()));
      assertEquals(401, guessed.statusCode());
      assertFalse(RawApi.text(guessed).contains("revoked"), "a key id alone does not learn the key's state");
      CredentialService.revokeCredential_result revokeAdmin = admin.call("credential", "revokeCredential",
          new CredentialService.revokeCredential_args(new RevokeCredentialRequest(server.adminCredential().secretKeyId())),
          new CredentialService.revokeCredential_result());
      assertEquals(ErrorCode.OPERATION_FAILED, revokeAdmin.getE().getErrorCode());

      // Listed (never with a secret), revoked included; a new credential for the account works.
      CredentialService.listCredentials_result list = admin.call("credential", "listCredentials",
          new CredentialService.listCredentials_args(), new CredentialService.listCredentials_result());
      assertEquals(2, list.getSuccess().getCredentialsSize());
      Thread.sleep(1_100);
      CreateCredentialResponse alice2 = create(admin, "alice");
      assertEquals(200, listTopicsStatus(server, alice2.getCredential().getSecretKeyId(), alice2.getSecretKey()));

      // The audit log: the admin calls with their outcome; never a secret.
      List<String> lines = audit.lines;
      assertTrue(lines.stream().anyMatch(l -> l.startsWith("action=createCredential outcome=ok")
          && l.contains("account=admin") && l.contains(keyId) && l.contains("remote=127.0.0.1:")), lines.toString());
      assertTrue(lines.stream().anyMatch(l -> l.startsWith("action=createCredential outcome=PERMISSION_DENIED_ERROR")
          && l.contains("account=alice")), lines.toString());
      assertTrue(lines.stream().anyMatch(l -> l.startsWith("action=rotateCredential outcome=ok")), lines.toString());
      assertTrue(lines.stream().anyMatch(l -> l.startsWith("action=revokeCredential outcome=ok")), lines.toString());
      assertTrue(lines.stream().anyMatch(l -> l.startsWith("action=createTopic outcome=ok") && l.contains("alices")),
          lines.toString());
      assertTrue(lines.stream().anyMatch(l -> l.startsWith("authFailure status=401 keyId=" + keyId)
          && l.contains("remote=127.0.0.1:")), lines.toString());
      assertNoSecret(lines, secret1, secret2, alice2.getSecretKey(), server.adminCredential().secretKey());
      assertTrue(all.lines.size() > lines.size(), "the root logger saw the server's other lines too");
      assertNoSecret(all.lines, secret1, secret2, alice2.getSecretKey(), server.adminCredential().secretKey());
    }
  }

  /**
   * Another node sharing the store revokes (written behind this node's cache): this node refuses
   * the credential once metadata.cache.ttl.ms has passed, not before.
   */
  @Test
  void aRevocationOnAnotherNodeIsEffectiveHereWithinTheCacheTtl(@TempDir Path dir) throws Exception {
    ManualClock clock = new ManualClock(System.currentTimeMillis());
    long ttlMs = 5_000;
    try (TalosServer server = TalosServer.start(new ServerConfig(TestServers.props(dir,
        ServerConfig.METADATA_CACHE_TTL_MS, Long.toString(ttlMs))), clock)) {
      CreateCredentialResponse bob = create(RestartTest.api(server), "bob");
      String keyId = bob.getCredential().getSecretKeyId();
      assertEquals(200, listTopicsStatus(server, keyId, bob.getSecretKey()));
      io.talos.server.metadata.MetadataStore shared =
          ((io.talos.server.metadata.CachingMetadataStore) server.metadata()).delegate();
      io.talos.server.metadata.Credential stored = shared.credential(keyId).orElseThrow();
      assertTrue(shared.replaceCredential(stored, stored.revokedAt(clock.millis())));
      clock.advanceMs(ttlMs - 1);
      assertEquals(200, listTopicsStatus(server, keyId, bob.getSecretKey()), "still cached within the TTL");
      clock.advanceMs(1);
      assertEquals(401, listTopicsStatus(server, keyId, bob.getSecretKey()), "revoked once the TTL passed");
    }
  }

  /** The unmodified SDK 2.0.2 signs with a created credential, and with either secret during a rotation. */
  @Test
  void theOfficialSdkUsesACreatedCredentialThroughARotation(@TempDir Path dir) throws Exception {
    ManualClock clock = new ManualClock(System.currentTimeMillis());
    try (TalosServer server = start(dir, clock)) {
      RawApi admin = RestartTest.api(server);
      CreateCredentialResponse carol = create(admin, "carol");
      String keyId = carol.getCredential().getSecretKeyId();
      com.xiaomi.infra.galaxy.talos.admin.TalosAdmin before = sdkAdmin(server, keyId, carol.getSecretKey());
      com.xiaomi.infra.galaxy.talos.thrift.TopicInfo info = before.createTopic(
          new com.xiaomi.infra.galaxy.talos.thrift.CreateTopicRequest("carols",
              new com.xiaomi.infra.galaxy.talos.thrift.TopicAttribute().setPartitionNumber(1)
                  .setMessageRetentionSecs(3600))).getTopicInfo();
      assertEquals("carol", info.getOwnerId());

      CredentialService.rotateCredential_result rotated = admin.call("credential", "rotateCredential",
          new CredentialService.rotateCredential_args(new RotateCredentialRequest(keyId)),
          new CredentialService.rotateCredential_result());
      com.xiaomi.infra.galaxy.talos.admin.TalosAdmin after = sdkAdmin(server, keyId, rotated.getSuccess().getSecretKey());
      assertEquals(1, before.listTopic().size(), "the old secret during the grace period");
      assertEquals(1, after.listTopic().size(), "the new secret");
      clock.advanceMs(GRACE_MS);
      assertThrows(Exception.class, before::listTopic, "the old secret after the grace period");
      assertEquals(1, after.listTopic().size());
    }
  }

  private static com.xiaomi.infra.galaxy.talos.admin.TalosAdmin sdkAdmin(TalosServer server, String keyId, String secret) {
    java.util.Properties props = new java.util.Properties();
    props.setProperty("galaxy.talos.service.endpoint", server.endpoint().toString());
    return new com.xiaomi.infra.galaxy.talos.admin.TalosAdmin(
        new com.xiaomi.infra.galaxy.talos.client.TalosClientConfig(props),
        new com.xiaomi.infra.galaxy.rpc.thrift.Credential().setType(com.xiaomi.infra.galaxy.rpc.thrift.UserType.APP_SECRET)
            .setSecretKeyId(keyId).setSecretKey(secret));
  }

  @Test
  void authenticationFailuresAreAuditedRateLimitedPerKeyId(@TempDir Path dir) throws Exception {
    ManualClock clock = new ManualClock(System.currentTimeMillis());
    try (TalosServer server = start(dir, clock)) {
      String adminKey = server.adminCredential().secretKeyId();
      for (int i = 0; i < 5; i++) assertEquals(401, listTopicsStatus(server, adminKey, "wrong-secret-" + i));
      assertEquals(401, listTopicsStatus(server, "TKNOSUCHKEY", "whatever"));
      assertEquals(1, count("authFailure status=401 keyId=" + adminKey), audit.lines.toString());
      assertEquals(1, count("authFailure status=401 keyId=TKNOSUCHKEY"), audit.lines.toString());

      clock.advanceMs(AUDIT_INTERVAL_MS);
      assertEquals(401, listTopicsStatus(server, adminKey, "wrong-secret-again"));
      assertEquals(2, count("authFailure status=401 keyId=" + adminKey), audit.lines.toString());
      assertTrue(audit.lines.stream().anyMatch(l -> l.startsWith("authFailure status=401 keyId=" + adminKey)
          && l.contains("suppressed=4")), audit.lines.toString());
      assertNoSecret(audit.lines, server.adminCredential().secretKey());
    }
  }

  private long count(String prefix) {
    return audit.lines.stream().filter(l -> l.startsWith(prefix)).count();
  }

  private static void assertNoSecret(List<String> lines, String... secrets) {
    for (String line : lines) {
      for (String secret : secrets) assertFalse(line.contains(secret), "secret in audit line: " + line);
    }
  }
}
