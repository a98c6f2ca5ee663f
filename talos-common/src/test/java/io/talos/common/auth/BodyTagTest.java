package io.talos.common.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.List;
import java.util.ArrayList;
import org.junit.jupiter.api.Test;

class BodyTagTest {
  private static final String SECRET = "s3cret";
  private static final byte[] SALT = HexFormat.of().parseHex("000102030405060708090a0b0c0d0e0f");

  /** Known answers computed outside Java (Python: hmac + cryptography's AESGCM), for other clients. */
  @Test
  void shouldMatchTheKnownAnswersOfAnIndependentImplementation() {
    assertEquals("e8835ac4a66980c22379ff39470b5904",
        HexFormat.of().formatHex(BodyTag.deriveKey(SECRET.getBytes(StandardCharsets.UTF_8), SALT).getEncoded()));
    assertEquals("000000000000000000000007", HexFormat.of().formatHex(BodyTag.nonceBytes(7)));
    byte[] small = "some thrift bytes".getBytes(StandardCharsets.UTF_8);
    assertTrue(BodyTag.matches(SECRET, header(1, "6faeba33ca1b978c97737820f577a6de"), small, 0, small.length));
    byte[] large = new byte[40_000]; // crosses the 16 KiB chunks the ciphertext is dropped in
    for (int i = 0; i < large.length; i++) large[i] = (byte) ((i * 7) % 251);
    assertTrue(BodyTag.matches(SECRET, header(7, "cbd0f8665af688c2f0135e1c10b42db1"), large, 0, large.length));
    assertTrue(BodyTag.matches(SECRET, header(2, "85bbac96dbdf7715c24d413d8379eb1b"), new byte[0], 0, 0));
    // upper-case hex is accepted too
    assertTrue(BodyTag.matches(SECRET, header(1, "6faeba33ca1b978c97737820f577a6de").toUpperCase(), small, 0, small.length));
  }

  private static String header(long nonce, String tagHex) {
    return "aes-128-gcm:000102030405060708090a0b0c0d0e0f:" + HexFormat.of().formatHex(BodyTag.nonceBytes(nonce)) + ":" + tagHex;
  }

  @Test
  void shouldAcceptItsOwnTagsAndRefuseAnyChangedBodySecretOrField() {
    BodyTag.Sealer sealer = new BodyTag.Sealer(SECRET);
    byte[] body = new byte[70_000];
    new java.util.Random(5).nextBytes(body);
    String h = sealer.header(body, 100, 60_000);
    assertTrue(h.startsWith("aes-128-gcm:"), h);
    assertTrue(BodyTag.matches(SECRET, h, body, 100, 60_000));
    assertTrue(BodyTag.matches(SECRET, " " + h + " ", body, 100, 60_000), "surrounding blanks are trimmed");
    assertFalse(BodyTag.matches("other", h, body, 100, 60_000), "another secret");
    assertFalse(BodyTag.matches(SECRET, h, body, 101, 60_000), "another slice");
    assertFalse(BodyTag.matches(SECRET, h, body, 100, 59_999), "a truncated body");
    for (int bit : new int[] {0, 7, 8 * 16_384, 8 * 59_999 + 7}) {
      byte[] flipped = body.clone();
      flipped[100 + bit / 8] ^= (byte) (1 << (bit % 8));
      assertFalse(BodyTag.matches(SECRET, h, flipped, 100, 60_000), "bit " + bit + " flipped");
    }
    // every field of the header takes part: change one hex digit of salt, nonce, tag
    String[] parts = h.split(":");
    for (int field = 1; field <= 3; field++) {
      String[] changed = parts.clone();
      char c = changed[field].charAt(0);
      changed[field] = (c == '0' ? '1' : '0') + changed[field].substring(1);
      assertFalse(BodyTag.matches(SECRET, String.join(":", changed), body, 100, 60_000), "field " + field);
    }
  }

  @Test
  void shouldVerifyTheSameHeaderTwiceOnOneThread() {
    // A client's retry of an identical request reaches the verifier with the same key and nonce;
    // the JDK's Cipher refuses that pair twice in a row for encryption, the verifier must not.
    BodyTag.Sealer sealer = new BodyTag.Sealer(SECRET);
    byte[] body = "x".repeat(1000).getBytes(StandardCharsets.UTF_8);
    String h = sealer.header(body, 0, body.length);
    assertTrue(BodyTag.matches(SECRET, h, body, 0, body.length));
    assertTrue(BodyTag.matches(SECRET, h, body, 0, body.length));
    body[3] = 'y';
    assertFalse(BodyTag.matches(SECRET, h, body, 0, body.length));
  }

  @Test
  void shouldRefuseMalformedHeadersSayingWhatIsExpected() {
    byte[] body = new byte[10];
    String good = new BodyTag.Sealer(SECRET).header(body, 0, 10);
    List<String> bad = List.of("", "aes-128-gcm", good.substring(1), good + "0",
        good.replaceFirst("aes-128-gcm", "aes-256-gcm"), good.replace(':', ';'),
        good.substring(0, good.length() - 1) + "g",
        good.substring(0, good.length() - 1) + "\u0663", // a non-ASCII digit (ARABIC-INDIC THREE)
        "x".repeat(100_000));
    for (String h : bad) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> BodyTag.matches(SECRET, h, body, 0, 10), h.length() > 50 ? h.substring(0, 50) : h);
      assertTrue(e.getMessage().contains("X-Xiaomi-Content-Tag")
          && e.getMessage().contains("aes-128-gcm:<salt, 32 hex digits>:<nonce, 24 hex digits>:<tag, 32 hex digits>"),
          e.getMessage());
      assertTrue(e.getMessage().length() < 500, "a huge header is not echoed whole");
    }
  }

  @Test
  void shouldNeverRepeatANonceUnderOneKeyAcrossThreadsAndSaltRotations() throws Exception {
    // 4 nonces per salt: rotation happens every few calls, from several threads at once.
    BodyTag.Sealer sealer = new BodyTag.Sealer(SECRET, new SecureRandom(), 4);
    Set<String> saltAndNonce = ConcurrentHashMap.newKeySet();
    byte[] body = new byte[64];
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        done.add(pool.submit(() -> {
          for (int i = 0; i < 500; i++) {
            String h = sealer.header(body, 0, body.length);
            String[] p = h.split(":");
            assertTrue(saltAndNonce.add(p[1] + ":" + p[2]), "repeated " + h);
            long nonce = Long.parseLong(p[2], 16);
            assertTrue(nonce >= 1 && nonce <= 4, "nonce " + nonce + " beyond the salt's budget");
            assertTrue(BodyTag.matches(SECRET, h, body, 0, body.length));
          }
          return null;
        }));
      }
      for (Future<?> f : done) f.get(60, TimeUnit.SECONDS);
    } finally {
      pool.shutdownNow();
    }
    assertEquals(2000, saltAndNonce.size());
    Set<String> salts = new HashSet<>();
    for (String s : saltAndNonce) salts.add(s.substring(0, s.indexOf(':')));
    assertTrue(salts.size() >= 500, "salts rotated: " + salts.size());
  }

  @Test
  void shouldDrawADifferentSaltPerSealer() {
    byte[] body = new byte[8];
    String a = new BodyTag.Sealer(SECRET).header(body, 0, 8);
    String b = new BodyTag.Sealer(SECRET).header(body, 0, 8);
    assertNotEquals(a.split(":")[1], b.split(":")[1]);
    assertNotEquals(a.split(":")[3], b.split(":")[3]);
  }
}
