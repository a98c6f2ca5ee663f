package io.talos.client.internals;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.common.collect.LinkedListMultimap;
import com.xiaomi.infra.galaxy.client.authentication.HttpMethod;
import com.xiaomi.infra.galaxy.client.authentication.HttpUtils;
import com.xiaomi.infra.galaxy.client.authentication.signature.SignAlgorithm;
import com.xiaomi.infra.galaxy.client.authentication.signature.Signer;
import com.xiaomi.infra.galaxy.rpc.thrift.Credential;
import com.xiaomi.infra.galaxy.rpc.thrift.UserType;
import com.xiaomi.infra.galaxy.rpc.util.BytesUtil;
import com.xiaomi.infra.galaxy.rpc.util.DigestUtil;
import com.xiaomi.infra.galaxy.talos.admin.TalosAdmin;
import com.xiaomi.infra.galaxy.talos.client.TalosClientConfig;
import io.talos.client.FakeTalosServer;
import io.talos.client.BodyDigest;
import io.talos.common.auth.GalaxySigner;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class RequestSignerTest {
  private static final byte[] BODY = "some thrift bytes".getBytes(StandardCharsets.UTF_8);
  private static final String PATH = "/v1/api/message";
  private static final String QUERY = "id=0a1b2c3d&type=putMessage";
  private static final long NOW_MS = 1_741_079_101_234L; // Tue, 04 Mar 2025 09:05:01.234 GMT

  /** Signs as the SDK 2.0.2 does (MD5 body digest): the tests below compare with the SDK. */
  private final RequestSigner signer = new RequestSigner("key-id", "s3cret", BodyDigest.MD5);

  @Test
  void shouldSendTheSdkHeaderSet() {
    Map<String, String> headers = signer.headers(PATH, QUERY, BODY, NOW_MS);
    assertEquals(List.of("Content-Type", "Accept", "User-Agent", "X-Xiaomi-Timestamp",
        "x-xiaomi-date", "X-Xiaomi-Content-MD5", "Authorization"), List.copyOf(headers.keySet()));
    assertEquals("application/x-thrift-compact", headers.get("Content-Type"));
    assertEquals("1741079101", headers.get("X-Xiaomi-Timestamp"));
    assertEquals("Tue, 04 Mar 2025 09:05:01 GMT", headers.get("x-xiaomi-date"));
    assertTrue(headers.get("Authorization").startsWith("Galaxy-V3 key-id:"));
    assertTrue(headers.get("User-Agent").startsWith("talos-java-client/"));
    assertTrue(!headers.get("User-Agent").endsWith("/unknown"), "build did not record the version");
  }

  @Test
  void shouldSendTheSha256OfTheBodyInsteadOfTheMd5WhenAsked() throws Exception {
    RequestSigner sha256 = new RequestSigner("key-id", "s3cret", BodyDigest.SHA256);
    Map<String, String> headers = sha256.headers(PATH, QUERY, BODY, NOW_MS);
    assertEquals(List.of("Content-Type", "Accept", "User-Agent", "X-Xiaomi-Timestamp",
        "x-xiaomi-date", "X-Xiaomi-Content-SHA256", "Authorization"), List.copyOf(headers.keySet()));
    assertEquals(java.util.HexFormat.of().formatHex(
        java.security.MessageDigest.getInstance("SHA-256").digest(BODY)),
        headers.get("X-Xiaomi-Content-SHA256"));
    // the digest header is signed like every x-xiaomi-* header: the server's signer agrees
    Map<String, List<String>> received = new LinkedHashMap<>();
    headers.forEach((k, v) -> {
      if (!k.equals("Authorization")) received.put(k, List.of(v));
    });
    assertTrue(GalaxySigner.stringToSign("POST", PATH, QUERY, received)
        .contains("x-xiaomi-content-sha256:" + headers.get("X-Xiaomi-Content-SHA256") + "\n"));
    assertEquals("Galaxy-V3 key-id:" + GalaxySigner.sign("s3cret",
        GalaxySigner.stringToSign("POST", PATH, QUERY, received)), headers.get("Authorization"));
  }

  @Test
  void shouldSendAnAesGcmTagOfTheBodyByDefaultAndSignIt() {
    RequestSigner tagged = new RequestSigner("key-id", "s3cret", BodyDigest.AES_GCM);
    Map<String, String> headers = tagged.headers(PATH, QUERY, BODY, NOW_MS);
    assertEquals(List.of("Content-Type", "Accept", "User-Agent", "X-Xiaomi-Timestamp",
        "x-xiaomi-date", "X-Xiaomi-Content-Tag", "Authorization"), List.copyOf(headers.keySet()));
    String tag = headers.get("X-Xiaomi-Content-Tag");
    assertTrue(io.talos.common.auth.BodyTag.matches("s3cret", tag, BODY, 0, BODY.length), tag);
    assertTrue(!io.talos.common.auth.BodyTag.matches("other", tag, BODY, 0, BODY.length));
    Map<String, List<String>> received = new LinkedHashMap<>();
    headers.forEach((k, v) -> {
      if (!k.equals("Authorization")) received.put(k, List.of(v));
    });
    assertTrue(GalaxySigner.stringToSign("POST", PATH, QUERY, received)
        .contains("x-xiaomi-content-tag:" + tag + "\n"));
    assertEquals("Galaxy-V3 key-id:" + GalaxySigner.sign("s3cret",
        GalaxySigner.stringToSign("POST", PATH, QUERY, received)), headers.get("Authorization"));
    // every request takes a new nonce, so the same body gets a different tag
    assertTrue(!tag.equals(tagged.headers(PATH, QUERY, BODY, NOW_MS).get("X-Xiaomi-Content-Tag")));
  }

  /** The time headers are kept for the second they were made in: they must follow the clock. */
  @Test
  void shouldTakeTheTimeHeadersOfEachRequestsOwnSecond() {
    long[] times = {NOW_MS, NOW_MS + 765, NOW_MS + 766, NOW_MS + 1, NOW_MS - 1_235, NOW_MS + 86_400_000L, NOW_MS};
    for (long t : times) {
      Map<String, String> headers = signer.headers(PATH, QUERY, BODY, t);
      assertEquals(Long.toString(Math.floorDiv(t, 1000)), headers.get("X-Xiaomi-Timestamp"), "at " + t);
      assertEquals(HttpUtils.getGMTDatetime(new Date(t)), headers.get("x-xiaomi-date"), "at " + t);
      // and the signature covers this request's values, as the server checks it
      Map<String, List<String>> signed = new LinkedHashMap<>();
      headers.forEach((k, v) -> signed.put(k, List.of(v)));
      String expected = GalaxySigner.sign("s3cret", GalaxySigner.stringToSign("POST", PATH, QUERY, signed));
      assertEquals("Galaxy-V3 key-id:" + expected, headers.get("Authorization"), "at " + t);
    }
  }

  @Test
  void shouldFormatDateAndDigestLikeTheSdk() {
    Map<String, String> headers = signer.headers(PATH, QUERY, BODY, NOW_MS);
    assertEquals(HttpUtils.getGMTDatetime(new Date(NOW_MS)), headers.get("x-xiaomi-date"));
    assertEquals(BytesUtil.bytesToHex(DigestUtil.digest(DigestUtil.DigestAlgorithm.MD5, BODY)),
        headers.get("X-Xiaomi-Content-MD5"));
  }

  @Test
  void shouldSignAsGalaxyClientJavasSignerDoes() throws Exception {
    Map<String, String> headers = signer.headers(PATH, QUERY, BODY, NOW_MS);
    LinkedListMultimap<String, String> sdkHeaders = LinkedListMultimap.create();
    sdkHeaders.put("host", "127.0.0.1"); // the SDK signs over its Host header too
    headers.forEach((k, v) -> {
      if (!k.equals("Authorization")) sdkHeaders.put(k.toLowerCase(Locale.ROOT), v);
    });
    byte[] sdkSignature = Signer.sign(HttpMethod.POST,
        URI.create("http://127.0.0.1:8080" + PATH + "?" + QUERY), sdkHeaders, "s3cret",
        SignAlgorithm.HmacSHA1);
    assertEquals("Galaxy-V3 key-id:" + Base64.getEncoder().encodeToString(sdkSignature),
        headers.get("Authorization"));
  }

  @Test
  void shouldVerifyWithTheServersSigner() {
    Map<String, String> headers = signer.headers(PATH, QUERY, BODY, NOW_MS);
    Map<String, List<String>> received = new LinkedHashMap<>();
    headers.forEach((k, v) -> {
      // what a server sees: header names in whatever case the HTTP stack gives
      if (!k.equals("Authorization")) received.put(k.toUpperCase(Locale.ROOT), List.of(v));
    });
    String expected = GalaxySigner.sign("s3cret",
        GalaxySigner.stringToSign("POST", PATH, QUERY, received));
    assertEquals("Galaxy-V3 key-id:" + expected, headers.get("Authorization"));
  }

  /**
   * Runs the real SDK against the fake server, then signs the very same request (same body,
   * query and time headers) with ours: the Authorization headers must be identical.
   */
  @Test
  void shouldProduceTheSdksAuthorizationForTheSameRequest() throws Exception {
    try (FakeTalosServer server = new FakeTalosServer()) {
      Properties p = new Properties();
      p.setProperty("galaxy.talos.service.endpoint", server.endpoint());
      Credential credential = new Credential().setType(UserType.APP_SECRET)
          .setSecretKeyId(FakeTalosServer.KEY_ID).setSecretKey(FakeTalosServer.SECRET);
      new TalosAdmin(new TalosClientConfig(p), credential).listTopic();

      FakeTalosServer.Received sdk = server.requests().get(0);
      Map<String, String> ours = new RequestSigner(FakeTalosServer.KEY_ID, FakeTalosServer.SECRET, BodyDigest.MD5)
          .headers(sdk.path(), sdk.query(), sdk.body(), sdk.header("X-Xiaomi-Timestamp"),
              sdk.header("x-xiaomi-date"));
      assertEquals(sdk.header("Authorization"), ours.get("Authorization"));
      assertEquals(sdk.header("X-Xiaomi-Content-MD5"), ours.get("X-Xiaomi-Content-MD5"));
      assertEquals(sdk.header("Content-Type"), ours.get("Content-Type"));
    }
  }
}
