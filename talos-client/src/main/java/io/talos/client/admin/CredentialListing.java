package io.talos.client.admin;

/**
 * A credential as the server lists it: never its secret. Times are epoch ms on the server's
 * clock, 0 when not set.
 *
 * @param accountId the account requests signed with it act as (topic owner; the identifier a
 *     Grantee of type DEVELOPER names)
 * @param previousSecretExpiresMs until when the secret before the last rotation is still accepted
 * @param revokedMs when it was revoked (0: active)
 */
public record CredentialListing(String secretKeyId, String accountId, boolean admin, long createdMs,
    long rotatedMs, long previousSecretExpiresMs, long revokedMs) {
  public boolean revoked() {
    return revokedMs != 0;
  }
}
