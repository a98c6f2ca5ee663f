package io.talos.server.auth;

import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;

/**
 * New key ids and secret keys, from a {@link SecureRandom}. Key ids start with "TK", not "AK":
 * SDK 2.0.2 treats AK key ids as Galaxy accounts that must name topics CL&lt;org&gt;/&lt;name&gt;.
 * Thread-safe.
 */
public final class Secrets {
  private static final SecureRandom RANDOM = new SecureRandom();

  private Secrets() {}

  /** "TK" and 16 upper-case hex digits (64 random bits). */
  public static String newKeyId() {
    byte[] id = new byte[8];
    RANDOM.nextBytes(id);
    return "TK" + HexFormat.of().formatHex(id).toUpperCase();
  }

  /** 192 random bits, URL-safe base64 without padding (32 characters). */
  public static String newSecret() {
    byte[] secret = new byte[24];
    RANDOM.nextBytes(secret);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(secret);
  }
}
