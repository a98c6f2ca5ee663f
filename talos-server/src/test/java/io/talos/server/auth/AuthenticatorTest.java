package io.talos.server.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.common.auth.BodyTag;
import io.talos.common.auth.GalaxySigner;
import io.talos.server.auth.Authenticator.AuthenticationException;
import io.talos.server.metadata.Credential;
import io.talos.server.metadata.MvStoreMetadataStore;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AuthenticatorTest {
  private static final long NOW_SECS = 1_763_800_000L;
  @TempDir
  Path dir;
  MvStoreMetadataStore store;
  Authenticator authenticator;

  @BeforeEach
  void open() {
    store = MvStoreMetadataStore.open(dir);
    store.putCredentialIfAbsent(new Credential("TKID", "secret", "alice", false));
    authenticator = new Authenticator(store, Clock.fixed(Instant.ofEpochSecond(NOW_SECS), ZoneOffset.UTC), 60_000);
  }

  @AfterEach
  void close() {
    store.close();
  }

  /** Headers as the SDK sends them, the MD5 hex-encoded the SDK's way (leading zeros dropped). */
  private static Map<String, List<String>> headers(byte[] body, long epochSecs) throws Exception {
    Map<String, List<String>> h = new LinkedHashMap<>();
    h.put("Content-Type", List.of("application/x-thrift-compact"));
    h.put("X-Xiaomi-Timestamp", List.of(Long.toString(epochSecs)));
    h.put("x-xiaomi-date", List.of("Sat, 22 Nov 2025 08:26:40 GMT"));
    h.put("X-Xiaomi-Content-MD5", List.of(new BigInteger(1, MessageDigest.getInstance("MD5").digest(body)).toString(16)));
    return h;
  }

  private static void sign(Map<String, List<String>> h, String scheme, String keyId, String secret) {
    h.put("Authorization", List.of(scheme + " " + keyId + ":"
        + GalaxySigner.sign(secret, GalaxySigner.stringToSign("POST", "/v1/api/topic", "id=1&type=x", h))));
  }

  /** A body whose MD5 starts with a zero byte, so the SDK's hex string is shorter than 32. */
  private static byte[] bodyWithShortMd5() throws Exception {
    for (int i = 0; ; i++) {
      byte[] body = ("body" + i).getBytes(StandardCharsets.UTF_8);
      if (MessageDigest.getInstance("MD5").digest(body)[0] == 0) return body;
    }
  }

  @Test
  void acceptsSdkRequestsWithV2AndV3AndShortMd5() throws Exception {
    byte[] body = bodyWithShortMd5();
    for (String scheme : List.of("Galaxy-V2", "Galaxy-V3")) {
      Map<String, List<String>> h = headers(body, NOW_SECS - 30);
      sign(h, scheme, "TKID", "secret");
      assertTrue(h.get("X-Xiaomi-Content-MD5").get(0).length() < 32);
      assertEquals("alice", verify(h, "/v1/api/topic", body).ownerId());
    }
  }

  @Test
  void refusesWithTheRightStatus() throws Exception {
    byte[] body = "b".getBytes(StandardCharsets.UTF_8);
    Map<String, List<String>> wrongSecret = headers(body, NOW_SECS);
    sign(wrongSecret, "Galaxy-V3", "TKID", "nope");
    assertEquals(401, status(wrongSecret, body));
    Map<String, List<String>> unknownKey = headers(body, NOW_SECS);
    sign(unknownKey, "Galaxy-V3", "OTHER", "secret");
    assertEquals(401, status(unknownKey, body));
    Map<String, List<String>> scheme = headers(body, NOW_SECS);
    sign(scheme, "OAuth", "TKID", "secret");
    assertEquals(401, status(scheme, body));
    Map<String, List<String>> skewed = headers(body, NOW_SECS - 61);
    sign(skewed, "Galaxy-V3", "TKID", "secret");
    assertEquals(412, status(skewed, body));
    Map<String, List<String>> tampered = headers(body, NOW_SECS);
    sign(tampered, "Galaxy-V3", "TKID", "secret");
    byte[] other = "c".getBytes(StandardCharsets.UTF_8);
    assertEquals(401, status(tampered, other));
    Map<String, List<String>> wrongPath = headers(body, NOW_SECS);
    sign(wrongPath, "Galaxy-V3", "TKID", "secret");
    assertThrows(AuthenticationException.class,
        () -> verify(wrongPath, "/v1/api/message", body));
  }

  @Test
  void boundsThePastAndTheFutureSeparately() throws Exception {
    Authenticator asymmetric = new Authenticator(store, Clock.fixed(Instant.ofEpochSecond(NOW_SECS), ZoneOffset.UTC),
        900_000, 60_000);
    byte[] body = "b".getBytes(StandardCharsets.UTF_8);
    for (long offsetSecs : List.of(-900L, -30L, 0L, 60L)) {
      Map<String, List<String>> h = headers(body, NOW_SECS + offsetSecs);
      sign(h, "Galaxy-V3", "TKID", "secret");
      assertEquals("alice", asymmetric.verifySignature(asymmetric.checkHeaders(h), "POST", "/v1/api/topic", "id=1&type=x", h).ownerId());
    }
    for (long offsetSecs : List.of(-901L, 61L, 870L)) {
      Map<String, List<String>> h = headers(body, NOW_SECS + offsetSecs);
      sign(h, "Galaxy-V3", "TKID", "secret");
      AuthenticationException e = assertThrows(AuthenticationException.class, () -> asymmetric.checkHeaders(h));
      assertEquals(412, e.httpStatus(), "offset " + offsetSecs);
      assertTrue(e.getMessage().contains(offsetSecs > 0 ? "auth.clock.skew.future.max.ms" : "auth.clock.skew.max.ms"), e.getMessage());
    }
  }

  @Test
  void verifiesTheSignatureFromTheHeadersAloneBeforeTheBody() throws Exception {
    byte[] body = "the body".getBytes(StandardCharsets.UTF_8);
    Map<String, List<String>> h = headers(body, NOW_SECS);
    sign(h, "Galaxy-V3", "TKID", "wrong");
    AuthenticationException e = assertThrows(AuthenticationException.class,
        () -> authenticator.verifySignature(authenticator.checkHeaders(h), "POST", "/v1/api/topic", "id=1&type=x", h));
    assertEquals(401, e.httpStatus());
    Map<String, List<String>> good = headers(body, NOW_SECS);
    sign(good, "Galaxy-V3", "TKID", "secret");
    authenticator.verifySignature(authenticator.checkHeaders(good), "POST", "/v1/api/topic", "id=1&type=x", good);
    assertEquals(401, assertThrows(AuthenticationException.class,
        () -> authenticator.verifyBody(good, credential(), "other".getBytes(StandardCharsets.UTF_8), 5)).httpStatus());
    authenticator.verifyBody(good, credential(), body, body.length);
  }

  /** Our clients' headers: the body's SHA-256 in X-Xiaomi-Content-SHA256 instead of the MD5. */
  private static Map<String, List<String>> sha256Headers(byte[] body, long epochSecs) throws Exception {
    Map<String, List<String>> h = headers(body, epochSecs);
    h.remove("X-Xiaomi-Content-MD5");
    h.put("X-Xiaomi-Content-SHA256",
        List.of(java.util.HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(body))));
    return h;
  }

  @Test
  void acceptsTheSha256DigestInEitherCaseAndChecksTheBodyAgainstIt() throws Exception {
    byte[] body = "the body".getBytes(StandardCharsets.UTF_8);
    Map<String, List<String>> h = sha256Headers(body, NOW_SECS);
    sign(h, "Galaxy-V3", "TKID", "secret");
    assertEquals("alice", verify(h, "/v1/api/topic", body).ownerId());
    Map<String, List<String>> upper = sha256Headers(body, NOW_SECS);
    upper.put("X-Xiaomi-Content-SHA256", List.of(upper.get("X-Xiaomi-Content-SHA256").get(0).toUpperCase(java.util.Locale.ROOT)));
    sign(upper, "Galaxy-V3", "TKID", "secret");
    assertEquals("alice", verify(upper, "/v1/api/topic", body).ownerId());

    AuthenticationException tampered = assertThrows(AuthenticationException.class,
        () -> verify(h, "/v1/api/topic", "the bodY".getBytes(StandardCharsets.UTF_8)));
    assertEquals(401, tampered.httpStatus());
    assertTrue(tampered.getMessage().contains("X-Xiaomi-Content-SHA256 does not match"), tampered.getMessage());

    // Not 64 hex digits: the SDK's MD5 quirk (leading zeros dropped) is not accepted here.
    for (String bad : List.of(h.get("X-Xiaomi-Content-SHA256").get(0).substring(1),
        h.get("X-Xiaomi-Content-SHA256").get(0).substring(1) + "g", "")) {
      Map<String, List<String>> b = sha256Headers(body, NOW_SECS);
      b.put("X-Xiaomi-Content-SHA256", List.of(bad));
      sign(b, "Galaxy-V3", "TKID", "secret");
      assertEquals(401, status(b, body), "'" + bad + "'");
    }
  }

  @Test
  void wantsExactlyOneBodyDigestHeader() throws Exception {
    byte[] body = "b".getBytes(StandardCharsets.UTF_8);
    Map<String, List<String>> both = sha256Headers(body, NOW_SECS);
    both.put("X-Xiaomi-Content-MD5", headers(body, NOW_SECS).get("X-Xiaomi-Content-MD5"));
    sign(both, "Galaxy-V3", "TKID", "secret");
    AuthenticationException e = assertThrows(AuthenticationException.class,
        () -> authenticator.verifySignature(authenticator.checkHeaders(both), "POST", "/v1/api/topic", "id=1&type=x", both));
    assertEquals(401, e.httpStatus());
    assertTrue(e.getMessage().contains("send one body digest header"), e.getMessage());

    Map<String, List<String>> none = headers(body, NOW_SECS);
    none.remove("X-Xiaomi-Content-MD5");
    sign(none, "Galaxy-V3", "TKID", "secret");
    e = assertThrows(AuthenticationException.class,
        () -> authenticator.verifySignature(authenticator.checkHeaders(none), "POST", "/v1/api/topic", "id=1&type=x", none));
    assertEquals(401, e.httpStatus());
    assertTrue(e.getMessage().contains("X-Xiaomi-Content-SHA256") && e.getMessage().contains("X-Xiaomi-Content-MD5"), e.getMessage());
  }

  private int status(Map<String, List<String>> h, byte[] body) {
    return assertThrows(AuthenticationException.class,
        () -> verify(h, "/v1/api/topic", body)).httpStatus();
  }

  /** What the front-end does: headers, then the signature, then (once it has arrived) the body. */
  private Credential verify(Map<String, List<String>> h, String path, byte[] body) throws AuthenticationException {
    Credential credential = authenticator.verifySignature(authenticator.checkHeaders(h), "POST", path, "id=1&type=x", h);
    authenticator.verifyBody(h, credential, body, body.length);
    return credential;
  }

  private Credential credential() {
    return store.credential("TKID").orElseThrow();
  }

  /** Our clients' default headers: an AES-GCM tag of the body keyed by {@code secret}. */
  private static Map<String, List<String>> tagHeaders(byte[] body, String secret) throws Exception {
    Map<String, List<String>> h = headers(body, NOW_SECS);
    h.remove("X-Xiaomi-Content-MD5");
    h.put("X-Xiaomi-Content-Tag", List.of(new BodyTag.Sealer(secret).header(body, 0, body.length)));
    return h;
  }

  @Test
  void acceptsTheAesGcmTagAndChecksTheBodyAgainstIt() throws Exception {
    byte[] body = "the body".getBytes(StandardCharsets.UTF_8);
    Map<String, List<String>> h = tagHeaders(body, "secret");
    sign(h, "Galaxy-V3", "TKID", "secret");
    assertEquals("alice", verify(h, "/v1/api/topic", body).ownerId());
    assertEquals("alice", verify(h, "/v1/api/topic", body).ownerId(), "the same request verified twice");

    AuthenticationException tampered = assertThrows(AuthenticationException.class,
        () -> verify(h, "/v1/api/topic", "the bodY".getBytes(StandardCharsets.UTF_8)));
    assertEquals(401, tampered.httpStatus());
    assertTrue(tampered.getMessage().contains("X-Xiaomi-Content-Tag does not match"), tampered.getMessage());

    // signed correctly, but the tag was made with a key the server does not hold
    Map<String, List<String>> otherKey = tagHeaders(body, "not-the-secret");
    sign(otherKey, "Galaxy-V3", "TKID", "secret");
    assertEquals(401, status(otherKey, body));

    Map<String, List<String>> malformed = tagHeaders(body, "secret");
    malformed.put("X-Xiaomi-Content-Tag", List.of("aes-128-gcm:00"));
    sign(malformed, "Galaxy-V3", "TKID", "secret");
    AuthenticationException e = assertThrows(AuthenticationException.class, () -> verify(malformed, "/v1/api/topic", body));
    assertEquals(401, e.httpStatus());
    assertTrue(e.getMessage().contains("is malformed; expected aes-128-gcm:<salt"), e.getMessage());

    Map<String, List<String>> withSha = tagHeaders(body, "secret");
    withSha.put("X-Xiaomi-Content-SHA256", sha256Headers(body, NOW_SECS).get("X-Xiaomi-Content-SHA256"));
    sign(withSha, "Galaxy-V3", "TKID", "secret");
    e = assertThrows(AuthenticationException.class,
        () -> authenticator.verifySignature(authenticator.checkHeaders(withSha), "POST", "/v1/api/topic", "id=1&type=x", withSha));
    assertTrue(e.getMessage().contains("send one body digest header"), e.getMessage());
  }

  @Test
  void acceptsATagKeyedByThePreviousSecretDuringARotationsGracePeriod() throws Exception {
    long nowMs = NOW_SECS * 1000;
    assertTrue(store.replaceCredential(credential(), credential().rotated("new-secret", nowMs - 1_000, nowMs + 60_000)));
    byte[] body = new byte[3000];
    new java.util.Random(3).nextBytes(body);
    Map<String, List<String>> old = tagHeaders(body, "secret");
    sign(old, "Galaxy-V3", "TKID", "secret");
    verify(old, "/v1/api/topic", body);
    Map<String, List<String>> fresh = tagHeaders(body, "new-secret");
    sign(fresh, "Galaxy-V3", "TKID", "new-secret");
    verify(fresh, "/v1/api/topic", body);

    assertTrue(store.replaceCredential(credential(), credential().rotated("newer-secret", nowMs - 120_000, nowMs - 60_000)));
    Map<String, List<String>> expired = tagHeaders(body, "new-secret");
    sign(expired, "Galaxy-V3", "TKID", "new-secret");
    assertEquals(401, status(expired, body), "the grace period is over");
  }

  /** Only what the checks read is copied out of Jetty's fields; repeated names keep all values in order. */
  @Test
  void headersOfKeepsAuthorizationAndTheSignedHeadersOnly() throws Exception {
    byte[] body = "body".getBytes(StandardCharsets.UTF_8);
    Map<String, List<String>> h = headers(body, NOW_SECS);
    sign(h, "Galaxy-V3", "TKID", "secret");
    org.eclipse.jetty.http.HttpFields.Mutable fields = org.eclipse.jetty.http.HttpFields.build();
    fields.add("Host", "127.0.0.1:8090");
    h.forEach((name, values) -> values.forEach(v -> fields.add(name, v)));
    fields.add("User-Agent", "x");
    fields.add("X-Xiaomi-Extra", "a");
    fields.add("Content-Length", "4");
    fields.add("X-Xiaomi-Extra", "b");
    fields.add("Date", "Sat, 22 Nov 2025 08:26:40 GMT");
    Map<String, List<String>> kept = Authenticator.headersOf(fields);
    assertEquals(List.of("Content-Type", "X-Xiaomi-Timestamp", "x-xiaomi-date", "X-Xiaomi-Content-MD5", "Authorization",
        "X-Xiaomi-Extra", "Date"), List.copyOf(kept.keySet()));
    assertEquals(List.of("a", "b"), kept.get("X-Xiaomi-Extra"));
    // the kept headers verify as the whole set does (the extra x-xiaomi header is signed: sign again with it)
    Map<String, List<String>> all = new LinkedHashMap<>(h);
    all.remove("Authorization");
    all.put("X-Xiaomi-Extra", List.of("a", "b"));
    all.put("Date", List.of("Sat, 22 Nov 2025 08:26:40 GMT"));
    sign(all, "Galaxy-V3", "TKID", "secret");
    org.eclipse.jetty.http.HttpFields.Mutable signed = org.eclipse.jetty.http.HttpFields.build();
    signed.add("Host", "127.0.0.1:8090");
    all.forEach((name, values) -> values.forEach(v -> signed.add(name, v)));
    Map<String, List<String>> fromFields = Authenticator.headersOf(signed);
    Credential credential = authenticator.verifySignature(authenticator.checkHeaders(fromFields), "POST", "/v1/api/topic",
        "id=1&type=x", fromFields);
    authenticator.verifyBody(fromFields, credential, body, body.length);
    assertEquals("alice", credential.ownerId());
  }
}
