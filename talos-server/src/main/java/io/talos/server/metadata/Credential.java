package io.talos.server.metadata;

/**
 * A signing credential. {@code ownerId} is the identity requests signed with it act as (the
 * owner of topics it creates); {@code admin} credentials may do everything.
 */
public record Credential(String secretKeyId, String secretKey, String ownerId, boolean admin) {
  @Override
  public String toString() {
    return "Credential[" + secretKeyId + ", owner=" + ownerId + ", admin=" + admin + "]";
  }
}
