package io.talos.bench.auth;

import io.talos.client.BodyDigest;
import io.talos.client.internals.RequestSigner;
import io.talos.server.auth.Authenticator;
import io.talos.server.metadata.CachingMetadataStore;
import io.talos.server.metadata.Credential;
import io.talos.server.metadata.MvStoreMetadataStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.http.HttpFields;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What authenticating one API request costs the server, and signing it the client, for a put of
 * one 1 KiB message ({@code bodyBytes}).
 *
 * <p>{@code authenticate}: what the server does with a request's headers and body before it
 * decodes the body: the header map from Jetty's fields, the Authorization and timestamp checks
 * and the credential lookup (a cached metadata store, as the server has), the Galaxy signature,
 * then the body against its digest header ({@code digest}: AES_GCM is what our clients send, MD5
 * what the Talos SDK 2.0.2 sends). The headers are those a request carries on the wire, the
 * signed ones and the others (Host, Content-Length, Connection, Accept-Encoding).
 * {@code sign}: the client's side, the headers of one signed request.
 *
 * <p>Run with {@code -prof gc}: the bytes allocated per request are what the young collections
 * of a server at a steady rate have to clear.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(1)
@State(Scope.Thread)
public class RequestAuthBenchmark {
  private static final String PATH = "/v1/api/message";
  private static final String QUERY = "id=3f2c1a9e-5b7d-4e21-9c3a-1d2e3f4a5b6c&type=putMessage";
  private static final String KEY_ID = "bench-key";
  private static final String SECRET = "bench-secret-0123456789abcdef";
  private static final int REQUESTS = 1024;

  @Param({"AES_GCM", "MD5"})
  public BodyDigest digest;

  @Param({"1100"})
  public int bodyBytes;

  private Path dir;
  private MvStoreMetadataStore store;
  private Authenticator authenticator;
  private RequestSigner signer;
  private byte[] body;
  /**
   * Requests signed in turn, verified in turn: each AES-GCM tag has its own nonce, as a client's
   * requests do (the JDK's Cipher refuses to encrypt twice in a row under one key and nonce, and
   * the verifier would take its fallback for that on every call).
   */
  private HttpFields[] requests;
  private int next;
  private long nowMs;

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    dir = Files.createTempDirectory("auth-bench");
    store = MvStoreMetadataStore.open(dir);
    store.putCredentialIfAbsent(new Credential(KEY_ID, SECRET, "bench", false));
    nowMs = 1_764_300_000_000L;
    Clock clock = Clock.fixed(Instant.ofEpochMilli(nowMs), ZoneOffset.UTC);
    authenticator = new Authenticator(new CachingMetadataStore(store, 10_000, 60_000,
        () -> TimeUnit.MILLISECONDS.toNanos(clock.millis())), clock, 900_000);
    signer = new RequestSigner(KEY_ID, SECRET, digest);
    body = new byte[bodyBytes];
    new Random(1).nextBytes(body);
    requests = new HttpFields[REQUESTS];
    for (int i = 0; i < REQUESTS; i++) {
      HttpFields.Mutable f = HttpFields.build();
      f.add("Host", "127.0.0.1:8090");
      f.add("Content-Length", Integer.toString(bodyBytes));
      signer.headers(PATH, QUERY, body, nowMs).forEach(f::add);
      f.add("Connection", "keep-alive");
      f.add("Accept-Encoding", "gzip");
      requests[i] = f.asImmutable();
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    store.close();
    try (var files = Files.walk(dir)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  @Benchmark
  public Credential authenticate() throws Exception {
    HttpFields fields = requests[next];
    next = (next + 1) % REQUESTS;
    Map<String, List<String>> headers = Authenticator.headersOf(fields);
    Authenticator.Claim claim = authenticator.checkHeaders(headers);
    Credential credential = authenticator.verifySignature(claim, "POST", PATH, QUERY, headers);
    authenticator.verifyBody(headers, credential, body, body.length);
    return credential;
  }

  @Benchmark
  public Map<String, String> sign() {
    return signer.headers(PATH, QUERY, body, nowMs);
  }
}
