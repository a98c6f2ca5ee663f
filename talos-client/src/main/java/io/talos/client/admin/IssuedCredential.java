package io.talos.client.admin;

/**
 * A credential with its new secret, as answered once by a create or a rotation: the server
 * never shows the secret again. {@link #toString()} leaves the secret out.
 */
public record IssuedCredential(CredentialListing credential, String secretKey) {
  @Override
  public String toString() {
    return "IssuedCredential[" + credential + "]";
  }
}
