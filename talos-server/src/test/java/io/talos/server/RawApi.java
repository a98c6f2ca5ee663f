package io.talos.server;

import io.talos.common.auth.GalaxySigner;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import io.talos.thrift.CreateTopicRequest;
import io.talos.thrift.GetMessageRequest;
import io.talos.thrift.MessageBlock;
import io.talos.thrift.MessageCompressionType;
import io.talos.thrift.MessageService;
import io.talos.thrift.PutMessageRequest;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicAttribute;
import io.talos.thrift.TopicService;
import io.talos.thrift.TopicTalosResourceName;
import java.nio.ByteBuffer;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.io.entity.ByteArrayEntity;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.http.message.BasicClassicHttpRequest;
import org.apache.hc.core5.util.TimeValue;
import org.apache.hc.core5.util.Timeout;
import org.apache.thrift.TApplicationException;
import org.apache.thrift.TBase;
import org.apache.thrift.TException;
import org.apache.thrift.protocol.TCompactProtocol;
import org.apache.thrift.protocol.TMessage;
import org.apache.thrift.protocol.TMessageType;
import org.apache.thrift.transport.TMemoryBuffer;
import org.apache.thrift.transport.TMemoryInputTransport;

/**
 * A deliberately low-level client for tests that must send what no real client would: any
 * bytes, any method and path, signatures that are wrong on purpose, skewed clocks.
 */
final class RawApi {
  private final URI endpoint;
  private final String keyId;
  private final String secret;
  /** Longest wait for an answer: a request still unanswered then is a hang. */
  static final java.time.Duration TIMEOUT = java.time.Duration.ofSeconds(60);
  /**
   * Apache's classic client, not the JDK's: on JDK 17 the JDK client can lose an answer on a
   * pooled connection (its pool's idle watcher reads the response and closes the connection,
   * OpenJDK bug JDK-8357639, fixed in JDK 25), which made tests that send many calls fail now and
   * then. No retries, no redirects, no added headers: what a test sends is what goes out.
   */
  private final CloseableHttpClient http = HttpClients.custom()
      .setConnectionManager(PoolingHttpClientConnectionManagerBuilder.create()
          .setMaxConnPerRoute(64).setMaxConnTotal(64)
          .setDefaultConnectionConfig(ConnectionConfig.custom()
              .setValidateAfterInactivity(TimeValue.ofSeconds(1)).build())
          .build())
      .setDefaultRequestConfig(RequestConfig.custom()
          .setResponseTimeout(Timeout.of(TIMEOUT)).setExpectContinueEnabled(false).build())
      .disableAutomaticRetries()
      .disableRedirectHandling()
      .disableCookieManagement()
      .disableContentCompression()
      .disableDefaultUserAgent()
      .build();

  RawApi(URI endpoint, String keyId, String secret) {
    this.endpoint = endpoint;
    this.keyId = keyId;
    this.secret = secret;
  }

  /** Encodes a call message of {@code method} with the given generated {@code *_args} struct. */
  @SuppressWarnings("rawtypes")
  static byte[] call(String method, TBase args) throws TException {
    TMemoryBuffer buffer = new TMemoryBuffer(256);
    TCompactProtocol out = new TCompactProtocol(buffer);
    out.writeMessageBegin(new TMessage(method, TMessageType.CALL, 1));
    args.write(out);
    out.writeMessageEnd();
    return java.util.Arrays.copyOf(buffer.getArray(), buffer.length());
  }

  /** Decodes a reply into the given generated {@code *_result} struct. */
  @SuppressWarnings("rawtypes")
  static <R extends TBase> R reply(byte[] body, R result) throws TException {
    TCompactProtocol in = new TCompactProtocol(new TMemoryInputTransport(body));
    TMessage m = in.readMessageBegin();
    if (m.type == TMessageType.EXCEPTION) throw TApplicationException.readFrom(in);
    result.read(in);
    return result;
  }

  HttpResponse<byte[]> post(String path, String method, byte[] body) throws IOException, InterruptedException {
    return send("POST", path, method, body, Instant.now().getEpochSecond(), secret, null, "talos-java-client/test");
  }

  /**
   * @param signedBody the body the signature is computed over (null: the body sent)
   */
  HttpResponse<byte[]> send(String httpMethod, String path, String method, byte[] body, long epochSecs,
      String signingSecret, byte[] signedBody, String userAgent) throws IOException, InterruptedException {
    String query = "id=abcd1234" + (method == null ? "" : "&type=" + method);
    byte[] signed = signedBody == null ? body : signedBody;
    Map<String, List<String>> headers = new LinkedHashMap<>();
    headers.put("Content-Type", List.of("application/x-thrift-compact"));
    headers.put(GalaxySigner.TIMESTAMP, List.of(Long.toString(epochSecs)));
    // The date header is informational; a timestamp beyond what a date can print gets today's.
    long dateSecs = Math.abs(epochSecs) < 200_000_000_000L ? epochSecs : Instant.now().getEpochSecond();
    headers.put(GalaxySigner.DATE, List.of(DateTimeFormatter.RFC_1123_DATE_TIME.format(
        Instant.ofEpochSecond(dateSecs).atOffset(ZoneOffset.UTC))));
    headers.put(GalaxySigner.CONTENT_MD5, List.of(GalaxySigner.contentMd5Hex(signed, 0, signed.length)));
    URI uri = endpoint.resolve(path + "?" + query);
    ClassicHttpRequest request = new BasicClassicHttpRequest(httpMethod, uri);
    request.setEntity(new ByteArrayEntity(body, null));
    if (userAgent != null) request.addHeader("User-Agent", userAgent);
    headers.forEach((k, v) -> request.addHeader(k, v.get(0)));
    if (signingSecret != null) {
      String signature = GalaxySigner.sign(signingSecret, GalaxySigner.stringToSign(httpMethod, path, query, headers));
      request.addHeader(GalaxySigner.AUTHORIZATION, GalaxySigner.SCHEME_V3 + " " + keyId + ":" + signature);
    }
    return http.execute(request, response -> {
      Map<String, List<String>> received = new java.util.TreeMap<>(String.CASE_INSENSITIVE_ORDER);
      for (Header h : response.getHeaders()) {
        received.computeIfAbsent(h.getName(), k -> new java.util.ArrayList<>()).add(h.getValue());
      }
      byte[] answer = response.getEntity() == null ? new byte[0] : EntityUtils.toByteArray(response.getEntity());
      return new Answer(uri, response.getCode(), HttpHeaders.of(received, (k, v) -> true), answer);
    });
  }

  /** A received answer, in the JDK's shape so that tests read it as any other HTTP response. */
  private record Answer(URI uri, int statusCode, HttpHeaders headers, byte[] body)
      implements HttpResponse<byte[]> {
    @Override public HttpRequest request() {
      return HttpRequest.newBuilder(uri).build();
    }

    @Override public java.util.Optional<HttpResponse<byte[]>> previousResponse() {
      return java.util.Optional.empty();
    }

    @Override public java.util.Optional<javax.net.ssl.SSLSession> sslSession() {
      return java.util.Optional.empty();
    }

    @Override public HttpClient.Version version() {
      return HttpClient.Version.HTTP_1_1;
    }
  }

  static String text(HttpResponse<byte[]> response) {
    return new String(response.body(), StandardCharsets.UTF_8);
  }

  /** An uncompressed block payload of V2-framed messages (the SDK 2.0.2 format). */
  static byte[] noneBlock(byte[]... messages) {
    try {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      DataOutputStream out = new DataOutputStream(bytes);
      for (byte[] m : messages) {
        out.write(new byte[] {'V', 0, 2, 0});
        out.writeLong(1_700_000_000_000L);
        out.writeShort(1);
        out.writeShort(0);
        out.writeInt(m.length);
        out.write(m);
      }
      return bytes.toByteArray();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  // ---- typed helpers for tests that need data in and out -----------------------------------

  <R extends TBase<?, ?>> R call(String service, String method, TBase<?, ?> args, R result) throws Exception {
    HttpResponse<byte[]> response = post("/v1/api/" + service, method, call(method, args));
    if (response.statusCode() != 200) throw new IllegalStateException("HTTP " + response.statusCode() + ": " + text(response));
    return reply(response.body(), result);
  }

  TopicTalosResourceName createTopic(String name, int partitions) throws Exception {
    TopicService.createTopic_result r = call("topic", "createTopic", new TopicService.createTopic_args(
        new CreateTopicRequest(name, new TopicAttribute().setPartitionNumber(partitions))), new TopicService.createTopic_result());
    if (r.isSetE()) throw r.getE();
    return r.getSuccess().getTopicInfo().getTopicTalosResourceName();
  }

  /** Puts one uncompressed block; returns the offset assigned to its first message. */
  long put(TopicAndPartition tap, List<String> messages) throws Exception {
    byte[][] bytes = messages.stream().map(m -> m.getBytes(StandardCharsets.UTF_8)).toArray(byte[][]::new);
    MessageBlock block = new MessageBlock(0, bytes.length, MessageCompressionType.NONE, ByteBuffer.wrap(noneBlock(bytes)));
    MessageService.putMessage_result r = call("message", "putMessage", new MessageService.putMessage_args(
        new PutMessageRequest(tap, List.of(block), bytes.length, "raw#" + System.nanoTime())), new MessageService.putMessage_result());
    if (r.isSetE()) throw r.getE();
    return r.getSuccess().getStartMessageOffset();
  }

  /** Every message of the partition from {@code from} on, in offset order (offset → text). */
  java.util.SortedMap<Long, String> readAll(TopicAndPartition tap, long from) throws Exception {
    java.util.SortedMap<Long, String> out = new java.util.TreeMap<>();
    long offset = from;
    while (true) {
      MessageService.getMessage_result r = call("message", "getMessage", new MessageService.getMessage_args(
          new GetMessageRequest(tap, offset, "read#" + offset)), new MessageService.getMessage_result());
      if (r.isSetE()) throw r.getE();
      if (r.getSuccess().getMessageBlocksSize() == 0) return out;
      for (MessageBlock b : r.getSuccess().getMessageBlocks()) {
        List<String> texts = decodeNone(b.getMessageBlock());
        for (int i = 0; i < texts.size(); i++) {
          long o = b.getStartMessageOffset() + i;
          if (o >= offset) out.put(o, texts.get(i));
        }
        offset = Math.max(offset, b.getStartMessageOffset() + b.getMessageNumber());
      }
    }
  }

  static List<String> decodeNone(byte[] payload) throws IOException {
    java.io.DataInputStream in = new java.io.DataInputStream(new java.io.ByteArrayInputStream(payload));
    List<String> out = new java.util.ArrayList<>();
    while (in.available() > 0) {
      in.skipNBytes(4 + 8 + 2);
      in.skipNBytes(in.readUnsignedShort());
      byte[] data = new byte[in.readInt()];
      in.readFully(data);
      out.add(new String(data, StandardCharsets.UTF_8));
    }
    return out;
  }
}
