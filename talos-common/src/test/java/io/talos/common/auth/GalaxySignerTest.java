package io.talos.common.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.common.collect.LinkedListMultimap;
import com.xiaomi.infra.galaxy.client.authentication.HttpMethod;
import com.xiaomi.infra.galaxy.client.authentication.signature.SignAlgorithm;
import com.xiaomi.infra.galaxy.client.authentication.signature.Signer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Our signer against galaxy-client-java's Signer, which the Talos SDK 2.0.2 signs with. */
class GalaxySignerTest {
  private static final String SECRET = "s3cr3t-Key/+=";

  private static Map<String, List<String>> sdkLikeHeaders(byte[] body) {
    Map<String, List<String>> h = new LinkedHashMap<>();
    h.put("Content-Type", List.of("application/x-thrift-compact"));
    h.put("Accept", List.of("application/x-thrift-compact"));
    h.put("User-Agent", List.of("Java-SDK/2.0.2 Java/17"));
    h.put("Host", List.of("127.0.0.1"));
    h.put("X-Xiaomi-Timestamp", List.of("1763800000"));
    h.put("x-xiaomi-date", List.of("Sat, 22 Nov 2025 08:26:40 GMT"));
    h.put("X-Xiaomi-Content-MD5", List.of(GalaxySigner.contentMd5Hex(body, 0, body.length)));
    return h;
  }

  private static String reference(String uri, Map<String, List<String>> headers) throws Exception {
    LinkedListMultimap<String, String> lower = LinkedListMultimap.create();
    headers.forEach((k, vs) -> vs.forEach(v -> lower.put(k.toLowerCase(), v)));
    return Signer.signToBase64(HttpMethod.POST, new URI(uri), lower, SECRET, SignAlgorithm.HmacSHA1);
  }

  @Test
  void matchesTheSdkSignerForAnSdkRequest() throws Exception {
    byte[] body = "some thrift bytes".getBytes(StandardCharsets.UTF_8);
    Map<String, List<String>> headers = sdkLikeHeaders(body);
    String ours = GalaxySigner.sign(SECRET,
        GalaxySigner.stringToSign("POST", "/v1/api/message", "id=1a2b3c4d&type=putMessage", headers));
    assertEquals(reference("/v1/api/message?id=1a2b3c4d&type=putMessage", headers), ours);
  }

  @Test
  void matchesTheSdkSignerWithSubResourcesExpiresAndPlainDate() throws Exception {
    byte[] body = new byte[0];
    Map<String, List<String>> headers = sdkLikeHeaders(body);
    headers.remove("x-xiaomi-date");
    headers.put("Date", List.of("Sat, 22 Nov 2025 08:26:40 GMT"));
    headers.put("X-Xiaomi-Meta-Extra", List.of("b", "a"));
    String query = "type=x&quota=1&acl&id=zz";
    String ours = GalaxySigner.sign(SECRET, GalaxySigner.stringToSign("POST", "/v1/api/topic", query, headers));
    assertEquals(reference("/v1/api/topic?" + query, headers), ours);

    String withExpires = "Expires=1763800999&acl";
    assertEquals(reference("/v1/api/topic?" + withExpires, headers),
        GalaxySigner.sign(SECRET, GalaxySigner.stringToSign("POST", "/v1/api/topic", withExpires, headers)));

    // a repeated sub-resource (the SDK signs its last value), an empty parameter, a value with
    // '=', a parameter whose name only starts like a sub-resource, one without a value, a
    // repeated Expires (its first value), an Expires with a leading zero (signed as the number)
    for (String odd : new String[] {"uploadId=c&uploadId=d", "uploadId=a=b&&uploadId=c&aclx=1&partNumber=&metadata",
        "Expires=1763800999&Expires=1763801999&acl", "Expires=01763800999&quota"}) {
      assertEquals(reference("/v1/api/topic?" + odd, headers),
          GalaxySigner.sign(SECRET, GalaxySigner.stringToSign("POST", "/v1/api/topic", odd, headers)), odd);
    }
  }

  @Test
  void anyChangeToASignedPartChangesTheSignature() {
    byte[] body = "x".getBytes(StandardCharsets.UTF_8);
    Map<String, List<String>> headers = sdkLikeHeaders(body);
    String base = GalaxySigner.sign(SECRET, GalaxySigner.stringToSign("POST", "/v1/api/message", null, headers));
    Map<String, List<String>> other = new LinkedHashMap<>(headers);
    other.put("X-Xiaomi-Timestamp", List.of("1763800001"));
    assertFalse(base.equals(GalaxySigner.sign(SECRET, GalaxySigner.stringToSign("POST", "/v1/api/message", null, other))));
    assertFalse(base.equals(GalaxySigner.sign(SECRET, GalaxySigner.stringToSign("POST", "/v1/api/topic", null, headers))));
    assertFalse(base.equals(GalaxySigner.sign("other", GalaxySigner.stringToSign("POST", "/v1/api/message", null, headers))));
    assertTrue(GalaxySigner.signatureMatches(SECRET, GalaxySigner.stringToSign("POST", "/v1/api/message", null, headers), base));
  }

  /** The verifying path (a reused Mac, bytes fed from a buffer) agrees with the JDK's own HmacSHA1 of the string. */
  @Test
  void signatureMatchesAgreesWithAPlainHmacOfTheUtf8Bytes() throws Exception {
    StringBuilder longAscii = new StringBuilder();
    for (int i = 0; i < 300; i++) longAscii.append("x-xiaomi-").append(i).append('\n'); // beyond the 512-byte buffer
    String[] strings = {"", "POST\n\n\n\n/v1/api/message", longAscii.toString(),
        "POST\nx-xiaomi-name:Zo\u00eb \u4e2d\u6587 \ud83d\ude00\n/p", longAscii + "\u00e9" + longAscii,
        "lone \ud800 surrogate"};
    for (String secret : new String[] {SECRET, "other", SECRET}) { // the thread's Mac changes key and back
      for (String s : strings) {
        javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA1");
        mac.init(new javax.crypto.spec.SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA1"));
        String expected = java.util.Base64.getEncoder().encodeToString(mac.doFinal(s.getBytes(StandardCharsets.UTF_8)));
        assertEquals(expected, GalaxySigner.sign(secret, s));
        assertTrue(GalaxySigner.signatureMatches(secret, new StringBuilder(s), expected));
        char[] wrong = expected.toCharArray();
        wrong[wrong.length / 2] ^= 1;
        assertFalse(GalaxySigner.signatureMatches(secret, s, new String(wrong)));
        assertFalse(GalaxySigner.signatureMatches(secret, s, expected + "="), "longer");
        assertFalse(GalaxySigner.signatureMatches(secret, s, expected.substring(1)), "shorter");
        assertFalse(GalaxySigner.signatureMatches(secret + "!", s, expected), "another secret");
      }
    }
  }

  /** A name sent in several spellings is one line, its values in arrival order, sorted by the lower-cased name. */
  @Test
  void spellingsOfOneHeaderAreOneLine() throws Exception {
    Map<String, List<String>> headers = new LinkedHashMap<>();
    headers.put("X-Xiaomi-B", List.of("2"));
    headers.put("x-xiaomi-a", List.of("a1", "a2"));
    headers.put("X-XIAOMI-A", List.of("a3"));
    headers.put("x-xiaomi-ab", List.of());
    headers.put("X-Xiaomi-a", List.of("a4"));
    headers.put("content-type", List.of());
    headers.put("Content-Type", List.of("t1"));
    headers.put("CONTENT-TYPE", List.of("t2"));
    assertEquals("POST\n\nt1\n\nx-xiaomi-a:a1,a2,a3,a4\nx-xiaomi-ab:\nx-xiaomi-b:2\n/p",
        GalaxySigner.stringToSign("POST", "/p", null, headers));
    headers.remove("x-xiaomi-ab"); // a name without values (HTTP cannot send one) is not in the SDK's multimap
    assertEquals(reference("/p", headers), GalaxySigner.sign(SECRET, GalaxySigner.stringToSign("POST", "/p", null, headers)));
  }

  /** The SDK drops the digest's leading zeros (BigInteger.toString(16)); any case is accepted. */
  @Test
  void theStringCoversExactlyTheSignedHeadersInAnyCase() {
    Map<String, List<String>> headers = new LinkedHashMap<>();
    headers.put("Content-Type", List.of("application/x-thrift-compact"));
    headers.put("X-Xiaomi-Timestamp", List.of("1700000000"));
    headers.put("x-XIAOMI-extra", List.of("a", "b"));
    headers.put("CONTENT-MD5", List.of("00ff"));
    String base = GalaxySigner.stringToSign("POST", "/v1/api/message", null, headers);
    assertEquals("POST\n00ff\napplication/x-thrift-compact\n\nx-xiaomi-extra:a,b\nx-xiaomi-timestamp:1700000000\n"
        + "/v1/api/message", base);
    Map<String, List<String>> more = new LinkedHashMap<>(headers);
    more.put("User-Agent", List.of("anything"));
    more.put("Host", List.of("example:8080"));
    more.put("X-Xiaomi", List.of("no dash after the prefix"));
    assertEquals(base, GalaxySigner.stringToSign("POST", "/v1/api/message", null, more), "unsigned headers are not in it");
  }

  @Test
  void md5HeaderIsComparedAsAHexNumber() {
    byte[] md5 = new byte[16];
    md5[15] = (byte) 0xab;
    md5[1] = 0x01;
    String full = java.util.HexFormat.of().formatHex(md5); // "0001...00ab"
    assertTrue(GalaxySigner.md5HeaderMatches(full, md5));
    assertTrue(GalaxySigner.md5HeaderMatches(full.substring(3), md5)); // leading zeros dropped
    assertTrue(GalaxySigner.md5HeaderMatches(full.toUpperCase(), md5));
    assertTrue(GalaxySigner.md5HeaderMatches("00" + full, md5)); // extra zeros in front
    assertFalse(GalaxySigner.md5HeaderMatches(full.substring(4), md5)); // a significant digit lost
    assertFalse(GalaxySigner.md5HeaderMatches(full.substring(0, 31) + "c", md5));
    assertFalse(GalaxySigner.md5HeaderMatches("1" + full, md5));
    assertFalse(GalaxySigner.md5HeaderMatches(full.substring(0, 31) + "g", md5));
    assertFalse(GalaxySigner.md5HeaderMatches("", md5));
    byte[] body = "hello".getBytes(StandardCharsets.UTF_8);
    assertEquals(GalaxySigner.contentMd5Hex(body, 0, body.length),
        java.util.HexFormat.of().formatHex(GalaxySigner.contentMd5(body, 0, body.length)));
    assertEquals("5d41402abc4b2a76b9719d911017c592", GalaxySigner.contentMd5Hex(body, 0, body.length));
  }

  @Test
  void sha256HeaderMustBeExactly64HexDigitsOfTheBodysDigest() throws Exception {
    byte[] body = "hello".getBytes(StandardCharsets.UTF_8);
    byte[] sha = java.security.MessageDigest.getInstance("SHA-256").digest(body);
    String full = java.util.HexFormat.of().formatHex(sha);
    assertEquals("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", full);
    assertEquals(full, GalaxySigner.contentSha256Hex(body, 0, body.length));
    assertTrue(GalaxySigner.sha256HeaderMatches(full, sha));
    assertTrue(GalaxySigner.sha256HeaderMatches(full.toUpperCase(), sha));
    assertFalse(GalaxySigner.sha256HeaderMatches(full.substring(1), sha));
    assertFalse(GalaxySigner.sha256HeaderMatches("0" + full, sha));
    assertFalse(GalaxySigner.sha256HeaderMatches(full.substring(0, 63) + "5", sha));
    assertFalse(GalaxySigner.sha256HeaderMatches(full.substring(0, 63) + "g", sha));
    assertFalse(GalaxySigner.sha256HeaderMatches("", sha));
    // a slice of a larger array digests only the slice
    byte[] padded = "xxhelloyy".getBytes(StandardCharsets.UTF_8);
    assertEquals(full, GalaxySigner.contentSha256Hex(padded, 2, 5));
  }

  /** Names are lower-cased as toLowerCase(Locale.ROOT) does, also outside ASCII (HTTP never sends such names). */
  @Test
  void namesOutsideAsciiAreLowerCasedAsTheJdkDoes() {
    Map<String, List<String>> headers = new LinkedHashMap<>();
    headers.put("Host", null); // an unsigned header is not looked at
    headers.put("X-X\u0130AOMI-A", List.of("dotted I")); // lower-cases to x-xi\u0307aomi-a: not x-xiaomi-
    headers.put("x-x\u0131aomi-date", List.of("dotless i")); // neither an x-xiaomi line nor x-xiaomi-date
    headers.put("date", List.of("D"));
    headers.put("x-xiaomi-\u017f", List.of("long s")); // its own line, after x-xiaomi-s
    headers.put("x-xiaomi-s", List.of("s"));
    headers.put("X-XIAOMI-\u00c4", List.of("upper"));
    headers.put("x-xiaomi-\u00e4", List.of("lower"));
    assertEquals("POST\n\n\nD\nx-xiaomi-s:s\nx-xiaomi-\u00e4:upper,lower\nx-xiaomi-\u017f:long s\n/p",
        GalaxySigner.stringToSign("POST", "/p", null, headers));
  }

  /** Whatever stops a signature half-way (an Error too) does not leave bytes behind for the next one. */
  @Test
  void aSignatureStoppedHalfWayLeavesNothingForTheNext() {
    String expected = GalaxySigner.sign(SECRET, "abc");
    CharSequence failing = new CharSequence() {
      @Override
      public int length() {
        return 700;
      }

      @Override
      public char charAt(int index) {
        if (index == 650) throw new StackOverflowError("simulated");
        return 'x';
      }

      @Override
      public CharSequence subSequence(int start, int end) {
        throw new UnsupportedOperationException();
      }
    };
    org.junit.jupiter.api.Assertions.assertThrows(StackOverflowError.class, () -> GalaxySigner.sign(SECRET, failing));
    assertEquals(expected, GalaxySigner.sign(SECRET, "abc"));
    assertTrue(GalaxySigner.signatureMatches(SECRET, "abc", expected));
  }
}
