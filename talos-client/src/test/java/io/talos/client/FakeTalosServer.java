package io.talos.client;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.talos.common.auth.GalaxySigner;
import io.talos.common.errors.TalosErrors;
import io.talos.thrift.BaseQuota;
import io.talos.thrift.ChangeTopicAttributeRequest;
import io.talos.thrift.CreateTopicRequest;
import io.talos.thrift.CreateTopicResponse;
import io.talos.thrift.DeleteTopicRequest;
import io.talos.thrift.DescribeTopicRequest;
import io.talos.thrift.DescribeTopicResponse;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.GetMessageRequest;
import io.talos.thrift.GetMessageResponse;
import io.talos.thrift.GetPartitionOffsetRequest;
import io.talos.thrift.GetPartitionOffsetResponse;
import io.talos.thrift.GetPartitionsOffsetRequest;
import io.talos.thrift.GetPartitionsOffsetResponse;
import io.talos.thrift.GetTopicOffsetRequest;
import io.talos.thrift.GetTopicOffsetResponse;
import io.talos.thrift.ListTopicsResponse;
import io.talos.thrift.MessageBlock;
import io.talos.thrift.MessageService;
import io.talos.thrift.OffsetInfo;
import io.talos.thrift.PartitionState;
import io.talos.thrift.PutMessageRequest;
import io.talos.thrift.PutMessageResponse;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicAttribute;
import io.talos.thrift.TopicInfo;
import io.talos.thrift.TopicService;
import io.talos.thrift.TopicState;
import io.talos.thrift.TopicStatus;
import io.talos.thrift.TopicTalosResourceName;
import io.talos.thrift.Version;
import java.io.IOException;
import java.lang.reflect.Proxy;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.thrift.TProcessor;
import org.apache.thrift.protocol.TCompactProtocol;
import org.apache.thrift.transport.TMemoryBuffer;
import org.apache.thrift.transport.TMemoryInputTransport;

/**
 * An in-memory Talos server for client tests: HTTP via com.sun.net.httpserver, signatures
 * verified with {@link GalaxySigner}, topics and messages in memory. Tests can queue canned
 * HTTP answers ({@link #enqueue}) that are sent instead of processing the next requests, and
 * inspect every request received ({@link #requests()}).
 *
 * <p>Offsets follow the Talos conventions: endOffset is inclusive, caught-up fetches return no
 * blocks, fetches before the start or past the end are MESSAGE_OFFSET_OUT_OF_RANGE.
 */
public final class FakeTalosServer implements AutoCloseable {
  public static final String KEY_ID = "test-key-id";
  public static final String SECRET = "test-secret";

  /** A request as it arrived. */
  public record Received(String path, String query, Map<String, String> headers, byte[] body) {
    public String header(String name) {
      return headers.get(name.toLowerCase());
    }
  }

  /** A canned answer. */
  public record Canned(int status, String contentType, byte[] body, Map<String, String> headers) {
    public static Canned text(int status, String body) {
      return new Canned(status, "text/plain", body.getBytes(StandardCharsets.UTF_8), Map.of());
    }
  }

  private final HttpServer http;
  private final Topics topics = new Topics();
  private final TProcessor topicProcessor;
  private final TProcessor messageProcessor;
  private final List<Received> requests = new CopyOnWriteArrayList<>();
  private final ConcurrentLinkedQueue<Canned> canned = new ConcurrentLinkedQueue<>();
  private volatile boolean reportStartOffset = true;
  private volatile long responseDelayMs;

  public FakeTalosServer() throws IOException {
    topicProcessor = new TopicService.Processor<>(proxy(TopicService.Iface.class));
    messageProcessor = new MessageService.Processor<>(proxy(MessageService.Iface.class));
    http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    http.createContext("/", this::handle);
    http.start();
  }

  public String endpoint() {
    return "http://127.0.0.1:" + http.getAddress().getPort();
  }

  public TalosClientConfig.Builder config() {
    return TalosClientConfig.builder().endpoint(endpoint()).credentials(KEY_ID, SECRET);
  }

  public List<Received> requests() {
    return requests;
  }

  public void enqueue(Canned answer) {
    canned.add(answer);
  }

  /** Whether putMessage answers carry the startMessageOffset extension. */
  public void reportStartOffset(boolean report) {
    this.reportStartOffset = report;
  }

  public void delayResponses(long ms) {
    this.responseDelayMs = ms;
  }

  /** The blocks stored in a partition, with their assigned offsets. */
  public List<MessageBlock> storedBlocks(String topic, int partition) throws Exception {
    return List.copyOf(topics.byName(topic).partitions.get(partition));
  }

  @Override
  public void close() {
    http.stop(0);
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      byte[] body = exchange.getRequestBody().readAllBytes();
      Map<String, String> headers = new LinkedHashMap<>();
      exchange.getRequestHeaders().forEach((k, v) -> headers.put(k.toLowerCase(), v.get(0)));
      String path = exchange.getRequestURI().getRawPath();
      String query = exchange.getRequestURI().getRawQuery();
      if (path.equals("/v1/api/cluster")) {
        // A server without the cluster extension (like SDK 2.0.2's): clients keep their endpoint.
        send(exchange, 404, "text/plain", bytes("no service at " + path));
        return;
      }
      requests.add(new Received(path, query, headers, body));
      if (responseDelayMs > 0) sleep(responseDelayMs);
      Canned answer = canned.poll();
      if (answer != null) {
        answer.headers().forEach((k, v) -> exchange.getResponseHeaders().add(k, v));
        send(exchange, answer.status(), answer.contentType(), answer.body());
        return;
      }
      if (!"POST".equals(exchange.getRequestMethod())) {
        send(exchange, 405, "text/plain", bytes("POST only"));
        return;
      }
      String problem = checkSignature(exchange, path, query, body);
      if (problem != null) {
        send(exchange, 401, "text/plain", bytes(problem));
        return;
      }
      TProcessor processor = path.equals("/v1/api/topic") ? topicProcessor
          : path.equals("/v1/api/message") ? messageProcessor : null;
      if (processor == null) {
        send(exchange, 404, "text/plain", bytes("no service at " + path));
        return;
      }
      TMemoryBuffer out = new TMemoryBuffer(1024);
      processor.process(new TCompactProtocol(new TMemoryInputTransport(body)),
          new TCompactProtocol(out));
      send(exchange, 200, "application/x-thrift", java.util.Arrays.copyOf(out.getArray(),
          out.length()));
    } catch (Exception e) {
      throw new IOException(e);
    }
  }

  private static String checkSignature(HttpExchange exchange, String path, String query,
      byte[] body) {
    String auth = exchange.getRequestHeaders().getFirst(GalaxySigner.AUTHORIZATION);
    String prefix = GalaxySigner.SCHEME_V3 + " " + KEY_ID + ":";
    if (auth == null || !auth.startsWith(prefix)) return "bad Authorization header: " + auth;
    Map<String, List<String>> headers = new LinkedHashMap<>();
    exchange.getRequestHeaders().forEach((k, v) -> {
      if (!k.equalsIgnoreCase(GalaxySigner.AUTHORIZATION)) headers.put(k, v);
    });
    // Like the server: the signature (headers alone) first, then the body against its header.
    if (!GalaxySigner.signatureMatches(SECRET, GalaxySigner.stringToSign("POST", path, query, headers),
        auth.substring(prefix.length()))) {
      return "signature mismatch";
    }
    // Our clients send an AES-GCM tag by default (or the SHA-256 when told), the SDK its MD5:
    // exactly one of them.
    String tag = exchange.getRequestHeaders().getFirst(io.talos.common.auth.BodyTag.HEADER);
    String sha256 = exchange.getRequestHeaders().getFirst(GalaxySigner.CONTENT_SHA256);
    String md5 = exchange.getRequestHeaders().getFirst(GalaxySigner.CONTENT_MD5);
    if ((tag != null ? 1 : 0) + (sha256 != null ? 1 : 0) + (md5 != null ? 1 : 0) != 1) {
      return "want exactly one body digest header";
    }
    if (tag != null && !io.talos.common.auth.BodyTag.matches(SECRET, tag, body, 0, body.length)) return "bad content tag";
    if (sha256 != null && !GalaxySigner.contentSha256Hex(body, 0, body.length).equals(sha256)) {
      return "bad content sha256";
    }
    if (md5 != null && !GalaxySigner.contentMd5Hex(body, 0, body.length).equals(md5)) return "bad content md5";
    return null;
  }

  private static void send(HttpExchange exchange, int status, String contentType, byte[] body)
      throws IOException {
    exchange.getResponseHeaders().set("Content-Type", contentType);
    exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
    if (body.length > 0) exchange.getResponseBody().write(body);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Routes every Iface method to {@link Topics}; methods it lacks answer NOT_SUPPORTED.
   */
  @SuppressWarnings("unchecked")
  private <T> T proxy(Class<T> iface) {
    return (T) Proxy.newProxyInstance(iface.getClassLoader(), new Class<?>[] {iface},
        (p, method, args) -> {
          try {
            return Topics.class.getMethod(method.getName(), method.getParameterTypes())
                .invoke(topics, args);
          } catch (NoSuchMethodException e) {
            throw TalosErrors.of(ErrorCode.NOT_SUPPORTED, method.getName() + " is not faked");
          } catch (java.lang.reflect.InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }

  /** The fake's state; public methods mirror the Thrift services. */
  public final class Topics {
    final class Topic {
      final TopicInfo info;
      final TopicAttribute attribute;
      final long createdMs = System.currentTimeMillis();
      final List<List<MessageBlock>> partitions = new ArrayList<>();

      Topic(TopicInfo info, TopicAttribute attribute) {
        this.info = info;
        this.attribute = attribute;
        grow();
      }

      void grow() {
        while (partitions.size() < attribute.getPartitionNumber()) {
          partitions.add(Collections.synchronizedList(new ArrayList<>()));
        }
      }
    }

    private final Map<String, Topic> byName = new LinkedHashMap<>();

    synchronized Topic byName(String name) throws GalaxyTalosException {
      Topic t = byName.get(name);
      if (t == null) throw TalosErrors.topicNotExist(name);
      return t;
    }

    synchronized Topic byResource(TopicTalosResourceName rn) throws GalaxyTalosException {
      for (Topic t : byName.values()) {
        if (t.info.getTopicTalosResourceName().equals(rn)) return t;
      }
      throw TalosErrors.topicNotExist(rn.getTopicTalosResourceName());
    }

    public Version getServiceVersion() {
      return new Version(0, 1, 0, "test");
    }

    public synchronized CreateTopicResponse createTopic(CreateTopicRequest r)
        throws GalaxyTalosException {
      if (byName.containsKey(r.getTopicName())) {
        throw TalosErrors.of(ErrorCode.TOPIC_EXIST, "topic '" + r.getTopicName() + "' exists");
      }
      TopicInfo info = new TopicInfo(r.getTopicName(), new TopicTalosResourceName(
          "owner#" + r.getTopicName() + "#" + UUID.randomUUID().toString().substring(0, 8)),
          "owner");
      byName.put(r.getTopicName(), new Topic(info, r.getTopicAttribute().deepCopy()));
      return new CreateTopicResponse(info);
    }

    public synchronized void deleteTopic(DeleteTopicRequest r) throws GalaxyTalosException {
      byName.remove(byResource(r.getTopicTalosResourceName()).info.getTopicName());
    }

    public synchronized void changeTopicAttribute(ChangeTopicAttributeRequest r)
        throws GalaxyTalosException {
      Topic t = byResource(r.getTopicTalosResourceName());
      if (r.getTopicAttribute().getPartitionNumber() < t.attribute.getPartitionNumber()) {
        throw TalosErrors.of(ErrorCode.INVALID_TOPIC_PARAMS, "fewer partitions");
      }
      t.attribute.setPartitionNumber(r.getTopicAttribute().getPartitionNumber());
      if (r.getTopicAttribute().isSetMessageRetentionSecs()) {
        t.attribute.setMessageRetentionSecs(r.getTopicAttribute().getMessageRetentionSecs());
      }
      t.grow();
    }

    public synchronized DescribeTopicResponse describeTopic(DescribeTopicRequest r)
        throws GalaxyTalosException {
      Topic t = byName(r.getTopicName());
      List<PartitionState> states = new ArrayList<>();
      long total = 0;
      for (int i = 0; i < t.partitions.size(); i++) {
        long next = next(t.partitions.get(i));
        total += next;
        states.add(new PartitionState(i, 0, next - 1, next, next * 10));
      }
      return new DescribeTopicResponse(t.info, t.attribute.deepCopy(),
          new TopicState(t.createdMs, TopicStatus.ACTIVE, total, total * 10, states),
          new BaseQuota(-1), Map.of());
    }

    public synchronized ListTopicsResponse listTopics() {
      List<TopicInfo> infos = new ArrayList<>();
      for (Topic t : byName.values()) infos.add(t.info);
      return new ListTopicsResponse(infos);
    }

    private final java.util.concurrent.atomic.AtomicLong producerIds = new java.util.concurrent.atomic.AtomicLong();

    /** Idempotent produce: ids 1, 2, 3, ...; the fake's puts ignore producer id and sequence. */
    public io.talos.thrift.InitProducerIdResponse initProducerId(io.talos.thrift.InitProducerIdRequest r) {
      return new io.talos.thrift.InitProducerIdResponse(producerIds.incrementAndGet());
    }

    public PutMessageResponse putMessage(PutMessageRequest r) throws GalaxyTalosException {
      List<MessageBlock> blocks = partitionOf(r.getTopicAndPartition());
      long first;
      synchronized (blocks) {
        first = next(blocks);
        long offset = first;
        for (MessageBlock b : r.getMessageBlocks()) {
          MessageBlock stored = b.deepCopy().setStartMessageOffset(offset)
              .setAppendTimestamp(System.currentTimeMillis());
          blocks.add(stored);
          offset += b.getMessageNumber();
        }
      }
      PutMessageResponse response = new PutMessageResponse(r.getSequenceId());
      if (reportStartOffset) response.setStartMessageOffset(first);
      return response;
    }

    public GetMessageResponse getMessage(GetMessageRequest r) throws GalaxyTalosException {
      List<MessageBlock> blocks = partitionOf(r.getTopicAndPartition());
      List<MessageBlock> out = new ArrayList<>();
      int count = 0;
      synchronized (blocks) {
        long end = next(blocks);
        long offset = r.getMessageOffset();
        if (offset == -1) offset = 0;
        if (offset == -2) offset = Math.max(0, end - 1);
        if (offset < 0 || offset > end) {
          throw TalosErrors.of(ErrorCode.MESSAGE_OFFSET_OUT_OF_RANGE, "offset " + offset
              + " is outside [0, " + end + "]");
        }
        for (MessageBlock b : blocks) {
          if (b.getStartMessageOffset() + b.getMessageNumber() <= offset) continue;
          if (count >= r.getMaxGetMessageNumber()) break;
          out.add(b);
          count += (int) (b.getStartMessageOffset() + b.getMessageNumber()
              - Math.max(offset, b.getStartMessageOffset()));
        }
      }
      int messages = out.stream().mapToInt(MessageBlock::getMessageNumber).sum();
      return new GetMessageResponse(out, messages, r.getSequenceId());
    }

    public GetTopicOffsetResponse getTopicOffset(GetTopicOffsetRequest r)
        throws GalaxyTalosException {
      Topic t = byResource(r.getTopicTalosResourceName());
      List<OffsetInfo> infos = new ArrayList<>();
      for (int i = 0; i < t.partitions.size(); i++) {
        infos.add(new OffsetInfo(i).setStartOffset(0).setEndOffset(next(t.partitions.get(i)) - 1));
      }
      return new GetTopicOffsetResponse(infos);
    }

    public GetPartitionOffsetResponse getPartitionOffset(GetPartitionOffsetRequest r)
        throws GalaxyTalosException {
      TopicAndPartition tp = r.getTopicAndPartition();
      return new GetPartitionOffsetResponse(new OffsetInfo(tp.getPartitionId()).setStartOffset(0)
          .setEndOffset(next(partitionOf(tp)) - 1));
    }

    public GetPartitionsOffsetResponse getPartitionsOffset(GetPartitionsOffsetRequest r)
        throws GalaxyTalosException {
      throw TalosErrors.of(ErrorCode.NOT_SUPPORTED, "getPartitionsOffset");
    }

    private List<MessageBlock> partitionOf(TopicAndPartition tp) throws GalaxyTalosException {
      Topic t = byResource(tp.getTopicTalosResourceName());
      if (tp.getPartitionId() < 0 || tp.getPartitionId() >= t.partitions.size()) {
        throw TalosErrors.of(ErrorCode.PARTITION_NOT_EXIST, "no partition " + tp.getPartitionId());
      }
      return t.partitions.get(tp.getPartitionId());
    }

    private long next(List<MessageBlock> blocks) {
      synchronized (blocks) {
        if (blocks.isEmpty()) return 0;
        MessageBlock last = blocks.get(blocks.size() - 1);
        return last.getStartMessageOffset() + last.getMessageNumber();
      }
    }
  }
}
