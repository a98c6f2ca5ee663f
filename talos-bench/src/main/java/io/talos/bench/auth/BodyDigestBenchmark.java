package io.talos.bench.auth;

import io.talos.common.auth.BodyTag;
import io.talos.common.auth.GalaxySigner;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The server's check that a request body matches its signed {@code X-Xiaomi-Content-MD5} header
 * (the signature covers the header, not the body, so the MD5 must be computed). {@code check}:
 * this thread's digest and a comparison without strings, as the server does now. Baseline {@code
 * checkHexStrings}: a digest looked up per request, hex-encoded, leading zeros stripped from both
 * strings and compared (what it did before). {@code md5Only}: the digest alone, the floor.
 * {@code checkSha256}: the same check of the {@code X-Xiaomi-Content-SHA256} header (the JDK's
 * SHA-256 intrinsic uses the CPU's SHA instructions). {@code checkTag}: the check of the
 * {@code X-Xiaomi-Content-Tag} our clients send by default (the key the thread derived for the
 * client's salt, then AES-GCM over the body), cycling through successive requests' headers;
 * {@code sealTag}: what the client does to make that header.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
@Fork(1)
@State(Scope.Thread)
public class BodyDigestBenchmark {
  @Param({"200", "1200", "131072"})
  public int bodyBytes;

  private byte[] body;
  private String header;
  private String sha256Header;
  private MessageDigest digest;
  /** Headers of successive requests (new nonces): a verifier never sees the same one twice in a row. */
  private String[] tagHeaders;
  private int nextTag;
  private BodyTag.Sealer sealer;

  @Setup
  public void setUp() throws NoSuchAlgorithmException {
    body = new byte[bodyBytes];
    ThreadLocalRandom.current().nextBytes(body);
    header = GalaxySigner.contentMd5Hex(body, 0, body.length);
    sha256Header = GalaxySigner.contentSha256Hex(body, 0, body.length);
    digest = MessageDigest.getInstance("MD5");
    sealer = new BodyTag.Sealer("bench-secret");
    tagHeaders = new String[64];
    for (int i = 0; i < tagHeaders.length; i++) tagHeaders[i] = sealer.header(body, 0, body.length);
  }

  @Benchmark
  public boolean checkTag() {
    nextTag = (nextTag + 1) & (tagHeaders.length - 1);
    return BodyTag.matches("bench-secret", tagHeaders[nextTag], body, 0, body.length);
  }

  @Benchmark
  public String sealTag() {
    return sealer.header(body, 0, body.length);
  }

  @Benchmark
  public boolean check() {
    return GalaxySigner.md5HeaderMatches(header, GalaxySigner.contentMd5(body, 0, body.length));
  }

  @Benchmark
  public boolean checkSha256() {
    return GalaxySigner.sha256HeaderMatches(sha256Header, GalaxySigner.contentSha256(body, 0, body.length));
  }

  @Benchmark
  public boolean checkHexStrings() throws NoSuchAlgorithmException {
    MessageDigest md = MessageDigest.getInstance("MD5");
    md.update(body, 0, body.length);
    String ours = HexFormat.of().formatHex(md.digest());
    return stripLeadingZeros(header).equalsIgnoreCase(stripLeadingZeros(ours));
  }

  @Benchmark
  public byte[] md5Only() {
    digest.update(body, 0, body.length);
    return digest.digest();
  }

  private static String stripLeadingZeros(String hex) {
    int i = 0;
    while (i < hex.length() - 1 && hex.charAt(i) == '0') i++;
    return hex.substring(i);
  }
}
