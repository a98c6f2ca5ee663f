package io.talos.client.internals;

import io.talos.client.BodyDigest;
import io.talos.common.auth.BodyTag;
import io.talos.common.auth.GalaxySigner;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The headers of one signed Talos request, as the SDK 2.0.2 sends them (with
 * {@link BodyDigest#MD5}; with {@link BodyDigest#SHA256} the MD5 line is replaced by
 * {@code X-Xiaomi-Content-SHA256: <lower-case hex SHA-256 of the body>}, with
 * {@link BodyDigest#AES_GCM}, the default, by {@code X-Xiaomi-Content-Tag} as {@link BodyTag}
 * defines):
 *
 * <pre>
 *   Content-Type:         application/x-thrift-compact
 *   Accept:               application/x-thrift-compact
 *   User-Agent:           talos-java-client/&lt;version&gt;
 *   X-Xiaomi-Timestamp:   &lt;epoch seconds&gt;
 *   x-xiaomi-date:        &lt;RFC 822 date in GMT, e.g. Tue, 04 Mar 2025 09:05:01 GMT&gt;
 *   X-Xiaomi-Content-MD5: &lt;lower-case hex MD5 of the body&gt;
 *   Authorization:        Galaxy-V3 &lt;secretKeyId&gt;:&lt;base64 HmacSHA1 signature&gt;
 * </pre>
 *
 * The signature covers the other headers and the URI path as {@link GalaxySigner} defines.
 *
 * <p>Thread-safe. Its state is the {@link BodyTag.Sealer}'s key and nonce counter, the last
 * second's time headers, and a buffer per thread for the string to sign.
 */
public final class RequestSigner {
  public static final String CONTENT_TYPE = "application/x-thrift-compact";

  private static final DateTimeFormatter RFC_822_GMT =
      DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US)
          .withZone(ZoneOffset.UTC);

  /** Each thread's buffer for the string to sign (a few hundred characters), reused. */
  private static final ThreadLocal<StringBuilder> STRING_TO_SIGN =
      ThreadLocal.withInitial(() -> new StringBuilder(512));

  private final String secretKeyId;
  private final String secretKey;
  private final BodyDigest bodyDigest;
  private final BodyTag.Sealer sealer;

  public RequestSigner(String secretKeyId, String secretKey, BodyDigest bodyDigest) {
    this.secretKeyId = secretKeyId;
    this.secretKey = secretKey;
    this.bodyDigest = bodyDigest;
    this.sealer = bodyDigest == BodyDigest.AES_GCM ? new BodyTag.Sealer(secretKey) : null;
  }

  /**
   * @param path the request URI's path, e.g. {@code /v1/api/message}
   * @param query the raw query string without '?'
   * @param nowMs the (skew-corrected) time the request is signed at, epoch ms
   * @return header name to value, in sending order, {@code Authorization} last
   */
  public Map<String, String> headers(String path, String query, byte[] body, long nowMs) {
    return headers(path, query, body, body.length, nowMs);
  }

  /** As {@link #headers(String, String, byte[], long)} for the body {@code body[0, length)}. */
  public Map<String, String> headers(String path, String query, byte[] body, int length, long nowMs) {
    TimeHeaders time = timeHeaders(Math.floorDiv(nowMs, 1000));
    return headers(path, query, body, length, time.epochSeconds, time.date);
  }

  /**
   * The two time headers of one second. Formatting the date cost about a kilobyte of garbage per
   * request; a client sends many requests a second, all with the same two values.
   */
  private record TimeHeaders(long second, String epochSeconds, String date) {}

  /** The last second's time headers; replaced whole, so any thread may read and replace it. */
  private volatile TimeHeaders lastSecond = new TimeHeaders(Long.MIN_VALUE, "", "");

  private TimeHeaders timeHeaders(long second) {
    TimeHeaders t = lastSecond;
    if (t.second != second) {
      t = new TimeHeaders(second, Long.toString(second),
          RFC_822_GMT.format(Instant.ofEpochSecond(second)));
      lastSecond = t;
    }
    return t;
  }

  /** As {@link #headers(String, String, byte[], long)} with given time header values. */
  Map<String, String> headers(String path, String query, byte[] body, String epochSeconds,
      String date) {
    return headers(path, query, body, body.length, epochSeconds, date);
  }

  private Map<String, String> headers(String path, String query, byte[] body, int length,
      String epochSeconds, String date) {
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put("Content-Type", CONTENT_TYPE);
    headers.put("Accept", CONTENT_TYPE);
    headers.put("User-Agent", ClientVersion.userAgent());
    headers.put(GalaxySigner.TIMESTAMP, epochSeconds);
    headers.put(GalaxySigner.DATE, date);
    switch (bodyDigest) {
      case AES_GCM -> headers.put(BodyTag.HEADER, sealer.header(body, 0, length));
      case SHA256 -> headers.put(GalaxySigner.CONTENT_SHA256, GalaxySigner.contentSha256Hex(body, 0, length));
      case MD5 -> headers.put(GalaxySigner.CONTENT_MD5, GalaxySigner.contentMd5Hex(body, 0, length));
    }
    Map<String, List<String>> signed = new LinkedHashMap<>();
    headers.forEach((name, value) -> signed.put(name, List.of(value)));
    StringBuilder stringToSign = STRING_TO_SIGN.get();
    stringToSign.setLength(0);
    String signature = GalaxySigner.sign(secretKey,
        GalaxySigner.appendStringToSign(stringToSign, "POST", path, query, signed));
    headers.put(GalaxySigner.AUTHORIZATION,
        GalaxySigner.SCHEME_V3 + " " + secretKeyId + ":" + signature);
    return headers;
  }
}
