package io.talos.common.auth;

import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The Galaxy request signature, byte-exact with what the Talos SDK 2.0.2 sends (its
 * {@code TalosHttpClient.setAuthenticationHeaders} and galaxy-client-java's {@code Signer}).
 *
 * <p>The string to sign is:
 * <pre>
 *   METHOD "\n"
 *   value of header content-md5 (the SDK sends none: empty) "\n"
 *   value of header content-type "\n"
 *   date line "\n"          -- see below
 *   for each header whose lower-cased name starts with "x-xiaomi-", sorted by name:
 *       name ":" values joined by "," "\n"
 *   URI path, then "?" and the sorted sub-resource query parameters if any
 * </pre>
 * The date line is the query parameter {@code Expires} when present; otherwise it is empty when
 * an {@code x-xiaomi-date} header is present (the SDK's quirk: that date is covered by the
 * x-xiaomi header lines instead), else the {@code date} header. The signature is
 * base64(HmacSHA1(secretKey, stringToSign)), sent as
 * {@code Authorization: Galaxy-V2|Galaxy-V3 <secretKeyId>:<signature>}.
 *
 * <p>Thread-safe; stateless.
 */
public final class GalaxySigner {
  public static final String AUTHORIZATION = "Authorization";
  public static final String TIMESTAMP = "X-Xiaomi-Timestamp";
  public static final String DATE = "x-xiaomi-date";
  public static final String CONTENT_MD5 = "X-Xiaomi-Content-MD5";
  public static final String SCHEME_V2 = "Galaxy-V2";
  public static final String SCHEME_V3 = "Galaxy-V3";

  /** Query parameters that take part in the canonical resource (galaxy-client-java's SubResource). */
  private static final Set<String> SUB_RESOURCES =
      Set.of("acl", "quota", "uploads", "partNumber", "uploadId", "storageAccessToken", "metadata");

  private GalaxySigner() {}

  /**
   * @throws IllegalArgumentException if the query's {@code Expires} parameter is not a number
   * @param headers request headers, names in any case, each with its values in arrival order
   * @param path the URI path, e.g. {@code /v1/api/message}
   * @param query the raw query string without '?', or null
   */
  public static String stringToSign(String method, String path, String query,
      Map<String, List<String>> headers) {
    Map<String, List<String>> lower = new TreeMap<>();
    for (Map.Entry<String, List<String>> e : headers.entrySet()) {
      lower.computeIfAbsent(e.getKey().toLowerCase(Locale.ROOT), k -> new java.util.ArrayList<>())
          .addAll(e.getValue());
    }
    Map<String, String> params = parseQuery(query);
    StringBuilder sb = new StringBuilder();
    sb.append(method).append('\n');
    sb.append(first(lower, "content-md5")).append('\n');
    sb.append(first(lower, "content-type")).append('\n');
    String expires = params.get("Expires");
    if (expires != null && !expires.isEmpty() && parseExpires(expires) > 0) {
      sb.append(expires).append('\n');
    } else {
      sb.append(first(lower, DATE).isEmpty() ? first(lower, "date") : "").append('\n');
    }
    for (Map.Entry<String, List<String>> e : lower.entrySet()) {
      if (e.getKey().startsWith("x-xiaomi-")) {
        sb.append(e.getKey()).append(':').append(String.join(",", e.getValue())).append('\n');
      }
    }
    sb.append(path);
    TreeMap<String, String> sub = new TreeMap<>();
    params.forEach((k, v) -> {
      if (SUB_RESOURCES.contains(k)) sub.put(k, v);
    });
    boolean firstParam = true;
    for (Map.Entry<String, String> e : sub.entrySet()) {
      sb.append(firstParam ? '?' : '&').append(e.getKey());
      firstParam = false;
      if (!e.getValue().isEmpty()) sb.append('=').append(e.getValue());
    }
    return sb.toString();
  }

  /** base64(HmacSHA1(secretKey, stringToSign)). */
  public static String sign(String secretKey, String stringToSign) {
    try {
      javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA1");
      mac.init(new javax.crypto.spec.SecretKeySpec(
          secretKey.getBytes(StandardCharsets.UTF_8), "HmacSHA1"));
      return Base64.getEncoder().encodeToString(
          mac.doFinal(stringToSign.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException | InvalidKeyException e) {
      throw new IllegalStateException("HmacSHA1 unavailable", e);
    }
  }

  /** Lower-case hex MD5 of the body, as the SDK sends in {@value #CONTENT_MD5}. */
  public static String contentMd5Hex(byte[] body, int off, int len) {
    try {
      MessageDigest md = MessageDigest.getInstance("MD5");
      md.update(body, off, len);
      return java.util.HexFormat.of().formatHex(md.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("MD5 unavailable", e);
    }
  }

  /** Compares two signatures in time independent of where they differ. */
  public static boolean signaturesEqual(String a, String b) {
    return MessageDigest.isEqual(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));
  }

  /** @throws IllegalArgumentException if the Expires parameter is not a number */
  private static long parseExpires(String expires) {
    try {
      return Long.parseLong(expires);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("query parameter Expires=" + expires + " is not a number");
    }
  }

  private static String first(Map<String, List<String>> headers, String name) {
    List<String> v = headers.get(name);
    return v == null || v.isEmpty() || v.get(0) == null ? "" : v.get(0);
  }

  private static Map<String, String> parseQuery(String query) {
    Map<String, String> params = new TreeMap<>();
    if (query == null || query.isEmpty()) return params;
    for (String param : query.split("&")) {
      int eq = param.indexOf('=');
      if (eq < 0) params.putIfAbsent(param, "");
      else params.putIfAbsent(param.substring(0, eq), param.substring(eq + 1));
    }
    return params;
  }
}
