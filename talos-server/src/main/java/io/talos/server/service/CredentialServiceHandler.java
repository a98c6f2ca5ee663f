package io.talos.server.service;

import io.talos.common.errors.TalosErrors;
import io.talos.server.auth.AdminCredentials;
import io.talos.server.auth.Secrets;
import io.talos.server.frontend.RequestContext;
import io.talos.server.metadata.Credential;
import io.talos.server.metadata.MetadataStore;
import io.talos.thrift.CreateCredentialRequest;
import io.talos.thrift.CreateCredentialResponse;
import io.talos.thrift.CredentialInfo;
import io.talos.thrift.CredentialService;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.ListCredentialsResponse;
import io.talos.thrift.RevokeCredentialRequest;
import io.talos.thrift.RevokeCredentialResponse;
import io.talos.thrift.RotateCredentialRequest;
import io.talos.thrift.RotateCredentialResponse;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * CredentialService: the admin creates, lists, rotates and revokes the credentials of accounts.
 * Every method needs an admin credential.
 *
 * <p>Model: an account (its id is what topics are owned by and what a Grantee of type DEVELOPER
 * names) signs with a credential, a key id and a secret. {@code createCredential} gives an
 * account with no active credential a new one; rotation keeps the key id and replaces the
 * secret, the old secret staying valid for a grace period; revocation ends the credential for
 * good (the account and what it owns stay: a new credential can be created for it). The secret
 * is in the answer of create and rotate only; listing never shows it.
 *
 * <p>Creating checks that the account has no active credential and then writes; two admins
 * creating a credential for the same account at the same moment may both succeed (both
 * credentials act as that account, both are listed and each can be revoked).
 *
 * <p>Thread-safe.
 */
public final class CredentialServiceHandler extends BaseServiceHandler implements CredentialService.Iface {
  /** What an account id may be: it becomes part of topic resource names (owner#name#suffix). */
  static final Pattern ACCOUNT_ID = Pattern.compile("[A-Za-z0-9._-]{1,64}");
  private static final int MAX_KEY_ID_CHARS = 64;
  private static final int CAS_ATTEMPTS = 10;

  private final MetadataStore metadata;
  private final Clock clock;
  private final long defaultGraceMs;
  private final long maxGraceMs;
  private final int maxCredentials;
  private final int maxPerAccount;

  /**
   * @param defaultGraceMs how long the old secret stays valid after a rotation (auth.credential.rotation.grace.ms)
   * @param maxGraceMs the longest grace a request may ask for (auth.credential.rotation.grace.max.ms)
   * @param maxCredentials most credentials, revoked included, the store may hold (auth.credentials.max)
   * @param maxPerAccount most credentials, revoked included, of one account (auth.credentials.per.account.max)
   */
  public CredentialServiceHandler(MetadataStore metadata, Clock clock, long defaultGraceMs, long maxGraceMs,
      int maxCredentials, int maxPerAccount) {
    this.maxPerAccount = maxPerAccount;
    this.metadata = metadata;
    this.clock = clock;
    this.defaultGraceMs = defaultGraceMs;
    this.maxGraceMs = maxGraceMs;
    this.maxCredentials = maxCredentials;
  }

  @Override
  public CreateCredentialResponse createCredential(CreateCredentialRequest request) throws GalaxyTalosException {
    requireAdmin("creating a credential");
    if (request == null) throw TalosErrors.invalidParams("request is missing");
    String account = request.getAccountId();
    if (account == null || !ACCOUNT_ID.matcher(account).matches()) {
      throw TalosErrors.invalidParams("accountId '" + shown(account) + "' is not allowed: 1..64 characters of"
          + " A-Z a-z 0-9 . _ -");
    }
    if (account.equals(AdminCredentials.ADMIN_OWNER)) {
      throw TalosErrors.invalidParams("accountId '" + account + "' is reserved for the admin credential");
    }
    List<Credential> all = metadata.credentials();
    int ofAccount = 0;
    for (Credential c : all) {
      if (!account.equals(c.ownerId())) continue;
      ofAccount++;
      if (!c.revoked()) {
        throw TalosErrors.of(ErrorCode.OPERATION_FAILED, "account '" + account + "' already has the active credential "
            + c.secretKeyId() + "; rotate its secret (user rotate) or revoke it first");
      }
    }
    if (ofAccount >= maxPerAccount) {
      throw TalosErrors.of(ErrorCode.OPERATION_FAILED, "account '" + account + "' has " + ofAccount
          + " credentials (revoked included); at most " + maxPerAccount + " (auth.credentials.per.account.max)");
    }
    if (all.size() >= maxCredentials) {
      throw TalosErrors.of(ErrorCode.OPERATION_FAILED, "the server holds " + all.size() + " credentials (revoked"
          + " included); at most " + maxCredentials + " (auth.credentials.max)");
    }
    Credential created = new Credential(Secrets.newKeyId(), Secrets.newSecret(), account, false, null, 0,
        clock.millis(), 0, 0);
    if (!metadata.putCredentialIfAbsent(created)) {
      // 64 random bits: a collision means a broken random source, not bad luck.
      throw TalosErrors.of(ErrorCode.INTERNAL_SERVER_ERROR, "new key id " + created.secretKeyId() + " exists; retry");
    }
    return new CreateCredentialResponse(info(created), created.secretKey());
  }

  @Override
  public ListCredentialsResponse listCredentials() throws GalaxyTalosException {
    requireAdmin("listing credentials");
    List<CredentialInfo> infos = new ArrayList<>();
    for (Credential c : metadata.credentials()) infos.add(info(c));
    return new ListCredentialsResponse(infos);
  }

  @Override
  public RotateCredentialResponse rotateCredential(RotateCredentialRequest request) throws GalaxyTalosException {
    requireAdmin("rotating a secret");
    if (request == null) throw TalosErrors.invalidParams("request is missing");
    long graceMs = request.isSetGraceMs() ? request.getGraceMs() : defaultGraceMs;
    if (graceMs < 0 || graceMs > maxGraceMs) {
      throw TalosErrors.invalidParams("graceMs " + graceMs + " is out of range; allowed: 0.." + maxGraceMs
          + " (auth.credential.rotation.grace.max.ms)");
    }
    for (int attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
      Credential current = existing(request.getSecretKeyId());
      if (current.revoked()) {
        throw TalosErrors.of(ErrorCode.OPERATION_FAILED, "credential " + current.secretKeyId()
            + " is revoked; create a new one for account '" + current.ownerId() + "'");
      }
      long now = clock.millis();
      Credential rotated = current.rotated(Secrets.newSecret(), now, now + graceMs);
      if (metadata.replaceCredential(current, rotated)) {
        return new RotateCredentialResponse(info(rotated), rotated.secretKey());
      }
    }
    throw TalosErrors.of(ErrorCode.OPERATION_FAILED, "credential " + request.getSecretKeyId()
        + " is being changed concurrently; retry");
  }

  @Override
  public RevokeCredentialResponse revokeCredential(RevokeCredentialRequest request) throws GalaxyTalosException {
    requireAdmin("revoking a credential");
    if (request == null) throw TalosErrors.invalidParams("request is missing");
    for (int attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
      Credential current = existing(request.getSecretKeyId());
      if (current.admin()) {
        throw TalosErrors.of(ErrorCode.OPERATION_FAILED, "credential " + current.secretKeyId() + " is the admin"
            + " credential: revoking it would lock every operator out; rotate its secret instead");
      }
      if (current.revoked()) return new RevokeCredentialResponse(info(current));
      Credential revoked = current.revokedAt(clock.millis());
      if (metadata.replaceCredential(current, revoked)) return new RevokeCredentialResponse(info(revoked));
    }
    throw TalosErrors.of(ErrorCode.OPERATION_FAILED, "credential " + request.getSecretKeyId()
        + " is being changed concurrently; retry");
  }

  private Credential existing(String keyId) throws GalaxyTalosException {
    if (keyId == null || keyId.isEmpty() || keyId.length() > MAX_KEY_ID_CHARS) {
      throw TalosErrors.invalidParams("secretKeyId '" + shown(keyId) + "' is not a key id: 1.." + MAX_KEY_ID_CHARS
          + " characters");
    }
    Optional<Credential> c = metadata.credential(keyId);
    if (c.isEmpty()) throw TalosErrors.invalidParams("no credential has secretKeyId '" + keyId + "'");
    return c.get();
  }

  private static void requireAdmin(String what) throws GalaxyTalosException {
    if (!RequestContext.current().credential().admin()) {
      throw TalosErrors.of(ErrorCode.PERMISSION_DENIED_ERROR, what + " needs an admin credential");
    }
  }

  private static String shown(String s) {
    return s == null ? "" : s.length() > 80 ? s.substring(0, 80) + "..." : s;
  }

  /** The listed, never secret, part of a credential. */
  static CredentialInfo info(Credential c) {
    CredentialInfo info = new CredentialInfo(c.secretKeyId(), c.ownerId(), c.admin());
    if (c.createdMs() != 0) info.setCreatedMs(c.createdMs());
    if (c.rotatedMs() != 0) info.setRotatedMs(c.rotatedMs());
    if (c.previousSecretKey() != null) info.setPreviousSecretExpiresMs(c.previousSecretExpiresMs());
    if (c.revoked()) info.setRevokedMs(c.revokedMs());
    return info;
  }
}
