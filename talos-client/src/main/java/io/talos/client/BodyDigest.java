package io.talos.client;

/**
 * The digest of a request body that a client sends in a signed header, so that the signature
 * (which covers headers, not the body) also covers the body.
 */
public enum BodyDigest {
  /** {@code X-Xiaomi-Content-SHA256}: hex SHA-256; Talos servers from this version on. */
  SHA256("SHA-256"),
  /** {@code X-Xiaomi-Content-MD5}: hex MD5, as the Talos SDK 2.0.2 sends; every server. */
  MD5("MD5");

  private final String configName;

  BodyDigest(String configName) {
    this.configName = configName;
  }

  /** The value of the {@code bodyDigest} client setting that selects this digest. */
  public String configName() {
    return configName;
  }

  /** @throws IllegalArgumentException for a name other than {@code SHA-256} or {@code MD5} */
  public static BodyDigest fromConfigName(String name) {
    for (BodyDigest d : values()) {
      if (d.configName.equals(name)) return d;
    }
    throw new IllegalArgumentException("unknown body digest '" + name + "': SHA-256 or MD5");
  }
}
