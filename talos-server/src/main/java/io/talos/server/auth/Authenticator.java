package io.talos.server.auth;

import io.talos.common.auth.BodyTag;
import io.talos.common.auth.GalaxySigner;
import io.talos.server.metadata.Credential;
import io.talos.server.metadata.MetadataStore;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;

/**
 * Verifies the Galaxy HMAC signature the Talos SDK puts on every request (see
 * {@link GalaxySigner} for the exact string to sign).
 *
 * <p>Checks, in order: an {@code Authorization: Galaxy-V2|Galaxy-V3 keyId:signature} header
 * (else 401); an {@code X-Xiaomi-Timestamp} at most {@code maxPastMs} behind and at most
 * {@code maxFutureMs} ahead of the server clock (else 412, and the caller sends the server's
 * timestamp so the SDK can adjust its clock); a known, unrevoked key id and a signature made with
 * one of its valid secrets: the current one, or during a rotation's grace period the previous
 * one (else 401; "revoked" is said only to a request signed with the revoked credential's secret).
 * All of that needs the headers only (the signature covers the body's digest header, not the
 * body), so it is done before the body is read; then the body must match that header (else 401:
 * the body is not the one that was signed). The header is exactly one of
 * {@code X-Xiaomi-Content-Tag} (an AES-GCM tag keyed by the secret, see {@link BodyTag}: what our
 * clients send by default), {@code X-Xiaomi-Content-SHA256} (hex SHA-256) and
 * {@code X-Xiaomi-Content-MD5} (hex MD5, what the SDK 2.0.2 sends).
 *
 * <p>Thread-safe.
 */
public final class Authenticator {
  /**
   * Each thread's buffer for the string to sign, reused by every request it verifies (a request's
   * headers come to a few hundred characters).
   */
  private static final ThreadLocal<StringBuilder> STRING_TO_SIGN = ThreadLocal.withInitial(() -> new StringBuilder(512));
  private static final int STRING_TO_SIGN_KEPT_CHARS = 16 * 1024;

  private final MetadataStore metadata;
  private final Clock clock;
  private final long maxPastMs;
  private final long maxFutureMs;

  /** Accepts timestamps up to {@code maxSkewMs} behind or ahead of the server clock. */
  public Authenticator(MetadataStore metadata, Clock clock, long maxSkewMs) {
    this(metadata, clock, maxSkewMs, maxSkewMs);
  }

  /**
   * @param maxPastMs how long a signed request stays valid (auth.clock.skew.max.ms)
   * @param maxFutureMs how far ahead of the server a client's clock may be (auth.clock.skew.future.max.ms)
   */
  public Authenticator(MetadataStore metadata, Clock clock, long maxPastMs, long maxFutureMs) {
    this.metadata = metadata;
    this.clock = clock;
    this.maxPastMs = maxPastMs;
    this.maxFutureMs = maxFutureMs;
  }

  /** Why a request is refused, with the HTTP status to answer. */
  public static final class AuthenticationException extends Exception {
    private final int httpStatus;
    private final String keyId;

    AuthenticationException(int httpStatus, String message) {
      this(httpStatus, message, null);
    }

    AuthenticationException(int httpStatus, String message, String keyId) {
      super(message);
      this.httpStatus = httpStatus;
      this.keyId = keyId;
    }

    public int httpStatus() {
      return httpStatus;
    }

    /** The key id the refused request claimed, or null if it named none (for the audit log). */
    public String keyId() {
      return keyId;
    }
  }

  /**
   * What the headers alone establish: who claims to sign the request, with which signature, at
   * which time. Checked before the body is read, so an unauthenticated client cannot make the
   * server buffer a large body.
   *
   * @param clientTimestampSecs the request's X-Xiaomi-Timestamp (its clock), epoch seconds
   */
  public record Claim(Credential credential, String signature, long clientTimestampSecs) {}

  /**
   * The headers the checks below read, each name with its values in arrival order: {@code
   * Authorization} and those the signature covers ({@link GalaxySigner#isSigned}: every {@code
   * x-xiaomi-*} header, the body digests among them, {@code content-md5}, {@code content-type},
   * {@code date}). The others (Host, User-Agent, Content-Length, ...) are left out: nothing here
   * reads them, and copying them cost a map entry and a list per header on every request.
   */
  public static Map<String, List<String>> headersOf(HttpFields fields) {
    Map<String, List<String>> headers = new LinkedHashMap<>(16);
    for (HttpField field : fields) {
      String name = field.getName();
      if (!name.equalsIgnoreCase(GalaxySigner.AUTHORIZATION) && !GalaxySigner.isSigned(name)) continue;
      // a name almost always has one value: a list of more is made only for a second one
      List<String> one = Collections.singletonList(field.getValue());
      List<String> before = headers.putIfAbsent(name, one);
      if (before != null) {
        List<String> more = new ArrayList<>(before);
        more.add(field.getValue());
        headers.put(name, more);
      }
    }
    return headers;
  }

  /**
   * Checks the Authorization header, the timestamp and the key id.
   *
   * @param headers all request headers (any name case) with their values
   */
  public Claim checkHeaders(Map<String, List<String>> headers) throws AuthenticationException {
    String authorization = header(headers, GalaxySigner.AUTHORIZATION);
    if (authorization == null) {
      throw new AuthenticationException(401, "missing Authorization header; expected 'Galaxy-V3 <secretKeyId>:<signature>'");
    }
    int space = authorization.indexOf(' ');
    int schemeEnd = space < 0 ? authorization.length() : space;
    if (!isScheme(authorization, schemeEnd, GalaxySigner.SCHEME_V2) && !isScheme(authorization, schemeEnd, GalaxySigner.SCHEME_V3)) {
      throw new AuthenticationException(401, "unsupported Authorization scheme '" + authorization.substring(0, schemeEnd)
          + "'; supported: Galaxy-V2, Galaxy-V3");
    }
    String rest = authorization.substring(space + 1).trim();
    int colon = rest.lastIndexOf(':');
    if (colon <= 0 || colon == rest.length() - 1) {
      throw new AuthenticationException(401, "malformed Authorization header; expected '"
          + authorization.substring(0, schemeEnd) + " <secretKeyId>:<signature>'");
    }
    String keyId = rest.substring(0, colon);
    String signature = rest.substring(colon + 1);

    String timestamp = header(headers, GalaxySigner.TIMESTAMP);
    if (timestamp == null) {
      throw new AuthenticationException(401, "missing " + GalaxySigner.TIMESTAMP + " header (epoch seconds)");
    }
    long requestSecs;
    try {
      requestSecs = Long.parseLong(timestamp.trim());
    } catch (NumberFormatException e) {
      throw new AuthenticationException(401, GalaxySigner.TIMESTAMP + " '" + timestamp + "' is not epoch seconds");
    }
    long nowMs = clock.millis();
    // Bounded first so that the multiplication cannot wrap around into the allowed window.
    boolean huge = Math.abs(requestSecs) > Long.MAX_VALUE / 2000;
    long aheadMs = huge ? (requestSecs > 0 ? Long.MAX_VALUE : Long.MIN_VALUE) : requestSecs * 1000 - nowMs;
    if (aheadMs > maxFutureMs) {
      throw new AuthenticationException(412, "request timestamp " + requestSecs + " is "
          + (huge ? "too far" : aheadMs + " ms") + " ahead of server time; at most " + maxFutureMs
          + " ms ahead is allowed (auth.clock.skew.future.max.ms)");
    }
    if (-aheadMs > maxPastMs || aheadMs == Long.MIN_VALUE) {
      throw new AuthenticationException(412, "request timestamp " + requestSecs + " is "
          + (huge ? "too far" : -aheadMs + " ms") + " behind server time; at most " + maxPastMs
          + " ms behind is allowed (auth.clock.skew.max.ms)");
    }
    Optional<Credential> credential = metadata.credential(keyId);
    // Same answer for unknown key and wrong signature: do not reveal which key ids exist.
    if (credential.isEmpty()) {
      throw new AuthenticationException(401, "invalid signature for secretKeyId '" + keyId + "'", keyId);
    }
    return new Claim(credential.get(), signature, requestSecs);
  }

  private static boolean isScheme(String authorization, int schemeEnd, String scheme) {
    return schemeEnd == scheme.length() && authorization.startsWith(scheme);
  }

  /**
   * Checks that the body is the one signed: the signed {@code X-Xiaomi-Content-Tag} is its tag
   * under one of the credential's valid secrets (our clients), or its SHA-256 equals the signed
   * {@code X-Xiaomi-Content-SHA256} header, or its MD5 the signed {@code X-Xiaomi-Content-MD5}
   * header (the SDK 2.0.2); {@link #verifySignature} has made sure there is exactly one of them.
   *
   * @param credential the credential {@link #verifySignature} returned for these headers
   */
  public void verifyBody(Map<String, List<String>> headers, Credential credential, byte[] body, int bodyLength)
      throws AuthenticationException {
    // One pass over the body with this thread's cipher or digest, compared without building strings.
    String tag = header(headers, BodyTag.HEADER);
    if (tag != null) {
      try {
        // Normally one secret; during a rotation's grace period the new one is tried first, and
        // the signature was made with one of the two, so the tag matches under it.
        for (String secret : credential.validSecrets(clock.millis())) {
          if (BodyTag.matches(secret, tag, body, 0, bodyLength)) return;
        }
      } catch (IllegalArgumentException e) {
        throw new AuthenticationException(401, e.getMessage(), credential.secretKeyId());
      }
      throw new AuthenticationException(401, BodyTag.HEADER + " does not match the request body",
          credential.secretKeyId());
    }
    String sha256 = header(headers, GalaxySigner.CONTENT_SHA256);
    if (sha256 != null) {
      if (!GalaxySigner.sha256HeaderMatches(sha256.trim(), GalaxySigner.contentSha256(body, 0, bodyLength))) {
        throw new AuthenticationException(401, GalaxySigner.CONTENT_SHA256 + " does not match the request body");
      }
      return;
    }
    String md5 = header(headers, GalaxySigner.CONTENT_MD5);
    if (md5 == null) throw missingBodyDigest();
    if (!GalaxySigner.md5HeaderMatches(md5.trim(), GalaxySigner.contentMd5(body, 0, bodyLength))) {
      throw new AuthenticationException(401, GalaxySigner.CONTENT_MD5 + " does not match the request body");
    }
  }

  private static AuthenticationException missingBodyDigest() {
    return new AuthenticationException(401, "missing body digest: send " + BodyTag.HEADER
        + " (AES-GCM tag of the body, see docs/security.md), " + GalaxySigner.CONTENT_SHA256
        + " (hex SHA-256 of the body) or " + GalaxySigner.CONTENT_MD5 + " (hex MD5 of the body)");
  }

  /**
   * Checks the signature, which covers the method, path, sub-resource query parameters and the
   * {@code x-xiaomi-*} headers (the body through its digest header): no body needed. A request
   * without a body digest header, or with more than one, is refused here, before its body is read.
   */
  public Credential verifySignature(Claim claim, String method, String path, String query,
      Map<String, List<String>> headers) throws AuthenticationException {
    int digests = (header(headers, GalaxySigner.CONTENT_MD5) != null ? 1 : 0)
        + (header(headers, GalaxySigner.CONTENT_SHA256) != null ? 1 : 0)
        + (header(headers, BodyTag.HEADER) != null ? 1 : 0);
    if (digests == 0) throw missingBodyDigest();
    if (digests > 1) {
      // One digest is checked; a second, unchecked one would be a signed value nobody verified.
      throw new AuthenticationException(401, "more than one of " + BodyTag.HEADER + ", "
          + GalaxySigner.CONTENT_SHA256 + " and " + GalaxySigner.CONTENT_MD5
          + " sent: send one body digest header");
    }
    String keyId = claim.credential().secretKeyId();
    StringBuilder stringToSign = STRING_TO_SIGN.get();
    try {
      stringToSign.setLength(0);
      try {
        GalaxySigner.appendStringToSign(stringToSign, method, path, query, headers);
      } catch (IllegalArgumentException e) {
        throw new AuthenticationException(401, e.getMessage(), keyId);
      }
      // During a rotation's grace period two secrets are valid (the new one first). A revoked
      // credential has none; it is said to be revoked only to a request signed with its last
      // secret, so that a key id alone does not reveal that the key exists.
      Credential credential = claim.credential();
      if (credential.revoked()) {
        if (GalaxySigner.signatureMatches(credential.secretKey(), stringToSign, claim.signature())) {
          throw new AuthenticationException(401, "the credential of secretKeyId '" + keyId + "' is revoked", keyId);
        }
      } else {
        for (String secret : credential.validSecrets(clock.millis())) {
          if (GalaxySigner.signatureMatches(secret, stringToSign, claim.signature())) return credential;
        }
      }
    } finally {
      // the headers are bounded by Jetty's header size, but a builder grown by one request is not kept
      if (stringToSign.capacity() > STRING_TO_SIGN_KEPT_CHARS) STRING_TO_SIGN.remove();
    }
    throw new AuthenticationException(401, "invalid signature for secretKeyId '" + keyId + "'", keyId);
  }

  private static String header(Map<String, List<String>> headers, String name) {
    for (Map.Entry<String, List<String>> e : headers.entrySet()) {
      if (e.getKey().equalsIgnoreCase(name) && !e.getValue().isEmpty()) return e.getValue().get(0);
    }
    return null;
  }
}
