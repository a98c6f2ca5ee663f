package io.talos.server.metadata;

import java.util.List;

/**
 * A signing credential. {@code ownerId} is the account requests signed with it act as (the owner
 * of topics it creates, the identifier a Grantee of type DEVELOPER names); {@code admin}
 * credentials may do everything.
 *
 * <p>Rotation keeps the key id and replaces the secret: for a grace period the secret before the
 * rotation ({@code previousSecretKey}) is accepted too, until {@code previousSecretExpiresMs}
 * (exclusive, server clock), so clients can switch to the new secret one by one. A second
 * rotation drops the older secret at once: at most two secrets are ever valid. A revoked
 * credential ({@code revokedMs > 0}) authenticates nothing; it is kept so its key id is never
 * handed out again and stays listed.
 *
 * <p>Secret keys are stored as they are: the Galaxy HMAC signature needs the secret itself, so
 * it cannot be stored hashed (the stores are readable by the server only). {@link #toString()}
 * never shows them.
 *
 * @param previousSecretKey the secret before the last rotation, or null
 * @param previousSecretExpiresMs until when {@code previousSecretKey} is accepted (0 if none)
 * @param createdMs when the credential was created (0 if unknown: created before this was recorded)
 * @param rotatedMs when the secret was last rotated (0 if never)
 * @param revokedMs when it was revoked (0 if active)
 */
public record Credential(String secretKeyId, String secretKey, String ownerId, boolean admin,
    String previousSecretKey, long previousSecretExpiresMs, long createdMs, long rotatedMs, long revokedMs) {

  /** An active credential that was never rotated, created at an unrecorded time. */
  public Credential(String secretKeyId, String secretKey, String ownerId, boolean admin) {
    this(secretKeyId, secretKey, ownerId, admin, null, 0, 0, 0, 0);
  }

  public boolean revoked() {
    return revokedMs > 0;
  }

  /** The secrets a signature may be made with at {@code nowMs}: none if revoked, the current one first. */
  public List<String> validSecrets(long nowMs) {
    if (revoked()) return List.of();
    if (previousSecretKey != null && nowMs < previousSecretExpiresMs) return List.of(secretKey, previousSecretKey);
    return List.of(secretKey);
  }

  /** This credential with {@code newSecret} as its secret and the current one accepted until {@code graceEndMs}. */
  public Credential rotated(String newSecret, long nowMs, long graceEndMs) {
    return new Credential(secretKeyId, newSecret, ownerId, admin, graceEndMs > nowMs ? secretKey : null,
        graceEndMs > nowMs ? graceEndMs : 0, createdMs, nowMs, 0);
  }

  /** This credential revoked at {@code nowMs}; no secret is accepted any more. */
  public Credential revokedAt(long nowMs) {
    return new Credential(secretKeyId, secretKey, ownerId, admin, null, 0, createdMs, rotatedMs, Math.max(1, nowMs));
  }

  @Override
  public String toString() {
    return "Credential[" + secretKeyId + ", owner=" + ownerId + ", admin=" + admin
        + (revoked() ? ", revoked" : "") + "]";
  }
}
