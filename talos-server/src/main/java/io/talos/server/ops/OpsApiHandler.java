package io.talos.server.ops;

import com.codahale.metrics.MetricRegistry;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.talos.common.auth.GalaxySigner;
import io.talos.server.cluster.NodeInfo;
import io.talos.server.metadata.MetadataException;
import io.talos.server.metadata.MetadataStore;
import io.talos.server.metadata.PartitionLock;
import io.talos.server.metadata.TopicRecord;
import io.talos.server.storage.PartitionLogs;
import io.talos.server.storage.PartitionOffsets;
import java.nio.ByteBuffer;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Supplier;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.URIUtil;

/**
 * The ops REST API (JSON; every answer, errors included; docs/operations.md shows each):
 * <pre>
 *   GET  /ops/ready                              open     200 serving / 503 with the reasons
 *   GET  /ops/nodes                              open     the cluster's nodes (this node alone when single)
 *   GET  /ops/topics                             admin    topics with partition count and rates
 *   GET  /ops/topics/{name}                      admin    per partition: owner, offsets, bytes, rates
 *   GET  /ops/groups                             admin    consumer groups and their topics
 *   GET  /ops/groups/{name}                      admin    per topic and partition: worker, committed, end, lag
 *   POST /ops/nodes/{id}/drain                   admin    cluster mode; 409 on a single node
 *   POST /ops/partitions/{topic}/{p}/move[?to=N] admin    cluster mode; 409 on a single node
 * </pre>
 * "admin" paths need a request signed with an admin credential ({@link OpsAdminAuth}): they name
 * tenants' topics and groups, or change placement. A wrong method on a known path is 405 with
 * {@code Allow}; other {@code /ops/} paths pass on to the next handlers (health, metrics,
 * orphans, then the 404). Lists are cut at {@code ops.list.max.entries} ({@code "truncated":true}).
 * Every error answer is counted in {@code http.status.<code>}.
 *
 * <p>Thread-safe; each request reads the metadata store and the partition logs' offsets (which do
 * not open partitions whose offsets are known from their listing).
 */
public final class OpsApiHandler extends Handler.Abstract {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** What the handler reads. */
  public record Sources(MetadataStore store, PartitionLogs logs, ClusterView cluster, PartitionMeters meters,
      HealthChecks readiness, Supplier<String> notServingReason) {}

  private final Sources src;
  private final OpsAdminAuth auth;
  private final MetricRegistry metrics;
  private final Clock clock;
  private final long lockTtlMs;
  private final int listMax;

  /**
   * @param lockTtlMs consumer.lock.ttl.ms: a lock not renewed for this long is reported expired
   * @param listMax ops.list.max.entries: most topics, groups or group topics one answer lists
   */
  public OpsApiHandler(Sources sources, OpsAdminAuth auth, MetricRegistry metrics, Clock clock, long lockTtlMs,
      int listMax) {
    this.src = sources;
    this.auth = auth;
    this.metrics = metrics;
    this.clock = clock;
    this.lockTtlMs = lockTtlMs;
    this.listMax = listMax;
  }

  /** An answer that is not 200, as JSON {@code {"status":..,"error":..}}. */
  private static final class Answer extends Exception {
    final int status;

    Answer(int status, String message) {
      super(message);
      this.status = status;
    }
  }

  private enum Access { OPEN, ADMIN }

  private record Route(String allow, Access access, Body body) {}

  @FunctionalInterface
  private interface Body {
    int fill(ObjectNode out) throws Answer;
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) throws Exception {
    String path = request.getHttpURI().getPath();
    if (path == null || !path.startsWith(OpsHandler.PREFIX)) return false;
    String[] seg = segments(path.substring(OpsHandler.PREFIX.length()));
    Route route = route(seg, request);
    if (route == null) return false;
    String method = request.getMethod();
    boolean head = method.equals("HEAD") && route.allow().contains("GET");
    ObjectNode body = JSON.createObjectNode();
    int status;
    if (!route.allow().contains(method)) {
      response.getHeaders().put(HttpHeader.ALLOW, route.allow());
      status = error(body, 405, "method " + method + " not allowed on " + path + "; use " + route.allow());
    } else {
      try {
        if (route.access() == Access.ADMIN) auth.requireAdmin(request);
        status = route.body().fill(body);
      } catch (OpsAdminAuth.Refused e) {
        if (e.sendServerTime) response.getHeaders().put(GalaxySigner.TIMESTAMP, Long.toString(auth.serverSeconds()));
        status = error(body, e.status, e.getMessage());
      } catch (Answer e) {
        status = error(body, e.status, e.getMessage());
      } catch (MetadataException e) {
        status = error(body, 503, "the metadata store is unavailable, retry later: " + e.getMessage());
      }
    }
    if (status >= 400) metrics.meter("http.status." + status).mark();
    response.setStatus(status);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
    response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-store");
    byte[] bytes = JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(body);
    if (head) {
      response.getHeaders().put(HttpHeader.CONTENT_LENGTH, bytes.length);
      response.write(true, ByteBuffer.allocate(0), callback);
    } else {
      response.write(true, ByteBuffer.wrap(bytes), callback);
    }
    return true;
  }

  private static int error(ObjectNode body, int status, String message) {
    body.put("status", status).put("error", message);
    return status;
  }

  /** The route of a path below /ops/, or null when this handler does not serve it. */
  private Route route(String[] s, Request request) {
    String query = request.getHttpURI().getQuery();
    if (s.length == 1 && s[0].equals("ready")) return new Route("GET, HEAD", Access.OPEN, this::ready);
    if (s.length == 1 && s[0].equals("nodes")) return new Route("GET, HEAD", Access.OPEN, this::nodes);
    if (s.length == 1 && s[0].equals("topics")) return new Route("GET, HEAD", Access.ADMIN, this::topics);
    if (s.length == 2 && s[0].equals("topics")) return new Route("GET, HEAD", Access.ADMIN, b -> topic(b, s[1]));
    if (s.length == 1 && s[0].equals("groups")) return new Route("GET, HEAD", Access.ADMIN, this::groups);
    if (s.length == 2 && s[0].equals("groups")) return new Route("GET, HEAD", Access.ADMIN, b -> group(b, s[1]));
    if (s.length == 3 && s[0].equals("nodes") && s[2].equals("drain")) {
      return new Route("POST", Access.ADMIN, b -> action(b, () -> src.cluster().drain(s[1]), "drain", "node", s[1]));
    }
    if (s.length == 4 && s[0].equals("partitions") && s[3].equals("move")) {
      return new Route("POST", Access.ADMIN, b -> {
        int p = partitionId(s[2]);
        String to = param(query, "to");
        return action(b, () -> src.cluster().move(s[1], p, to), "move", "partition", s[1] + "/" + p);
      });
    }
    return null;
  }

  // ---- answers --------------------------------------------------------------------------------

  private int ready(ObjectNode out) {
    ArrayNode reasons = JSON.createArrayNode();
    String notServing = src.notServingReason().get();
    if (notServing != null) reasons.addObject().put("check", "server").put("problem", notServing);
    for (HealthChecks.Result r : src.readiness().run()) {
      if (!r.ok()) reasons.addObject().put("check", r.name()).put("problem", r.problem());
    }
    out.put("ready", reasons.isEmpty());
    out.put("node", src.cluster().localNode().id());
    if (!reasons.isEmpty()) out.set("reasons", reasons);
    return reasons.isEmpty() ? 200 : 503;
  }

  private int nodes(ObjectNode out) {
    out.put("clusterMode", src.cluster().clusterMode());
    String local = src.cluster().localNode().id();
    ArrayNode list = out.putArray("nodes");
    for (NodeInfo n : src.cluster().nodes()) {
      ObjectNode node = list.addObject();
      node.put("id", n.id()).put("apiUrl", n.apiUrl()).put("state", n.state().name())
          .put("capacity", n.capacity()).put("local", n.id().equals(local));
    }
    return 200;
  }

  private int topics(ObjectNode out) {
    List<TopicRecord> all = src.store().topics();
    ArrayNode list = out.putArray("topics");
    for (TopicRecord t : all.subList(0, Math.min(all.size(), listMax))) {
      ObjectNode o = list.addObject();
      o.put("name", t.name()).put("owner", t.ownerId()).put("partitions", t.partitionCount())
          .put("retentionSecs", t.retentionSecs());
      double[] rates = new double[4];
      for (int p = 0; p < t.partitionCount(); p++) addRates(rates, src.meters().get(t.name(), p));
      putRates(o, rates);
    }
    out.put("count", all.size());
    out.put("truncated", all.size() > listMax);
    return 200;
  }

  private int topic(ObjectNode out, String name) throws Answer {
    TopicRecord t = topicNamed(name);
    out.put("name", t.name()).put("resourceName", t.resourceName()).put("owner", t.ownerId())
        .put("partitions", t.partitionCount()).put("retentionSecs", t.retentionSecs());
    ArrayNode list = out.putArray("partitionList");
    long totalBytes = 0;
    for (int p = 0; p < t.partitionCount(); p++) {
      ObjectNode o = list.addObject();
      o.put("partition", p);
      NodeInfo owner = src.cluster().owner(t.name(), p);
      if (owner == null) o.putNull("owner");
      else o.put("owner", owner.id());
      try {
        PartitionOffsets off = src.logs().offsets(t.resourceName(), p);
        // endOffset is the newest message's offset (inclusive, -1 when none was ever written), as the
        // SDK and the CLI report it; nextOffset the offset the next message gets.
        o.put("startOffset", off.startOffset()).put("endOffset", off.endOffset() - 1)
            .put("nextOffset", off.endOffset()).put("bytes", off.sizeBytes());
        totalBytes += off.sizeBytes();
      } catch (Exception e) {
        o.put("error", "offsets unavailable: " + e.getMessage());
      }
      double[] rates = new double[4];
      addRates(rates, src.meters().get(t.name(), p));
      putRates(o, rates);
    }
    out.put("bytes", totalBytes);
    return 200;
  }

  private int groups(ObjectNode out) {
    Map<String, List<String>> byGroup = new java.util.TreeMap<>();
    for (TopicRecord t : src.store().topics()) {
      for (String g : src.store().consumerGroups(t.resourceName())) {
        if (byGroup.size() >= listMax && !byGroup.containsKey(g)) {
          out.put("truncated", true);
          continue;
        }
        byGroup.computeIfAbsent(g, k -> new ArrayList<>()).add(t.name());
      }
    }
    ArrayNode list = out.putArray("groups");
    byGroup.forEach((g, topics) -> {
      ObjectNode o = list.addObject();
      o.put("name", g);
      ArrayNode ts = o.putArray("topics");
      topics.forEach(ts::add);
    });
    if (!out.has("truncated")) out.put("truncated", false);
    return 200;
  }

  private int group(ObjectNode out, String group) throws Answer {
    out.put("name", group);
    ArrayNode topics = out.putArray("topics");
    long totalLag = 0;
    long now = src.store().timeMs(); // lock expiry is judged by the store's time, as the consumer service does
    for (TopicRecord t : src.store().topics()) {
      if (!src.store().consumerGroups(t.resourceName()).contains(group)) continue;
      if (topics.size() >= listMax) {
        out.put("truncated", true);
        break;
      }
      ObjectNode to = topics.addObject();
      to.put("topic", t.name());
      Map<Integer, PartitionLock> locks = src.store().partitionLocks(group, t.resourceName());
      ArrayNode parts = to.putArray("partitions");
      long topicLag = 0;
      for (int p = 0; p < t.partitionCount(); p++) {
        ObjectNode o = parts.addObject();
        o.put("partition", p);
        PartitionLock lock = locks.get(p);
        if (lock == null) {
          o.putNull("worker");
        } else {
          o.put("worker", lock.workerId()).put("lockExpired", lock.expired(now, lockTtlMs))
              .put("fencingToken", lock.fencingToken());
        }
        OptionalLong committed = src.store().committedOffset(group, t.resourceName(), p);
        if (committed.isPresent()) o.put("committedOffset", committed.getAsLong());
        else o.putNull("committedOffset");
        try {
          PartitionOffsets off = src.logs().offsets(t.resourceName(), p);
          o.put("endOffset", off.endOffset() - 1);
          // The committed offset is the last message processed (SDK semantics): the next to
          // consume is committed + 1. Nothing committed: everything still in the log is lag.
          long next = committed.isPresent() ? committed.getAsLong() + 1 : off.startOffset();
          long lag = Math.max(0, off.endOffset() - Math.max(next, off.startOffset()));
          o.put("lag", lag);
          topicLag += lag;
        } catch (Exception e) {
          o.put("error", "offsets unavailable: " + e.getMessage());
        }
      }
      to.put("lag", topicLag);
      totalLag += topicLag;
    }
    if (topics.isEmpty()) throw new Answer(404, "no consumer group '" + group + "': no topic has a worker, lock or"
        + " committed offset of it; GET /ops/groups lists the groups");
    out.put("lag", totalLag);
    if (!out.has("truncated")) out.put("truncated", false);
    return 200;
  }

  @FunctionalInterface
  private interface Action {
    void run() throws ClusterView.ActionRefusedException;
  }

  private int action(ObjectNode out, Action action, String what, String kind, String target) throws Answer {
    try {
      action.run();
    } catch (ClusterView.ActionRefusedException e) {
      throw new Answer(e.httpStatus(), what + " " + kind + " " + target + ": " + e.getMessage());
    }
    out.put("action", what).put(kind, target).put("accepted", true);
    return 202;
  }

  // ---- helpers --------------------------------------------------------------------------------

  private TopicRecord topicNamed(String name) throws Answer {
    Optional<TopicRecord> t = src.store().topic(name);
    if (t.isEmpty()) throw new Answer(404, "no topic named '" + name + "'; GET /ops/topics lists the topics");
    return t.get();
  }

  private static int partitionId(String s) throws Answer {
    try {
      int p = Integer.parseInt(s);
      if (p >= 0) return p;
    } catch (NumberFormatException e) {
      // answered below
    }
    throw new Answer(400, "partition '" + s + "' is not a partition id; use an integer >= 0");
  }

  /** rates[0..3]: put messages/s, put bytes/s, get messages/s, get bytes/s (one-minute rates). */
  private static void addRates(double[] rates, PartitionMeters.Meters m) {
    if (m == null) return;
    rates[0] += m.putMessages.getOneMinuteRate();
    rates[1] += m.putBytes.getOneMinuteRate();
    rates[2] += m.getMessages.getOneMinuteRate();
    rates[3] += m.getBytes.getOneMinuteRate();
  }

  private static void putRates(ObjectNode o, double[] r) {
    o.put("putMessagesPerSec", round(r[0])).put("putBytesPerSec", round(r[1]))
        .put("getMessagesPerSec", round(r[2])).put("getBytesPerSec", round(r[3]));
  }

  private static double round(double d) {
    return Math.round(d * 1000) / 1000.0;
  }

  /** The decoded, non-empty segments of a path (a trailing slash is ignored). */
  static String[] segments(String rest) {
    List<String> out = new ArrayList<>();
    for (String s : rest.split("/", -1)) {
      if (!s.isEmpty()) out.add(URIUtil.decodePath(s));
    }
    if (rest.contains("//")) out.add(0, "//"); // an empty segment in the middle matches no route
    return out.toArray(new String[0]);
  }

  private static String param(String query, String name) {
    if (query == null) return null;
    for (String p : query.split("&")) {
      int eq = p.indexOf('=');
      String k = eq < 0 ? p : p.substring(0, eq);
      if (k.equals(name)) return eq < 0 ? "" : URIUtil.decodePath(p.substring(eq + 1));
    }
    return null;
  }
}
