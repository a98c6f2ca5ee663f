/*
 * CredentialService (a Talos extension, not in SDK 2.0.2): the admin manages the accounts and
 * their signing credentials. Every method needs an admin credential (PERMISSION_DENIED_ERROR
 * otherwise). A secret key travels only in the answer of createCredential and rotateCredential.
 */
include "common.thrift"
namespace java io.talos.thrift

/* A credential as listed: never its secret. Times are epoch ms on the server clock. */
struct CredentialInfo {
  1: required string secretKeyId,
  /* the account requests signed with it act as: topic owner, the identifier a Grantee of type DEVELOPER names */
  2: required string accountId,
  3: required bool admin,
  4: optional i64 createdMs,
  /* when the secret was last rotated; absent if never */
  5: optional i64 rotatedMs,
  /* while set and in the future, the secret before the last rotation is still accepted until then */
  6: optional i64 previousSecretExpiresMs,
  /* set once revoked: the credential authenticates nothing from then on */
  7: optional i64 revokedMs,
}

struct CreateCredentialRequest {
  /* 1..64 characters of A-Z a-z 0-9 . _ - ; "admin" is reserved */
  1: required string accountId,
}

struct CreateCredentialResponse {
  1: required CredentialInfo credential,
  /* shown once: the server never returns it again */
  2: required string secretKey,
}

struct ListCredentialsResponse {
  1: required list<CredentialInfo> credentials,
}

struct RotateCredentialRequest {
  1: required string secretKeyId,
  /* how long the current secret stays valid next to the new one; default auth.credential.rotation.grace.ms */
  2: optional i64 graceMs,
}

struct RotateCredentialResponse {
  1: required CredentialInfo credential,
  /* the new secret, shown once */
  2: required string secretKey,
}

struct RevokeCredentialRequest {
  1: required string secretKeyId,
}

struct RevokeCredentialResponse {
  1: required CredentialInfo credential,
}
