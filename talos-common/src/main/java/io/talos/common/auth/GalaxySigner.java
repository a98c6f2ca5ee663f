package io.talos.common.auth;

import io.talos.common.QueryParts;
import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.List;
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
 * <p>Thread-safe: each thread keeps its own Mac and digests (see {@link HmacState}).
 */
public final class GalaxySigner {
  public static final String AUTHORIZATION = "Authorization";
  public static final String TIMESTAMP = "X-Xiaomi-Timestamp";
  public static final String DATE = "x-xiaomi-date";
  public static final String CONTENT_MD5 = "X-Xiaomi-Content-MD5";
  /**
   * Talos's own body digest header: the lower-case hex SHA-256 of the body (64 digits). Like
   * every {@code x-xiaomi-*} header it is covered by the signature. Our clients send it instead
   * of {@value #CONTENT_MD5}: SHA-256 is the stronger hash and, with the SHA instructions of
   * current x86 and ARM CPUs (used by the JDK's intrinsic), over twice as fast as MD5.
   */
  public static final String CONTENT_SHA256 = "X-Xiaomi-Content-SHA256";
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
    return appendStringToSign(new StringBuilder(256), method, path, query, headers).toString();
  }

  /**
   * Appends the string to sign to {@code sb} (see {@link #stringToSign}) and returns it. Copies
   * no header name or value: a server verifying every request builds it into a buffer it reuses.
   * ASCII header names (every HTTP header name) are lower-cased and compared a character at a
   * time; others are lower-cased as {@code toLowerCase(Locale.ROOT)} does.
   *
   * @throws IllegalArgumentException if the query's {@code Expires} parameter is not a number
   */
  public static StringBuilder appendStringToSign(StringBuilder sb, String method, String path, String query,
      Map<String, List<String>> headers) {
    Map<String, String> params = signedParams(query);
    sb.append(method).append('\n');
    sb.append(first(headers, "content-md5")).append('\n');
    sb.append(first(headers, "content-type")).append('\n');
    String expires = params.get("Expires");
    long expiresAt = expires != null && !expires.isEmpty() ? parseExpires(expires) : 0;
    if (expiresAt > 0) {
      sb.append(expiresAt).append('\n'); // the number, as the SDK appends it ("0123" signs as 123)
    } else {
      String xiaomiDate = first(headers, DATE);
      sb.append(xiaomiDate.isEmpty() ? first(headers, "date") : "").append('\n');
    }
    appendXiaomiHeaders(sb, headers);
    sb.append(path);
    boolean firstParam = true;
    for (Map.Entry<String, String> e : params.entrySet()) { // sorted by name
      if (!SUB_RESOURCES.contains(e.getKey())) continue;
      sb.append(firstParam ? '?' : '&').append(e.getKey());
      firstParam = false;
      if (!e.getValue().isEmpty()) sb.append('=').append(e.getValue());
    }
    return sb;
  }

  /**
   * The {@code x-xiaomi-*} lines: sorted by lower-cased name, a name sent in several spellings
   * ({@code X-Xiaomi-A} and {@code x-xiaomi-a}) as one line with all values in arrival order. A
   * name is lower-cased as {@code toLowerCase(Locale.ROOT)} does; an ASCII name (every HTTP header
   * name) is compared and written a character at a time instead of copied.
   */
  @SuppressWarnings("unchecked")
  private static void appendXiaomiHeaders(StringBuilder sb, Map<String, List<String>> headers) {
    String[] names = null;
    List<String>[] values = null;
    int n = 0;
    for (Map.Entry<String, List<String>> e : headers.entrySet()) {
      if (!isXiaomi(e.getKey())) continue;
      if (names == null) {
        names = new String[headers.size()];
        values = new List[headers.size()];
      }
      String name = e.getKey();
      names[n] = isAscii(name) ? name : name.toLowerCase(java.util.Locale.ROOT);
      values[n++] = e.getValue();
    }
    // insertion sort: a handful of lines; stable, so the spellings of one name keep arrival order
    for (int i = 1; i < n; i++) {
      String name = names[i];
      List<String> v = values[i];
      int j = i;
      for (; j > 0 && compareLowerCase(names[j - 1], name) > 0; j--) {
        names[j] = names[j - 1];
        values[j] = values[j - 1];
      }
      names[j] = name;
      values[j] = v;
    }
    for (int i = 0; i < n; ) {
      String name = names[i];
      for (int c = 0; c < name.length(); c++) sb.append(Character.toLowerCase(name.charAt(c)));
      sb.append(':');
      boolean firstValue = true;
      for (; i < n && compareLowerCase(names[i], name) == 0; i++) {
        if (values[i] == null) continue;
        for (String v : values[i]) {
          if (!firstValue) sb.append(',');
          sb.append(v);
          firstValue = false;
        }
      }
      sb.append('\n');
    }
  }

  private static boolean isXiaomi(String name) {
    return startsWithLowerCase(name, "x-xiaomi-");
  }

  private static boolean isAscii(String s) {
    for (int i = 0; i < s.length(); i++) {
      if (s.charAt(i) >= 0x80) return false;
    }
    return true;
  }

  /**
   * Whether {@code name.toLowerCase(Locale.ROOT)} starts with {@code lower} (ASCII, lower case,
   * no 'k'), without the copy: a character outside ASCII never lower-cases to one of these (only
   * the Kelvin sign becomes ASCII 'k'; 'İ' becomes 'i' followed by a combining dot, which no
   * prefix here continues with).
   */
  private static boolean startsWithLowerCase(String name, String lower) {
    if (name.length() < lower.length()) return false;
    for (int i = 0; i < lower.length(); i++) {
      char c = name.charAt(i);
      if (c >= 0x80 || Character.toLowerCase(c) != lower.charAt(i)) return false;
    }
    return true;
  }

  /** Whether {@code name.toLowerCase(Locale.ROOT)} equals {@code lower} (as for {@link #startsWithLowerCase}). */
  private static boolean equalsLowerCase(String name, String lower) {
    return name.length() == lower.length() && startsWithLowerCase(name, lower);
  }

  /**
   * As {@code a.toLowerCase().compareTo(b.toLowerCase())} for names that are ASCII or already
   * lower-cased, without the copies.
   */
  private static int compareLowerCase(String a, String b) {
    int n = Math.min(a.length(), b.length());
    for (int i = 0; i < n; i++) {
      char x = Character.toLowerCase(a.charAt(i));
      char y = Character.toLowerCase(b.charAt(i));
      if (x != y) return x - y;
    }
    return a.length() - b.length();
  }

  /**
   * Whether a request header (its name in any case) takes part in the string to sign: every
   * {@code x-xiaomi-*} header, {@code content-md5}, {@code content-type} and {@code date}.
   */
  public static boolean isSigned(String name) {
    return isXiaomi(name) || equalsLowerCase(name, "content-md5")
        || equalsLowerCase(name, "content-type") || equalsLowerCase(name, "date");
  }

  /**
   * One HmacSHA1 per thread, with the key it was last initialized with and its buffers: {@code
   * Mac.getInstance} looks the algorithm up in the security providers on every call, which costs
   * more than hashing a small request, and a server verifies thousands a second under one or a few
   * secrets. Used by its own thread only; the Mac is left reset after every use.
   */
  private static final class HmacState {
    final javax.crypto.Mac mac;
    /** The secret the Mac holds; null when it holds none or a failure may have left it dirty. */
    String key;
    final byte[] ascii = new byte[512];
    final byte[] digest = new byte[20];
    final byte[] base64 = new byte[28];

    HmacState() {
      try {
        mac = javax.crypto.Mac.getInstance("HmacSHA1");
      } catch (NoSuchAlgorithmException e) {
        throw new IllegalStateException("HmacSHA1 unavailable", e);
      }
    }
  }

  private static final ThreadLocal<HmacState> HMAC_SHA1 = ThreadLocal.withInitial(HmacState::new);
  /** One SHA-256 and one MD5 digest per thread, for the same reason. */
  private static final ThreadLocal<MessageDigest> SHA256 = ThreadLocal.withInitial(() -> {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 unavailable", e);
    }
  });
  private static final ThreadLocal<MessageDigest> MD5 = ThreadLocal.withInitial(() -> {
    try {
      return MessageDigest.getInstance("MD5");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("MD5 unavailable", e);
    }
  });

  /** base64(HmacSHA1(secretKey, stringToSign)). */
  public static String sign(String secretKey, CharSequence stringToSign) {
    return Base64.getEncoder().encodeToString(hmacSha1(HMAC_SHA1.get(), secretKey, stringToSign));
  }

  /**
   * Whether {@code signature} is base64(HmacSHA1(secretKey, stringToSign)), compared in time
   * independent of where they differ. Allocates nothing once this thread holds the key.
   */
  public static boolean signatureMatches(String secretKey, CharSequence stringToSign, String signature) {
    HmacState h = HMAC_SHA1.get();
    int n = Base64.getEncoder().encode(hmacSha1(h, secretKey, stringToSign), h.base64);
    if (signature.length() != n) return false;
    int diff = 0;
    for (int i = 0; i < n; i++) diff |= h.base64[i] ^ signature.charAt(i);
    return diff == 0;
  }

  /**
   * HmacSHA1 of the UTF-8 bytes of {@code s} under {@code secretKey}, into {@code h.digest}. ASCII
   * (all the SDK's requests) is fed through the state's buffer; from the first other character
   * on, the rest is encoded by the JDK (split at an ASCII character, the bytes are the same).
   */
  private static byte[] hmacSha1(HmacState h, String secretKey, CharSequence s) {
    javax.crypto.Mac mac = h.mac;
    boolean done = false;
    try {
      if (!secretKey.equals(h.key)) {
        h.key = null;
        mac.init(new javax.crypto.spec.SecretKeySpec(secretKey.getBytes(StandardCharsets.UTF_8), "HmacSHA1"));
        h.key = secretKey;
      }
      byte[] buf = h.ascii;
      int n = 0;
      for (int i = 0, len = s.length(); i < len; i++) {
        char c = s.charAt(i);
        if (c >= 0x80) {
          mac.update(buf, 0, n);
          n = 0;
          mac.update(s.subSequence(i, len).toString().getBytes(StandardCharsets.UTF_8));
          break;
        }
        buf[n++] = (byte) c;
        if (n == buf.length) {
          mac.update(buf, 0, n);
          n = 0;
        }
      }
      mac.update(buf, 0, n);
      mac.doFinal(h.digest, 0);
      done = true;
      return h.digest;
    } catch (InvalidKeyException e) {
      throw new IllegalStateException("HmacSHA1 refused the key", e);
    } catch (javax.crypto.ShortBufferException e) {
      throw new IllegalStateException("HmacSHA1 failed", e);
    } finally {
      // whatever stopped it half-way (an Error too) may have left bytes in the Mac: the next use
      // initializes (and so resets) it again
      if (!done) h.key = null;
    }
  }

  /** Lower-case hex MD5 of the body, as the SDK sends in {@value #CONTENT_MD5}. */
  public static String contentMd5Hex(byte[] body, int off, int len) {
    return java.util.HexFormat.of().formatHex(contentMd5(body, off, len));
  }

  /** The 16-byte MD5 of {@code body[off, off + len)}, with this thread's digest (no lookup). */
  public static byte[] contentMd5(byte[] body, int off, int len) {
    MessageDigest md = MD5.get();
    md.update(body, off, len);
    return md.digest(); // digest() also resets it for the next use
  }

  /** Lower-case hex SHA-256 of the body, as our clients send in {@value #CONTENT_SHA256}. */
  public static String contentSha256Hex(byte[] body, int off, int len) {
    return java.util.HexFormat.of().formatHex(contentSha256(body, off, len));
  }

  /** The 32-byte SHA-256 of {@code body[off, off + len)}, with this thread's digest (no lookup). */
  public static byte[] contentSha256(byte[] body, int off, int len) {
    MessageDigest md = SHA256.get();
    md.update(body, off, len);
    return md.digest();
  }

  /**
   * Whether a {@value #CONTENT_SHA256} header value names {@code sha256}: exactly 64 hex digits,
   * either case (no leading-zero quirk: only our clients send it). Allocates nothing.
   */
  public static boolean sha256HeaderMatches(String header, byte[] sha256) {
    if (header.length() != 2 * sha256.length) return false;
    int diff = 0;
    for (int i = 0; i < sha256.length; i++) {
      int hi = hexValue(header.charAt(2 * i));
      int lo = hexValue(header.charAt(2 * i + 1));
      if (hi < 0 || lo < 0) return false;
      diff |= ((hi << 4) | lo) ^ (sha256[i] & 0xff);
    }
    return diff == 0;
  }

  /**
   * Whether a {@value #CONTENT_MD5} header value names {@code md5}. The SDK 2.0.2 hex-encodes the
   * digest as a number ({@code BigInteger.toString(16)}), dropping leading zeros, so shorter
   * values are read as numbers; any case. Allocates nothing.
   */
  public static boolean md5HeaderMatches(String header, byte[] md5) {
    int start = 0;
    while (header.length() - start > 2 * md5.length && header.charAt(start) == '0') start++;
    int len = header.length() - start;
    if (len == 0 || len > 2 * md5.length) return false;
    int diff = 0;
    // Compare nibble by nibble from the least significant end; missing leading digits are 0.
    for (int nibble = 0; nibble < 2 * md5.length; nibble++) {
      int expected = (md5[md5.length - 1 - nibble / 2] >> ((nibble & 1) * 4)) & 0xf;
      int got = 0;
      int at = len - 1 - nibble;
      if (at >= 0) {
        got = hexValue(header.charAt(start + at));
        if (got < 0) return false;
      }
      diff |= expected ^ got;
    }
    return diff == 0;
  }

  /** 0-15 for an ASCII hex digit of either case, else -1. */
  static int hexValue(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  /** @throws IllegalArgumentException if the Expires parameter is not a number */
  private static long parseExpires(String expires) {
    try {
      return Long.parseLong(expires);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("query parameter Expires=" + expires + " is not a number");
    }
  }

  /**
   * The first value of header {@code name} (lower case) in arrival order over all its spellings,
   * or "" when there is none or it is null.
   */
  private static String first(Map<String, List<String>> headers, String name) {
    for (Map.Entry<String, List<String>> e : headers.entrySet()) {
      if (!equalsLowerCase(e.getKey(), name) || e.getValue() == null || e.getValue().isEmpty()) continue;
      String v = e.getValue().get(0);
      return v == null ? "" : v;
    }
    return "";
  }

  /**
   * The query parameters the string to sign uses ({@code Expires} and the sub-resources), sorted
   * by name (a repeated one as the SDK's signer takes it: a sub-resource's last value, {@code
   * Expires}'s first); the others (the SDK's {@code id} and {@code type}, on every
   * request) are skipped before any copy of them is made.
   */
  private static Map<String, String> signedParams(String query) {
    Map<String, String> params = null;
    for (QueryParts p = new QueryParts(query); p.next(); ) {
      String name = signedName(p);
      if (name == null) continue;
      if (params == null) params = new TreeMap<>();
      // as the SDK's signer: a repeated sub-resource signs its last value, Expires its first
      if (name.equals("Expires")) params.putIfAbsent(name, p.value());
      else params.put(name, p.value());
    }
    return params == null ? Map.of() : params;
  }

  private static final String[] SIGNED_PARAMS = java.util.stream.Stream.concat(
      java.util.stream.Stream.of("Expires"), SUB_RESOURCES.stream()).toArray(String[]::new);

  /** The name of the current part if the string to sign uses it, else null. */
  private static String signedName(QueryParts part) {
    for (String name : SIGNED_PARAMS) {
      if (part.nameIs(name)) return name;
    }
    return null;
  }
}
