package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.thrift.BaseQuota;
import io.talos.thrift.CreateCredentialRequest;
import io.talos.thrift.CreateTopicRequest;
import io.talos.thrift.CredentialService;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.GrantType;
import io.talos.thrift.Grantee;
import io.talos.thrift.Permission;
import io.talos.thrift.QueryTopicQuotaRequest;
import io.talos.thrift.QuotaService;
import io.talos.thrift.RevokeCredentialRequest;
import io.talos.thrift.SetPermissionRequest;
import io.talos.thrift.SetTopicQuotaRequest;
import io.talos.thrift.SetUserQuotaRequest;
import io.talos.thrift.TopicAttribute;
import io.talos.thrift.TopicService;
import io.talos.thrift.TopicTalosResourceName;
import io.talos.thrift.UserQuota;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The declared limits of the security model on a real server, set small: grants per topic
 * (acl.grants.max), credentials per account (auth.credentials.per.account.max) and the quota value
 * ranges (quota.bytes.per.sec.max, quota.requests.per.sec.max, quota.topics.max). Each is checked
 * before anything is stored, and refused with an error naming the key.
 */
class SecurityLimitsEndToEndTest {
  @TempDir static Path dir;
  static TalosServer server;
  static RawApi admin;

  @BeforeAll
  static void start() throws Exception {
    server = TestServers.start(dir, ServerConfig.ACL_GRANTS_MAX, "2", ServerConfig.AUTH_CREDENTIALS_PER_ACCOUNT_MAX, "2",
        ServerConfig.QUOTA_BYTES_PER_SEC_MAX, "1000", ServerConfig.QUOTA_REQUESTS_PER_SEC_MAX, "10",
        ServerConfig.QUOTA_TOPICS_MAX, "5");
    admin = RestartTest.api(server);
  }

  @AfterAll
  static void stop() {
    if (server != null) server.close();
  }

  private static Grantee account(String id) {
    return new Grantee().setType(GrantType.DEVELOPER).setIdentifier(id);
  }

  /** Waits for the next second: a repeated identical signed call within one second is a replay. */
  private static void nextSecond() throws InterruptedException {
    long now = System.currentTimeMillis();
    Thread.sleep(1000 - now % 1000 + 20);
  }

  private static GalaxyTalosException setPermission(TopicTalosResourceName trn, String account, Permission level)
      throws Exception {
    return admin.call("topic", "setPermission", new TopicService.setPermission_args(
        new SetPermissionRequest(trn, account(account), level)),
        new TopicService.setPermission_result()).getE();
  }

  private static void assertRefused(GalaxyTalosException e, ErrorCode code, String... mentions) {
    assertTrue(e != null, "should be refused");
    assertEquals(code, e.getErrorCode(), e.getErrMsg());
    for (String m : mentions) assertTrue(e.getErrMsg().contains(m), e.getErrMsg() + " should mention " + m);
  }

  @Test
  void grantsPerTopicAreBounded() throws Exception {
    TopicTalosResourceName trn = admin.createTopic("acl", 1);
    assertEquals(null, setPermission(trn, "a", Permission.GET_MESSAGE));
    assertEquals(null, setPermission(trn, "b", Permission.GET_MESSAGE));
    assertEquals(null, setPermission(trn, "b", Permission.PUT_MESSAGE), "changing an existing grant is not a new one");
    assertRefused(setPermission(trn, "c", Permission.GET_MESSAGE), ErrorCode.INVALID_REQUEST_PARAMS, "acl.grants.max", "at most 2");
    TopicService.createTopic_result created = admin.call("topic", "createTopic", new TopicService.createTopic_args(
        new CreateTopicRequest("acl2", new TopicAttribute().setPartitionNumber(1)).setAclMap(Map.of(
            account("a"), Permission.GET_MESSAGE, account("b"), Permission.GET_MESSAGE,
            account("c"), Permission.GET_MESSAGE))), new TopicService.createTopic_result());
    assertRefused(created.getE(), ErrorCode.INVALID_REQUEST_PARAMS, "acl.grants.max");
    assertFalse(admin.call("topic", "listTopics", new TopicService.listTopics_args(),
        new TopicService.listTopics_result()).getSuccess().toString().contains("acl2"), "nothing stored");
  }

  @Test
  void credentialsPerAccountAreBounded() throws Exception {
    for (int i = 0; i < 2; i++) {
      nextSecond();
      CredentialService.createCredential_result r = admin.call("credential", "createCredential",
          new CredentialService.createCredential_args(new CreateCredentialRequest("carol")),
          new CredentialService.createCredential_result());
      assertFalse(r.isSetE(), String.valueOf(r.getE()));
      assertFalse(admin.call("credential", "revokeCredential", new CredentialService.revokeCredential_args(
          new RevokeCredentialRequest(r.getSuccess().getCredential().getSecretKeyId())),
          new CredentialService.revokeCredential_result()).isSetE());
    }
    nextSecond();
    CredentialService.createCredential_result third = admin.call("credential", "createCredential",
        new CredentialService.createCredential_args(new CreateCredentialRequest("carol")),
        new CredentialService.createCredential_result());
    assertRefused(third.getE(), ErrorCode.OPERATION_FAILED, "auth.credentials.per.account.max", "carol");
    assertFalse(admin.call("credential", "createCredential",
        new CredentialService.createCredential_args(new CreateCredentialRequest("dan")),
        new CredentialService.createCredential_result()).isSetE(), "another account is not affected");
  }

  @Test
  void quotaValuesAreBounded() throws Exception {
    TopicTalosResourceName trn = admin.createTopic("quota", 1);
    GalaxyTalosException bytes = admin.call("topic", "setTopicQuota", new TopicService.setTopicQuota_args(
        new SetTopicQuotaRequest(trn, new BaseQuota(0).setPutMessageBytesQpsQuota(1001))),
        new TopicService.setTopicQuota_result()).getE();
    assertRefused(bytes, ErrorCode.INVALID_REQUEST_PARAMS, "putMessageBytesQpsQuota 1001", "quota.bytes.per.sec.max");
    GalaxyTalosException requests = admin.call("topic", "setTopicQuota", new TopicService.setTopicQuota_args(
        new SetTopicQuotaRequest(trn, new BaseQuota(0).setGetMessageQpsQuota(11))),
        new TopicService.setTopicQuota_result()).getE();
    assertRefused(requests, ErrorCode.INVALID_REQUEST_PARAMS, "getMessageQpsQuota 11", "quota.requests.per.sec.max");
    assertEquals(ErrorCode.QUOTA_NOT_EXIST, admin.call("topic", "queryTopicQuota",
        new TopicService.queryTopicQuota_args(new QueryTopicQuotaRequest(trn)),
        new TopicService.queryTopicQuota_result()).getE().getErrorCode(), "nothing stored");
    assertFalse(admin.call("topic", "setTopicQuota", new TopicService.setTopicQuota_args(
        new SetTopicQuotaRequest(trn, new BaseQuota(0).setPutMessageBytesQpsQuota(1000).setGetMessageQpsQuota(10))),
        new TopicService.setTopicQuota_result()).isSetE(), "the largest values are allowed");

    GalaxyTalosException topics = admin.call("quota", "setUserQuota", new QuotaService.setUserQuota_args(
        new SetUserQuotaRequest("erin", new UserQuota(new BaseQuota(0)).setTopicNumberQuota(6))),
        new QuotaService.setUserQuota_result()).getE();
    assertRefused(topics, ErrorCode.INVALID_REQUEST_PARAMS, "topicNumberQuota 6", "quota.topics.max");
    GalaxyTalosException userBytes = admin.call("quota", "setUserQuota", new QuotaService.setUserQuota_args(
        new SetUserQuotaRequest("erin", new UserQuota(new BaseQuota(0).setGetMessageBytesQpsQuota(5000)))),
        new QuotaService.setUserQuota_result()).getE();
    assertRefused(userBytes, ErrorCode.INVALID_REQUEST_PARAMS, "getMessageBytesQpsQuota", "quota.bytes.per.sec.max");
    assertFalse(admin.call("quota", "listUserQuota", new QuotaService.listUserQuota_args(),
        new QuotaService.listUserQuota_result()).getSuccess().getUserQuotaList().containsKey("erin"), "nothing stored");
    assertFalse(admin.call("quota", "setUserQuota", new QuotaService.setUserQuota_args(
        new SetUserQuotaRequest("erin", new UserQuota(new BaseQuota(0).setPutMessageBytesQpsQuota(-1))
            .setTopicNumberQuota(5))), new QuotaService.setUserQuota_result()).isSetE(), "no limit and the largest allowed");
  }
}
