package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.xiaomi.infra.galaxy.rpc.thrift.Credential;
import com.xiaomi.infra.galaxy.rpc.thrift.UserType;
import com.xiaomi.infra.galaxy.talos.admin.TalosAdmin;
import com.xiaomi.infra.galaxy.talos.client.TalosClientConfig;
import com.xiaomi.infra.galaxy.talos.client.TalosClientFactory;
import com.xiaomi.infra.galaxy.talos.consumer.SimpleConsumer;
import com.xiaomi.infra.galaxy.talos.consumer.TalosConsumerConfig;
import com.xiaomi.infra.galaxy.talos.producer.SimpleProducer;
import com.xiaomi.infra.galaxy.talos.producer.TalosProducerConfig;
import com.xiaomi.infra.galaxy.talos.thrift.BaseQuota;
import com.xiaomi.infra.galaxy.talos.thrift.ChangeTopicAttributeRequest;
import com.xiaomi.infra.galaxy.talos.thrift.CreateTopicRequest;
import com.xiaomi.infra.galaxy.talos.thrift.DescribeTopicRequest;
import com.xiaomi.infra.galaxy.talos.thrift.ErrorCode;
import com.xiaomi.infra.galaxy.talos.thrift.GalaxyTalosException;
import com.xiaomi.infra.galaxy.talos.thrift.GetPermissionRequest;
import com.xiaomi.infra.galaxy.talos.thrift.GetTopicOffsetRequest;
import com.xiaomi.infra.galaxy.rpc.thrift.GrantType;
import com.xiaomi.infra.galaxy.rpc.thrift.Grantee;
import com.xiaomi.infra.galaxy.talos.thrift.Message;
import com.xiaomi.infra.galaxy.talos.thrift.Permission;
import com.xiaomi.infra.galaxy.talos.thrift.QueryOffsetRequest;
import com.xiaomi.infra.galaxy.talos.thrift.RevokePermissionRequest;
import com.xiaomi.infra.galaxy.talos.thrift.SetPermissionRequest;
import com.xiaomi.infra.galaxy.talos.thrift.SetTopicQuotaRequest;
import com.xiaomi.infra.galaxy.talos.thrift.SetUserQuotaRequest;
import com.xiaomi.infra.galaxy.talos.thrift.TopicAndPartition;
import com.xiaomi.infra.galaxy.talos.thrift.TopicAttribute;
import com.xiaomi.infra.galaxy.talos.thrift.TopicTalosResourceName;
import com.xiaomi.infra.galaxy.talos.thrift.UserQuota;
import io.talos.server.auth.TopicPermission;
import io.talos.thrift.CreateCredentialRequest;
import io.talos.thrift.CredentialService;
import io.talos.thrift.RevokeCredentialRequest;
import io.talos.thrift.RotateCredentialRequest;
import io.talos.thrift.TopicService;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The access matrix on a real server, with the unmodified SDK 2.0.2: every SDK permission level
 * granted to another account × every call family (put, get, describe, offsets, consumer group,
 * change, topic quota, permissions, user quota), plus the owner, the admin, a revoked grant, and
 * the requests that never reach the permission check (revoked, expired and forged credentials, a
 * replayed request). Each case must be allowed exactly when the level holds the family's
 * permission bit; a refusal must be PERMISSION_DENIED_ERROR naming the missing permission.
 */
class AclMatrixTest {
  @TempDir static Path dir;
  static TalosServer server;
  static RawApi adminRaw;
  static Credential alice;
  static Credential bob;
  static String bobKeyId;
  static String bobSecret;
  static Credential admin;
  static TopicTalosResourceName trn;
  static final String TOPIC = "matrix";

  /** A call family: its name, the permission bit it needs (0: admin only), and the call. */
  record Family(String name, int needed, Call call) {}

  interface Call {
    void run(Credential who, int caseNo) throws Exception;
  }

  @BeforeAll
  static void start() throws Exception {
    server = TestServers.start(dir);
    adminRaw = RestartTest.api(server);
    admin = sdkCredential(server.adminCredential().secretKeyId(), server.adminCredential().secretKey());
    alice = credential("alice");
    bob = credential("bob");
    bobKeyId = bob.getSecretKeyId();
    bobSecret = bob.getSecretKey();
    trn = adminFor(alice).createTopic(new CreateTopicRequest(TOPIC, new TopicAttribute().setPartitionNumber(1)))
        .getTopicInfo().getTopicTalosResourceName();
  }

  @AfterAll
  static void stop() {
    if (server != null) server.close();
  }

  private static Credential credential(String account) throws Exception {
    CredentialService.createCredential_result r = adminRaw.call("credential", "createCredential",
        new CredentialService.createCredential_args(new CreateCredentialRequest(account)),
        new CredentialService.createCredential_result());
    assertFalse(r.isSetE(), String.valueOf(r.getE()));
    return sdkCredential(r.getSuccess().getCredential().getSecretKeyId(), r.getSuccess().getSecretKey());
  }

  static Credential sdkCredential(String keyId, String secret) {
    return new Credential().setType(UserType.APP_SECRET).setSecretKeyId(keyId).setSecretKey(secret);
  }

  static Properties props() {
    Properties p = new Properties();
    p.setProperty("galaxy.talos.service.endpoint", server.endpoint().toString());
    return p;
  }

  static TalosAdmin adminFor(Credential c) {
    return new TalosAdmin(new TalosClientConfig(props()), c);
  }

  static Grantee account(String id) {
    return new Grantee().setType(GrantType.DEVELOPER).setIdentifier(id);
  }

  static final List<Family> FAMILIES = List.of(
      new Family("put", TopicPermission.PUT_MESSAGE, (who, n) ->
          new SimpleProducer(new TalosProducerConfig(props()), new TopicAndPartition(TOPIC, trn, 0), who)
              .putMessageList(List.of(new Message(ByteBuffer.wrap(("m" + n).getBytes(StandardCharsets.UTF_8)))))),
      new Family("get", TopicPermission.GET_MESSAGE, (who, n) ->
          new SimpleConsumer(new TalosConsumerConfig(props()), new TopicAndPartition(TOPIC, trn, 0), who)
              .fetchMessage(0)),
      new Family("describe", TopicPermission.DESCRIBE_TOPIC, (who, n) ->
          adminFor(who).describeTopic(new DescribeTopicRequest(TOPIC))),
      new Family("offsets", TopicPermission.DESCRIBE_TOPIC, (who, n) ->
          adminFor(who).getTopicOffset(new GetTopicOffsetRequest(trn))),
      new Family("consumer", TopicPermission.GET_MESSAGE, (who, n) ->
          new TalosClientFactory(new TalosClientConfig(props()), who).newConsumerClient()
              .queryOffset(new QueryOffsetRequest("group" + n, new TopicAndPartition(TOPIC, trn, 0)))),
      new Family("change", TopicPermission.CHANGE_TOPIC, (who, n) ->
          adminFor(who).changeTopicAttribute(new ChangeTopicAttributeRequest(trn,
              new TopicAttribute().setAttributes(Map.of("case", Integer.toString(n)))))),
      new Family("topicQuota", TopicPermission.CHANGE_TOPIC, (who, n) ->
          adminFor(who).setTopicQuota(new SetTopicQuotaRequest(trn, new BaseQuota(1000 + n)))),
      new Family("permission", TopicPermission.CHANGE_PERMISSION, (who, n) ->
          adminFor(who).setPermission(new SetPermissionRequest(trn, account("carol" + n), Permission.GET_MESSAGE))),
      new Family("readPermission", TopicPermission.DESCRIBE_TOPIC, (who, n) ->
          adminFor(who).queryPermission(new GetPermissionRequest(trn, account("bob")))),
      new Family("userQuota", 0, (who, n) ->
          adminFor(who).setUserQuota(new SetUserQuotaRequest("dave" + n, new UserQuota(new BaseQuota(n + 1))))));

  private final List<String> failures = new ArrayList<>();
  private int cases;

  /** Runs one case: {@code expectAllowed} or a PERMISSION_DENIED_ERROR naming the needed permission. */
  private void check(String label, Family f, Credential who, boolean expectAllowed) {
    cases++;
    Throwable error = null;
    try {
      f.call().run(who, cases);
    } catch (Throwable t) {
      error = t;
    }
    GalaxyTalosException galaxy = null;
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof GalaxyTalosException g) galaxy = g;
    }
    if (expectAllowed) {
      if (error != null) failures.add(label + " " + f.name() + ": expected allowed, got " + error);
    } else if (galaxy == null || galaxy.getErrorCode() != ErrorCode.PERMISSION_DENIED_ERROR) {
      failures.add(label + " " + f.name() + ": BYPASS or wrong error, expected PERMISSION_DENIED_ERROR, got "
          + (error == null ? "success" : error));
    } else if (f.needed() != 0 && !galaxy.getErrMsg().contains(TopicPermission.name(f.needed()))) {
      failures.add(label + " " + f.name() + ": the refusal does not name " + TopicPermission.name(f.needed()) + ": "
          + galaxy.getErrMsg());
    }
  }

  @Test
  void everyLevelTimesEveryFamilyTimesEveryPrincipal() throws Exception {
    TalosAdmin asAlice = adminFor(alice);
    for (Permission level : Permission.values()) {
      if (level == Permission.NONE) {
        asAlice.revokePermission(new RevokePermissionRequest(trn, account("bob"))); // the SDK refuses to set NONE
      } else {
        asAlice.setPermission(new SetPermissionRequest(trn, account("bob"), level));
      }
      for (Family f : FAMILIES) {
        boolean allowed = f.needed() != 0 && TopicPermission.grants(level.getValue(), f.needed());
        check("bob with " + level, f, bob, allowed);
      }
    }
    // The owner may do everything on its topic but set user quotas; the admin everything.
    for (Family f : FAMILIES) check("owner alice", f, alice, f.needed() != 0);
    for (Family f : FAMILIES) check("admin", f, admin, true);
    // A revoked grant: nothing is left. The SDK signs with a timestamp in seconds, so the same
    // setPermission as in the loop above, sent within the same second, would be the same signed
    // request and refused as a replay (409): start a new second first.
    long second = System.currentTimeMillis() / 1000;
    while (System.currentTimeMillis() / 1000 == second) Thread.sleep(20);
    asAlice.setPermission(new SetPermissionRequest(trn, account("bob"), Permission.FULL_CONTROL));
    asAlice.revokePermission(new RevokePermissionRequest(trn, account("bob")));
    for (Family f : FAMILIES) check("bob after revokePermission", f, bob, false);
    assertEquals(Permission.NONE.getValue(), asAlice.queryPermission(new GetPermissionRequest(trn, account("bob"))));

    assertTrue(cases >= 50, "cases: " + cases);
    assertEquals(List.of(), failures, failures.size() + " of " + cases + " cases failed");
  }

  /** Requests that never reach the permission check: answered 401/409 from the headers. */
  @Test
  void revokedExpiredForgedAndReplayedRequestsAreRefusedBeforeAnyPermission() throws Exception {
    Credential erin = credential("erin");
    Credential frank = credential("frank");
    // alice grants both everything, so only authentication can refuse them.
    adminFor(alice).setPermission(new SetPermissionRequest(trn, account("erin"), Permission.ADMIN));
    adminFor(alice).setPermission(new SetPermissionRequest(trn, account("frank"), Permission.ADMIN));
    int refused = 0;
    // forged: the right key id, a wrong secret
    Credential forged = sdkCredential(bobKeyId, bobSecret + "x");
    for (Family f : FAMILIES) {
      assertRefused(f, forged);
      refused++;
    }
    // revoked credential
    CredentialService.revokeCredential_result rv = adminRaw.call("credential", "revokeCredential",
        new CredentialService.revokeCredential_args(new RevokeCredentialRequest(erin.getSecretKeyId())),
        new CredentialService.revokeCredential_result());
    assertFalse(rv.isSetE(), String.valueOf(rv.getE()));
    for (Family f : FAMILIES) {
      assertRefused(f, erin);
      refused++;
    }
    // expired: the secret rotated out with no grace
    CredentialService.rotateCredential_result rt = adminRaw.call("credential", "rotateCredential",
        new CredentialService.rotateCredential_args(new RotateCredentialRequest(frank.getSecretKeyId()).setGraceMs(0)),
        new CredentialService.rotateCredential_result());
    assertFalse(rt.isSetE(), String.valueOf(rt.getE()));
    for (Family f : FAMILIES) {
      assertRefused(f, frank);
      refused++;
    }
    // replayed: the same signed state-changing request twice
    RawApi asAlice = new RawApi(server.endpoint(), alice.getSecretKeyId(), alice.getSecretKey());
    byte[] body = RawApi.call("setPermission", new TopicService.setPermission_args(new io.talos.thrift.SetPermissionRequest(
        new io.talos.thrift.TopicTalosResourceName(trn.getTopicTalosResourceName()),
        new io.talos.thrift.Grantee().setType(io.talos.thrift.GrantType.DEVELOPER).setIdentifier("gina"),
        io.talos.thrift.Permission.PUT_MESSAGE)));
    long now = java.time.Instant.now().getEpochSecond();
    assertEquals(200, asAlice.send("POST", "/v1/api/topic", "setPermission", body, now, alice.getSecretKey(), null,
        null).statusCode());
    assertEquals(409, asAlice.send("POST", "/v1/api/topic", "setPermission", body, now, alice.getSecretKey(), null,
        null).statusCode());
    refused++;
    assertTrue(refused >= 31);
  }

  private static void assertRefused(Family f, Credential who) {
    try {
      f.call().run(who, 0);
    } catch (Throwable t) {
      for (Throwable c = t; c != null; c = c.getCause()) {
        String s = String.valueOf(c.getMessage());
        if (s.contains("401") || s.contains("invalid signature") || s.contains("revoked") || s.contains("Unauthorized")) {
          return;
        }
      }
      throw new AssertionError(f.name() + " by " + who.getSecretKeyId() + ": expected HTTP 401, got " + t, t);
    }
    throw new AssertionError(f.name() + " by " + who.getSecretKeyId() + ": BYPASS, the call succeeded");
  }
}
