package io.talos.server.frontend;

import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Timer;
import io.talos.common.auth.GalaxySigner;
import io.talos.server.auth.AuditLog;
import io.talos.server.auth.Authorizer;
import io.talos.server.quota.Throttle;
import io.talos.server.auth.Authenticator;
import io.talos.server.auth.Authenticator.AuthenticationException;
import io.talos.server.auth.ReplayGuard;
import io.talos.common.errors.TalosErrors;
import io.talos.server.metadata.Credential;
import io.talos.server.metadata.MetadataException;
import io.talos.server.scheduling.Admission;
import io.talos.server.scheduling.PoolMetrics;
import io.talos.server.scheduling.TaskPool;
import io.talos.server.scheduling.TaskPoolClosedException;
import io.talos.server.service.MessageServiceHandler;
import io.talos.server.cluster.NodeInfo;
import io.talos.server.cluster.PartitionRouting;
import io.talos.server.forward.ForwardedCalls;
import io.talos.server.forward.ForwardedRequest;
import io.talos.server.forward.PeerClients;
import io.talos.server.forward.PeerException;
import io.talos.server.storage.ReadBufferPool;
import io.talos.thrift.MessageService;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GalaxyTalosException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.thrift.TApplicationException;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Thrift-over-HTTP API: {@code POST /v1/api/{topic,message,consumer,quota,credential,cluster}?id=..&type=method}
 * with one TCompactProtocol message as the body, exactly as the Talos SDK calls it.
 *
 * <p>Request path: check method and path (405 / 404); authenticate from the headers alone (401 /
 * 412 with the server's {@code X-Xiaomi-Timestamp}); require the {@code type} query parameter
 * (400); refuse a replayed signature of a state-changing call (409, {@link ReplayGuard}); only
 * then receive the body, without holding a thread, under a size limit (413), a minimum data rate
 * (408) and a shared in-flight byte budget (503 + Retry-After) ({@link RequestBodyReader}); check
 * the body against its signed MD5 (401); decode the call (400 when the body is not a well-formed
 * call or its method is not {@code type}). putMessage and getMessage are then handed to the {@link TaskPool} and the
 * Jetty thread is free: the response completes when a pool worker has served the call. A put or
 * get of a partition with nothing waiting or running, whose worker is idle, is served on the Jetty
 * thread itself with that worker lent to it ({@link TaskPool#submitOrRun}; {@code
 * scheduling.inline.idle}, only when the storage part runs on the worker): a lone request then
 * costs no thread hand-off. Other
 * calls (admin, consumer groups: metadata operations) run on the Jetty thread. Either way the
 * answer is {@code 200 application/x-thrift} with the Thrift reply.
 *
 * <p>Decoded arguments are checked against {@link ArgumentLimits} before any service sees them
 * (INVALID_REQUEST_PARAMS in the method's result, HTTP 200). Errors before a call can be served
 * (404, 405, 400, 408, 413, 500) are answered with their HTTP status and a Thrift EXCEPTION
 * message ({@code application/x-thrift}): the Talos SDK reads such a body as a
 * {@code TApplicationException} carrying the message. Authentication and admission errors (401,
 * 409, 412, 503) stay one line of plain text: the SDK adjusts its clock from a 412 and retries
 * only when the body is not Thrift. Every Throwable is caught here: an Error other than
 * OutOfMemoryError is a 500 with a Thrift answer, counted ({@code http.status.500}) and logged
 * once in a few lines; an OutOfMemoryError is counted and rethrown.
 *
 * <p>In cluster mode ({@link #cluster}) a put or get is first routed by the node's {@link
 * PartitionRouting}: served here, forwarded to the owner over the peer port (the owner's Thrift
 * reply is answered as it is), or answered PARTITION_NOT_SERVING at once. Requests other nodes
 * forward here arrive through {@link #serve(ForwardedRequest, java.util.function.Consumer)} and take
 * the same decode, limits and task-pool path; they are never forwarded again (docs/cluster.md).
 *
 * <p>Thread-safe; runs on Jetty's request threads.
 */
public final class ApiHandler extends Handler.Abstract implements ForwardedCalls {
  private static final Logger LOG = LoggerFactory.getLogger(ApiHandler.class);
  public static final String API_PREFIX = "/v1/api/";
  public static final String THRIFT_CONTENT_TYPE = "application/x-thrift";
  /** User-Agent prefix of our SDK, which understands Talos extension error codes. */
  public static final String TALOS_CLIENT_AGENT = "talos-java-client";

  private final Map<String, ThriftDispatcher> dispatchers;
  private final Authenticator authenticator;
  private final Clock clock;
  private final int maxRequestBytes;
  private final MetricRegistry metrics;
  private final TaskPool pool;
  private final long maxWaitingBytes;
  private final AtomicLong waitingBytes = new AtomicLong();
  private final MessageServiceHandler messages;
  private final int putPriority;
  private final int getPriority;
  private final ArgumentLimits limits;

  /**
   * Read-only calls, exempt from the {@link ReplayGuard}: a client may legitimately send the same
   * one twice within a second (same body, same timestamp, hence the same signature: a consumer
   * polling the tail of a partition, a tool polling a topic), and a replay of one changes nothing.
   */
  static final Set<String> REPLAYABLE_READS = Set.of("getServiceVersion", "validClientVersion", "getMessage",
      "describeTopic", "listTopics", "queryTopicQuota", "listPermission", "getPermission",
      "getTopicOffset", "getPartitionOffset", "getPartitionsOffset", "queryOffset", "queryWorker", "listConsumerGroups",
      "getOffsetForTimestamp", "listUserQuota", "queryUserQuota", "listCredentials", "getScheduleInfo");

  /**
   * Calls written to the {@link AuditLog} with their outcome: credential, topic, ACL and quota
   * changes and partition resets, whether they succeeded or were refused.
   */
  static final Set<String> AUDITED = Set.of("createCredential", "rotateCredential", "revokeCredential",
      "createTopic", "deleteTopic", "changeTopicAttribute", "resetPartition", "setPermission", "revokePermission",
      "setTopicQuota", "deleteTopicQuota", "setUserQuota", "deleteUserQuota", "addSubResourceName");

  private final ReplayGuard replayGuard;
  private final RequestBodyReader.Limits bodyLimits;
  private final long drainMaxBytes;
  private final AuditLog audit;

  /** How request bodies are received: see {@link RequestBodyReader}. */
  public record BodyLimits(long minBytesPerSec, long rateGraceMs, long inflightMaxBytes, long drainMaxBytes) {}
  private final StorageCalls storage;
  private final Security security;
  /** Runs delayed (throttled) puts and gets when their delay ends; never runs a call itself. */
  private final java.util.concurrent.ScheduledExecutorService throttleTimer;

  /**
   * Who may do what ({@link Authorizer}, checked for every decoded call before it runs) and how
   * fast ({@link Throttle}, on puts and gets before they are queued).
   */
  public record Security(Authorizer authorizer, Throttle throttle) {}

  /**
   * Long poll of getMessage (see {@link GetTask}, {@link FetchWaiters}).
   *
   * @param maxWaitMs longest a get is held ({@code message.get.wait.max.ms}); 0: long poll off
   * @param maxWaiters most gets parked at once ({@code message.get.waiters.max})
   */
  public record LongPoll(long maxWaitMs, int maxWaiters) {
    public static final LongPoll OFF = new LongPoll(0, 0);
  }

  /**
   * Puts and gets of an idle partition may run on the request thread: the storage part runs on
   * the worker (no storage threads), so the request thread only does what the worker would.
   */
  private final boolean inlineIdle;

  /**
   * The answer bytes of getMessage calls held at once (see {@link GetReplyBudget}).
   *
   * @param inflightMaxBytes {@code message.get.inflight.max.bytes}
   * @param maxBytesPerGet {@code message.get.max.bytes}
   * @param readBufferBytes {@code message.get.read.buffer.bytes}: direct buffers that reads put
   *     the answers' blocks in (see {@link ReadBufferPool})
   */
  public record GetReplies(long inflightMaxBytes, int maxBytesPerGet, long readBufferBytes) {}

  private final GetReplyBudget replyBudget;
  private final ReadBufferPool readBuffers;

  /** Where long-polling gets park; null when long poll is off. */
  private final FetchWaiters waiters;

  /** Puts received and not answered yet, and whether this node stopped accepting (see {@link #stopAccepting}). */
  private final InFlightPuts inFlightPuts = new InFlightPuts();

  /**
   * @param services path segment after /v1/api/ (topic, message, consumer, quota) → its service,
   *     already wrapped in an {@link ErrorBoundary}, with the generated processor's function map
   * @param pool serves putMessage and getMessage (the Jetty thread only parses and
   *     authenticates); every other call runs on the Jetty thread
   * @param maxWaitingBytes most request-body bytes held by pool tasks at once
   * @param messages the message service itself, for batched puts (group commit)
   * @param replayGuard remembers the signatures of state-changing requests
   * @param storageThreads threads running the storage part of puts and gets, each waited for at
   *     most until its request's deadline (see {@link StorageCalls}); 0 runs it on the pool worker
   * @param audit where authentication failures and the {@link #AUDITED} calls are written
   * @param security the permission check and the quotas
   * @param longPoll the bounds of held gets
   * @param getReplies the bound of the getMessage answers held at once
   * @param inlineIdle serve a put or get of an idle partition whose worker is idle on the request
   *     thread ({@link TaskPool#submitOrRun}); ignored unless {@code storageThreads} is 0
   */
  public ApiHandler(Map<String, Service> services, Authenticator authenticator, Clock clock,
      int maxRequestBytes, MetricRegistry metrics, TaskPool pool, long maxWaitingBytes, MessageServiceHandler messages,
      ReplayGuard replayGuard, BodyLimits bodyLimits, ArgumentLimits limits, int storageThreads, AuditLog audit,
      Security security, LongPoll longPoll, GetReplies getReplies, boolean inlineIdle) {
    this.security = security;
    this.inlineIdle = inlineIdle && storageThreads == 0;
    this.replyBudget = new GetReplyBudget(getReplies.inflightMaxBytes(), getReplies.maxBytesPerGet());
    metrics.gauge("message.get.inflight.bytes", () -> replyBudget::usedBytes);
    this.readBuffers = new ReadBufferPool(getReplies.readBufferBytes());
    metrics.gauge("message.get.read.buffer.out.bytes", () -> readBuffers::outBytes);
    metrics.gauge("message.get.read.buffer.allocated.bytes", () -> readBuffers::allocatedBytes);
    metrics.gauge("message.get.read.buffer.exhausted", () -> readBuffers::exhaustedCount);
    this.throttleTimer = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "talos-throttle");
      t.setDaemon(true);
      return t;
    });
    if (longPoll.maxWaitMs() > 0) {
      this.waiters = new FetchWaiters(longPoll.maxWaitMs(), longPoll.maxWaiters(), metrics);
      messages.setAppendListener(waiters::appended);
    } else {
      this.waiters = null;
    }
    this.storage = new StorageCalls(clock, pool.config().defaultDeadlineMs(), storageThreads,
        pool.config().threadSlices());
    this.audit = audit;
    Map<String, ThriftDispatcher> d = new LinkedHashMap<>();
    services.forEach((name, s) -> d.put(name, new ThriftDispatcher(name, s.implementation(), s.functions(), maxRequestBytes,
        limits.maxContainerLength, limits.maxDepth)));
    this.limits = limits;
    this.dispatchers = Map.copyOf(d);
    this.authenticator = authenticator;
    this.clock = clock;
    this.maxRequestBytes = maxRequestBytes;
    this.metrics = metrics;
    this.pool = pool;
    this.maxWaitingBytes = maxWaitingBytes;
    metrics.gauge("pool.waiting.bytes", () -> waitingBytes::get);
    metrics.gauge("message.put.inflight", () -> inFlightPuts::count);
    this.messages = messages;
    this.putPriority = pool.config().priorityOf("put");
    this.getPriority = pool.config().priorityOf("get");
    this.replayGuard = replayGuard;
    BodyBudget budget = new BodyBudget(bodyLimits.inflightMaxBytes());
    metrics.gauge("http.body.inflight.bytes", () -> budget::usedBytes);
    metrics.gauge("auth.replay.entries", () -> replayGuard::size);
    this.drainMaxBytes = bodyLimits.drainMaxBytes();
    this.bodyLimits = new RequestBodyReader.Limits(maxRequestBytes, bodyLimits.minBytesPerSec(),
        bodyLimits.rateGraceMs(), budget, System::nanoTime);
  }

  /** A service implementation and its generated {@code Processor.getProcessMapView()}. */
  public record Service(Object implementation, @SuppressWarnings("rawtypes") Map functions) {}

  @Override
  public boolean handle(Request request, Response response, Callback received) {
    // A put counts as in flight from here until its answer is written, whichever way it is
    // answered (route() handles every API path, so the wrapped callback is always completed).
    Callback callback = isApiPut(request) ? inFlightPuts.track(received) : received;
    try {
      return route(request, response, callback);
    } catch (OutOfMemoryError e) {
      metrics.meter("http.status.500").mark();
      throw e;
    } catch (Throwable e) {
      // A bug in the request path itself (the services have their own boundary).
      LOG.error("{} {} failed: {}", request.getMethod(), request.getHttpURI().getPath(), ErrorBoundary.brief(e));
      if (response.isCommitted()) {
        callback.failed(e);
        return true;
      }
      return error(response, callback, 500, queryParam(request.getHttpURI().getQuery(), "type"),
          TApplicationException.INTERNAL_ERROR, "internal error: " + e);
    }
  }

  /** Answers a partition call PARTITION_NOT_SERVING (retriable) before anything ran, counted on {@code meter}. */
  private void refuseNotServing(Response response, Callback callback, Timer.Context timer, Runnable forgetReplay,
      ThriftDispatcher.Call call, RequestContext ctx, TopicAndPartition partition, String meter, String why) {
    timer.stop();
    forgetReplay.run(); // nothing ran
    metrics.meter(meter).mark();
    reply(response, callback, ThriftDispatcher.errorReply(call, ErrorBoundary.answer(call.method(),
        notServing(partition, why), metrics, ctx)));
  }

  private static boolean isApiPut(Request request) {
    String path = request.getHttpURI().getPath();
    return path != null && path.equals(API_PREFIX + "message")
        && "putMessage".equals(queryParam(request.getHttpURI().getQuery(), "type"));
  }

  private boolean route(Request request, Response response, Callback callback) {
    String path = request.getHttpURI().getPath();
    if (path == null || !path.startsWith(API_PREFIX)) return false;
    ThriftDispatcher dispatcher = dispatchers.get(path.substring(API_PREFIX.length()));
    String typeParam = queryParam(request.getHttpURI().getQuery(), "type");
    if (dispatcher == null) {
      return early(request, () -> error(response, callback, 404, typeParam, TApplicationException.UNKNOWN_METHOD,
          "no such API path " + path + "; the API paths are "
          + API_PREFIX + "{" + String.join(",", new java.util.TreeSet<>(dispatchers.keySet())) + "}"));
    }
    if (!"POST".equals(request.getMethod())) {
      response.getHeaders().put(HttpHeader.ALLOW, "POST");
      return early(request, () -> error(response, callback, 405, typeParam, TApplicationException.UNKNOWN_METHOD,
          "method " + request.getMethod() + " not allowed on " + path + "; use POST"));
    }
    Map<String, List<String>> headers = Authenticator.headersOf(request.getHeaders());
    String query = request.getHttpURI().getQuery();
    // Everything the headers can prove is checked before a byte of the body is read: the
    // signature covers the body's digest header, not the body, so a client without the secret key
    // cannot make the server receive or buffer anything.
    Authenticator.Claim claim;
    Credential credential;
    try {
      claim = authenticator.checkHeaders(headers);
      credential = authenticator.verifySignature(claim, "POST", path, query, headers);
    } catch (AuthenticationException e) {
      return early(request, () -> authenticationError(request, response, callback, e));
    } catch (MetadataException e) {
      LOG.warn("cannot look up a credential", e);
      return early(request, () -> textError(response, callback, 503,
          "the metadata store is unavailable, retry later: " + e.getMessage()));
    }
    // The query is not signed; the type parameter must name the method of the (signed) body,
    // checked once the body is decoded, so it is required and safe to trust from here on.
    String method = queryParam(query, "type");
    if (method == null || method.isEmpty()) {
      return early(request, () -> error(response, callback, 400, null, TApplicationException.UNKNOWN_METHOD,
          "missing query parameter type=<Thrift method name>; the SDK sends ?id=<request id>&type=<method>"));
    }
    boolean guarded = !REPLAYABLE_READS.contains(method);
    if (guarded) {
      try {
        replayGuard.checkAndRemember(credential.secretKeyId(), claim.signature(), claim.clientTimestampSecs());
      } catch (AuthenticationException e) {
        return early(request, () -> authenticationError(request, response, callback, e));
      }
    }
    Runnable forgetReplay = guarded
        ? () -> replayGuard.forget(credential.secretKeyId(), claim.signature(), claim.clientTimestampSecs())
        : () -> { };
    RequestBodyReader.read(request, bodyLimits, new RequestBodyReader.Outcome() {
      @Override
      public void complete(RequestBodyReader.Body body) {
        try {
          serve(request, response, callback, dispatcher, path, query, method, headers, claim, credential, body, forgetReplay);
        } catch (OutOfMemoryError e) {
          body.release();
          metrics.meter("http.status.500").mark();
          throw e;
        } catch (Throwable e) {
          body.release();
          LOG.error("serving {} failed outside the service error boundary: {}", method, ErrorBoundary.brief(e));
          if (response.isCommitted()) {
            callback.failed(e);
          } else {
            error(response, callback, 500, method, TApplicationException.INTERNAL_ERROR,
                "internal error serving " + method + ": " + e);
          }
        }
      }

      @Override
      public void refused(int status, String message) {
        // Nothing was executed: an identical retry must not be taken for a replay.
        forgetReplay.run();
        if (status == 503) {
          // Plain text like the other "retry later" answers: the SDK retries on the status.
          response.getHeaders().put(HttpHeader.RETRY_AFTER, "1");
          textError(response, callback, status, message);
        } else {
          error(response, callback, status, method, TApplicationException.PROTOCOL_ERROR, message);
        }
      }
    });
    return true;
  }

  /** The rest of a request once its whole body has arrived; on this or a Jetty demand thread. */
  private void serve(Request request, Response response, Callback callback, ThriftDispatcher dispatcher,
      String path, String query, String method, Map<String, List<String>> headers, Authenticator.Claim claim,
      Credential credential, RequestBodyReader.Body received, Runnable forgetReplay) {
    byte[] body = received.bytes();
    int bodyLength = received.length();
    try {
      authenticator.verifyBody(headers, credential, body, bodyLength);
    } catch (AuthenticationException e) {
      received.release();
      authenticationError(request, response, callback, e);
      return;
    }
    String agent = request.getHeaders().get(HttpHeader.USER_AGENT);
    RequestContext ctx = new RequestContext(credential,
        agent != null && agent.startsWith(TALOS_CLIENT_AGENT), queryParam(query, "id"));
    ThriftDispatcher.Call call;
    try {
      call = dispatcher.decode(body, bodyLength, method);
    } catch (ThriftDispatcher.MalformedRequestException e) {
      error(response, callback, 400, e.method != null ? e.method : method, e.seqid, e.type, e.getMessage());
      return;
    } finally {
      // Decoded (or refused): the request's own bytes are no longer held by the front-end; a
      // put/get task's bytes are bounded by the pool's limit from here on.
      received.release();
    }
    String service = path.substring(API_PREFIX.length());
    GalaxyTalosException invalid = limits.violation(call.args());
    if (invalid != null) {
      reply(response, callback, ThriftDispatcher.errorReply(call,
          ErrorBoundary.answer(call.method(), invalid, metrics, ctx)));
      return;
    }
    // Access control, one place for every call of every service, before the call runs.
    GalaxyTalosException denied = security.authorizer().check(call.method(), call.args(), credential);
    if (denied != null) {
      metrics.meter("auth.denied").mark();
      GalaxyTalosException answer = ErrorBoundary.answer(call.method(), denied, metrics, ctx);
      if (AUDITED.contains(call.method())) {
        audit.action(call.method(), String.valueOf(denied.getErrorCode()), credential, remote(request),
            auditDetail(call.args(), null, denied));
      }
      reply(response, callback, ThriftDispatcher.errorReply(call, answer));
      return;
    }
    Timer.Context timer = metrics.timer("requests." + service + "." + call.method()).time();
    if (service.equals("message") && isPartitionCall(call.method())) {
      // The client's deadline is on the client's clock: move it onto ours by the offset its
      // signed X-Xiaomi-Timestamp shows (to the second).
      long clockOffsetMs = clock.millis() - claim.clientTimestampSecs() * 1000;
      TopicAndPartition partition = partitionOf(call);
      if (inFlightPuts.stopped() && partition != null) {
        refuseNotServing(response, callback, timer, forgetReplay, call, ctx, partition,
            "requests.refused.stopping", "this node is stopping");
        return;
      }
      PartitionRouting.Route route = routeOf(partition);
      if (route.kind() == PartitionRouting.Route.Kind.PEER) {
        forward(response, callback, timer, call, ctx, route.node(), new ForwardedRequest(credential.secretKeyId(),
            credential.ownerId(), credential.admin(), ctx.talosClient(), ctx.requestId(), clockOffsetMs, service,
            call.method(), body, bodyLength), forgetReplay);
        return;
      }
      if (route.kind() == PartitionRouting.Route.Kind.NOT_SERVING) {
        refuseNotServing(response, callback, timer, forgetReplay, call, ctx, partition,
            "routing.not.serving", "no node serves it right now");
        return;
      }
      long held = bodyLength;
      schedule(dispatcher, call, ctx, new PendingReply(response, callback, timer, () -> waitingBytes.addAndGet(-held)),
          held, clockOffsetMs, forgetReplay, inlineIdle);
      return;
    }
    byte[] reply;
    try {
      reply = AUDITED.contains(call.method())
          ? dispatcher.execute(call, ctx, result -> audit(call, credential, request, result))
          : dispatcher.execute(call, ctx);
    } catch (RuntimeException e) {
      // The services' ErrorBoundary answers every service error; this is a bug in the path itself.
      LOG.error("{} failed outside the service error boundary: {}", call.method(), ErrorBoundary.brief(e));
      error(response, callback, 500, call.method(), call.message().seqid, TApplicationException.INTERNAL_ERROR,
          "internal error serving " + call.method() + ": " + e);
      return;
    } finally {
      timer.stop();
    }
    reply(response, callback, reply);
  }

  /** The calls routed to a partition's owner: the put/get path of the task pool. */
  static boolean isPartitionCall(String method) {
    return method.equals("putMessage") || method.equals("getMessage");
  }

  /** The partition a putMessage or getMessage call names, or null when it names none. */
  private static TopicAndPartition partitionOf(ThriftDispatcher.Call call) {
    if (call.args() instanceof MessageService.putMessage_args a && a.getRequest() != null) {
      return a.getRequest().getTopicAndPartition();
    }
    if (call.args() instanceof MessageService.getMessage_args a && a.getRequest() != null) {
      return a.getRequest().getTopicAndPartition();
    }
    return null;
  }

  /** The request's timeoutTimestamp (client clock), or null. */
  private static Long timeoutOf(ThriftDispatcher.Call call) {
    if (call.args() instanceof MessageService.putMessage_args a && a.getRequest() != null
        && a.getRequest().isSetTimeoutTimestamp()) {
      return a.getRequest().getTimeoutTimestamp();
    }
    if (call.args() instanceof MessageService.getMessage_args a && a.getRequest() != null
        && a.getRequest().isSetTimeoutTimestamp()) {
      return a.getRequest().getTimeoutTimestamp();
    }
    return null;
  }

  /** LOCAL for a call naming no partition (the service answers the error) or a single node. */
  private PartitionRouting.Route routeOf(TopicAndPartition partition) {
    PartitionRouting r = routing;
    if (r == null || partition == null || partition.getTopicName() == null) return LOCAL;
    return r.route(partition.getTopicName(), partition.getPartitionId());
  }

  private static final PartitionRouting.Route LOCAL = new PartitionRouting.Route(PartitionRouting.Route.Kind.LOCAL, null);

  private GalaxyTalosException notServing(TopicAndPartition partition, String why) {
    PartitionRouting r = routing;
    return TalosErrors.of(ErrorCode.PARTITION_NOT_SERVING, "partition " + partition.getPartitionId() + " of topic '"
        + partition.getTopicName() + "' is not served by this node" + (r == null ? "" : " (" + r.localNode().id()
        + ", assignment version " + r.version() + ")") + ": " + why + "; nothing was done, retry");
  }

  /**
   * Hands a put or get to the task pool, answered through {@code pending}; {@code held} request
   * bytes count against {@code scheduling.max.waiting.bytes} until then.
   *
   * @param mayRunHere the calling thread may serve the call itself when its partition and worker
   *     are idle, and then what was queued for that worker meanwhile ({@link TaskPool#submitOrRun}):
   *     a request thread, never an event loop
   */
  private void schedule(ThriftDispatcher dispatcher, ThriftDispatcher.Call call, RequestContext ctx,
      PendingReply pending, long held, long clockOffsetMs, Runnable forgetReplay, boolean mayRunHere) {
    // Request bodies held by waiting and running tasks are bounded too, not only their count.
    boolean fits = waitingBytes.addAndGet(held) <= maxWaitingBytes;
    boolean put = call.method().equals("putMessage");
    TopicAndPartition tap = partitionOf(call);
    Credential credential = ctx.credential();
    io.talos.server.metadata.TopicRecord topic = fits && tap != null ? security.throttle().topicOf(tap) : null;
    java.util.function.IntConsumer afterGet = topic == null ? bytes -> { }
        : bytes -> security.throttle().chargeGet(credential, topic, tap.getPartitionId(), bytes);
    MessageCallTask task = put
        ? new PutTask(messages, call, ctx, pending, metrics, putPriority, clockOffsetMs, storage)
        : new GetTask(dispatcher, call, ctx, pending, metrics, getPriority, clockOffsetMs, storage, afterGet,
            waiters, t -> pool.submit(t).accepted(), replyBudget, readBuffers);
    if (task.expiredAt(clock.millis())) {
      metrics.meter(PoolMetrics.EXPIRED).mark();
      forgetReplay.run(); // nothing ran: an identical retry is not a replay
      task.expire(); // already past its deadline: answered at once, never queued
      return;
    }
    if (!fits) {
      submit(task, false, forgetReplay, false);
      return;
    }
    // Quotas are charged only for a request that can be served: its arguments are checked first
    // (no storage touched), so a refused put or get costs its account and topic no tokens.
    // Permissions and argument limits were checked before this point.
    if (topic != null) {
      try {
        if (put) {
          ((PutTask) task).validated(messages.validatePut(((MessageService.putMessage_args) call.args()).getRequest()));
        } else {
          messages.validateGet(((MessageService.getMessage_args) call.args()).getRequest());
        }
      } catch (GalaxyTalosException invalid) {
        forgetReplay.run(); // nothing ran
        task.fail(invalid);
        return;
      }
    }
    // Quotas are enforced where the partition is served (a forwarded request on its owner).
    Throttle.Decision decision = topic == null ? Throttle.Decision.NOW
        : put ? security.throttle().admitPut(credential, topic, tap.getPartitionId(), ((PutTask) task).sizeBytes())
        : security.throttle().admitGet(credential, topic, tap.getPartitionId());
    if (decision.refused()) {
      metrics.meter("quota.refused").mark();
      // Held for the bound, then told: never dropped. It did not run: a retry is not a replay.
      GalaxyTalosException quota = TalosErrors.of(ErrorCode.EXCESSIVE_PENDING_MESSAGE, decision.refusal());
      later(decision.delayMs(), () -> {
        forgetReplay.run();
        task.fail(quota);
      }, task);
    } else if (decision.delayMs() > 0) {
      metrics.meter("quota.delayed").mark();
      later(decision.delayMs(), () -> submit(task, true, forgetReplay, false), task);
    } else {
      submit(task, true, forgetReplay, mayRunHere);
    }
  }

  /**
   * Hands a put or get to the pool (or, {@code mayRunHere}, serves it on this thread when its
   * partition and worker are idle), or answers it at once when the pool cannot take it.
   */
  private void submit(MessageCallTask task, boolean fits, Runnable forgetReplay, boolean mayRunHere) {
    Admission admission = !fits ? Admission.REJECTED_FULL : mayRunHere ? pool.submitOrRun(task) : pool.submit(task);
    if (!admission.accepted()) {
      forgetReplay.run();
      // Refused fast, never queued: the client retries later (or elsewhere).
      task.fail(admission == Admission.REJECTED_FULL
          ? TalosErrors.of(ErrorCode.EXCESSIVE_PENDING_MESSAGE, "the server has too many requests waiting"
              + " (scheduling.max.waiting.tasks / scheduling.max.waiting.bytes); retry later")
          : new TaskPoolClosedException());
    }
  }

  /**
   * Runs {@code action} after {@code delayMs} on the throttle timer; no thread waits meanwhile
   * (the request's body is counted in the waiting bytes until it is answered). If the timer is
   * shut down (the server stops), the task is answered at once.
   */
  private void later(long delayMs, Runnable action, MessageCallTask task) {
    try {
      throttleTimer.schedule(() -> {
        try {
          action.run();
        } catch (RuntimeException e) {
          LOG.error("a throttled request failed: {}", ErrorBoundary.brief(e));
          task.fail(e);
        }
      }, delayMs, java.util.concurrent.TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      task.fail(new TaskPoolClosedException());
    }
  }

  /**
   * Forwards a call this node received for a partition {@code owner} serves, and answers the
   * owner's Thrift reply as it is. The request's bytes count against {@code
   * scheduling.max.waiting.bytes} until the answer. A peer that cannot be reached or does not
   * answer gives a retriable error, never a hang: PARTITION_NOT_SERVING when nothing was sent
   * (the client refreshes its partition map and retries), EXCESSIVE_PENDING_MESSAGE when too many
   * requests wait for that peer, REQUEST_PROCESS_TIMEOUT when it was sent but not answered.
   */
  private void forward(Response response, Callback callback, Timer.Context timer, ThriftDispatcher.Call call,
      RequestContext ctx, NodeInfo owner, ForwardedRequest request, Runnable forgetReplay) {
    long held = request.bodyLength();
    if (waitingBytes.addAndGet(held) > maxWaitingBytes) {
      waitingBytes.addAndGet(-held);
      timer.stop();
      forgetReplay.run();
      reply(response, callback, ThriftDispatcher.errorReply(call, ErrorBoundary.answer(call.method(),
          TalosErrors.of(ErrorCode.EXCESSIVE_PENDING_MESSAGE, "the server has too many requests waiting"
              + " (scheduling.max.waiting.bytes); retry later"), metrics, ctx)));
      return;
    }
    long timeoutMs = forwardTimeoutMs;
    Long deadline = timeoutOf(call);
    if (deadline != null) timeoutMs = Math.max(1, Math.min(timeoutMs, deadline + request.clockOffsetMs() - clock.millis()));
    TopicAndPartition partition = partitionOf(call);
    forwarder.forward(owner, request, timeoutMs).whenComplete((reply, error) -> {
      waitingBytes.addAndGet(-held);
      timer.stop();
      if (error == null) {
        reply(response, callback, reply);
        return;
      }
      Throwable cause = error instanceof java.util.concurrent.CompletionException && error.getCause() != null
          ? error.getCause() : error;
      GalaxyTalosException answer;
      if (cause instanceof PeerException p && p.reason() != PeerException.Reason.NO_ANSWER) {
        forgetReplay.run(); // nothing was done
        answer = p.reason() == PeerException.Reason.OVERLOADED
            ? TalosErrors.of(ErrorCode.EXCESSIVE_PENDING_MESSAGE, "forwarding to the owner: " + p.getMessage() + "; retry later")
            : notServing(partition, "its owner " + p.getMessage());
      } else {
        answer = TalosErrors.of(ErrorCode.REQUEST_PROCESS_TIMEOUT, call.method() + " forwarded to the owner "
            + owner.id() + ": " + cause.getMessage() + "; retry");
      }
      reply(response, callback, ThriftDispatcher.errorReply(call, ErrorBoundary.answer(call.method(), answer, metrics, ctx)));
    });
  }

  /**
   * Serves a request another node forwarded here (the peer port): the same decode, argument
   * limits and task-pool path as a local call, as the caller the forwarding node authenticated.
   * A partition this node does not serve is answered PARTITION_NOT_SERVING: a forwarded request
   * is never forwarded again.
   */
  @Override
  public void serve(ForwardedRequest request, java.util.function.Consumer<byte[]> sink) {
    ThriftDispatcher dispatcher = dispatchers.get(request.service());
    if (dispatcher == null || !request.service().equals("message") || !isPartitionCall(request.method())) {
      sink.accept(ThriftDispatcher.applicationException(request.method(), 0, TApplicationException.UNKNOWN_METHOD,
          "only message putMessage and getMessage are forwarded, not " + request.service() + " " + request.method()));
      return;
    }
    ThriftDispatcher.Call call;
    try {
      call = dispatcher.decode(request.body(), request.bodyLength(), request.method());
    } catch (ThriftDispatcher.MalformedRequestException e) {
      sink.accept(ThriftDispatcher.applicationException(e.method != null ? e.method : request.method(), e.seqid,
          e.type, e.getMessage()));
      return;
    }
    // The forwarding node authenticated the caller; the secret never travels.
    RequestContext ctx = new RequestContext(new Credential(request.secretKeyId(), "", request.ownerId(), request.admin()),
        request.talosClient(), request.requestId());
    GalaxyTalosException invalid = limits.violation(call.args());
    if (invalid != null) {
      sink.accept(ThriftDispatcher.errorReply(call, ErrorBoundary.answer(call.method(), invalid, metrics, ctx)));
      return;
    }
    TopicAndPartition partition = partitionOf(call);
    if (inFlightPuts.stopped() && partition != null) {
      metrics.meter("requests.refused.stopping").mark();
      sink.accept(ThriftDispatcher.errorReply(call, ErrorBoundary.answer(call.method(), notServing(partition,
          "this node is stopping"), metrics, ctx)));
      return;
    }
    PartitionRouting.Route route = routeOf(partition);
    if (route.kind() != PartitionRouting.Route.Kind.LOCAL) {
      metrics.meter("forward.refused.not.owner").mark();
      sink.accept(ThriftDispatcher.errorReply(call, ErrorBoundary.answer(call.method(), notServing(partition,
          "a request forwarded here by another node is never forwarded again"), metrics, ctx)));
      return;
    }
    metrics.meter("forward.served").mark();
    Timer.Context timer = metrics.timer("forwarded.message." + call.method()).time();
    long held = request.bodyLength();
    // never on the peer server's event loop: always handed to a worker
    schedule(dispatcher, call, ctx, new PendingReply(sink, timer, () -> waitingBytes.addAndGet(-held)), held,
        request.clockOffsetMs(), () -> { }, false);
  }

  /** A Thrift INTERNAL_ERROR answer to {@code method} (for the peer port's last-resort errors). */
  public static byte[] internalError(String method, String message) {
    return ThriftDispatcher.applicationException(method, 0, TApplicationException.INTERNAL_ERROR, message);
  }

  /**
   * Makes this handler cluster-aware: puts and gets consult {@code routing} and go to their
   * owner through {@code forwarder}; forwarded requests arrive through {@link #serve}. Called once
   * before the server starts; without it every partition is served here.
   *
   * @param forwardTimeoutMs longest wait for the owner's answer (capped by the request's deadline)
   */
  public void cluster(PartitionRouting routing, PeerClients forwarder, long forwardTimeoutMs) {
    this.routing = routing;
    this.forwarder = forwarder;
    this.forwardTimeoutMs = forwardTimeoutMs;
  }

  private volatile PartitionRouting routing;
  private volatile PeerClients forwarder;
  private volatile long forwardTimeoutMs;

  /**
   * The first step of a clean stop: from now on puts and gets (received or forwarded here) are
   * refused PARTITION_NOT_SERVING (retriable, nothing done: the client goes to another node),
   * and long-polling gets are answered at once. The puts accepted before are still served and
   * answered ({@link #awaitPutsAnswered}). Idempotent.
   */
  public void stopAccepting() {
    inFlightPuts.stop();
    if (waiters != null) waiters.close();
  }

  /** Whether {@link #stopAccepting} was called. */
  public boolean stoppedAccepting() {
    return inFlightPuts.stopped();
  }

  /**
   * Waits at most {@code timeoutMs} until every put this front-end received (served here or
   * forwarded to its owner) has been answered on its connection.
   *
   * @return true if none is left unanswered
   */
  public boolean awaitPutsAnswered(long timeoutMs) throws InterruptedException {
    return inFlightPuts.awaitNone(timeoutMs);
  }

  /** Puts received and not answered yet. */
  public int putsInFlight() {
    return inFlightPuts.count();
  }

  /** Writes an {@link #AUDITED} call and its outcome; never its secrets (see {@link #auditDetail}). */
  @SuppressWarnings("rawtypes")
  private void audit(ThriftDispatcher.Call call, Credential credential, Request request, org.apache.thrift.TBase result) {
    GalaxyTalosException error = null;
    Object success = null;
    for (Object f : org.apache.thrift.meta_data.FieldMetaData.getStructMetaDataMap(result.getClass()).keySet()) {
      org.apache.thrift.TFieldIdEnum field = (org.apache.thrift.TFieldIdEnum) f;
      @SuppressWarnings("unchecked")
      Object value = result.isSet(field) ? result.getFieldValue(field) : null;
      if (field.getFieldName().equals("e")) error = (GalaxyTalosException) value;
      if (field.getFieldName().equals("success")) success = value;
    }
    String outcome = error == null ? "ok" : String.valueOf(error.getErrorCode());
    audit.action(call.method(), outcome, credential, remote(request), auditDetail(call.args(), success, error));
  }

  /**
   * What an audit line says about a call: its arguments (no call takes a secret) and, for the
   * credential calls, the listed part of the answer ({@code CredentialInfo}; the answer's secret
   * key is left out), or the error message.
   */
  @SuppressWarnings("rawtypes")
  static String auditDetail(org.apache.thrift.TBase args, Object success, GalaxyTalosException error) {
    StringBuilder b = new StringBuilder(args.toString());
    if (success instanceof io.talos.thrift.CreateCredentialResponse r) b.append(" -> ").append(r.getCredential());
    if (success instanceof io.talos.thrift.RotateCredentialResponse r) b.append(" -> ").append(r.getCredential());
    if (success instanceof io.talos.thrift.RevokeCredentialResponse r) b.append(" -> ").append(r.getCredential());
    if (error != null) b.append(" -> ").append(error.getErrMsg());
    return b.toString();
  }

  private static String remote(Request request) {
    return Request.getRemoteAddr(request) + ":" + Request.getRemotePort(request);
  }

  /**
   * Answers a request refused before its body is needed, after dropping a small body (at most
   * {@code server.request.early.answer.drain.max.bytes}, under the body rate limits, without
   * holding a thread): a client still writing its body would otherwise see a broken pipe instead
   * of the answer (a 412 the SDK must read to adjust its clock, say).
   */
  private boolean early(Request request, Runnable answer) {
    RequestBodyReader.drainThen(request, bodyLimits, drainMaxBytes, answer);
    return true;
  }

  /** Answers 200 with a Thrift reply, written in slices (see {@link SlicedReplyWrite}). */
  static boolean reply(Response response, Callback callback, byte[] reply) {
    return reply(response, callback, EncodedReply.of(reply));
  }

  /** As {@link #reply(Response, Callback, byte[])}, for a reply in parts. */
  static boolean reply(Response response, Callback callback, EncodedReply reply) {
    response.setStatus(200);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, THRIFT_CONTENT_TYPE);
    SlicedReplyWrite.write(response, reply, callback);
    return true;
  }

  @Override
  protected void doStop() throws Exception {
    if (waiters != null) waiters.close(); // parked gets are answered (empty) before the pool stops
    throttleTimer.shutdownNow();
    storage.close();
    super.doStop();
  }

  private boolean authenticationError(Request request, Response response, Callback callback, AuthenticationException e) {
    metrics.meter("auth.failures").mark();
    if (e.httpStatus() == 401 || e.httpStatus() == 409) {
      audit.authFailure(e.httpStatus(), e.keyId(), remote(request), e.getMessage());
    }
    if (e.httpStatus() == 412) {
      response.getHeaders().put(GalaxySigner.TIMESTAMP, Long.toString(clock.millis() / 1000));
    }
    return textError(response, callback, e.httpStatus(), e.getMessage());
  }

  private boolean error(Response response, Callback callback, int status, String method, int type, String message) {
    return error(response, callback, status, method, 0, type, message);
  }

  /**
   * Answers {@code status} with a Thrift EXCEPTION message: {@code method} (the call's, or the
   * {@code type} query parameter) and a {@link TApplicationException} of {@code type}.
   */
  private boolean error(Response response, Callback callback, int status, String method, int seqid, int type,
      String message) {
    metrics.meter("http.status." + status).mark();
    LOG.debug("HTTP {}: {}", status, message);
    response.setStatus(status);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, THRIFT_CONTENT_TYPE);
    response.write(true, ByteBuffer.wrap(ThriftDispatcher.applicationException(method, seqid, type, message)), callback);
    return true;
  }

  /** Plain text: for authentication errors and 503s, which the SDK handles by status (see the class doc). */
  private boolean textError(Response response, Callback callback, int status, String message) {
    metrics.meter("http.status." + status).mark();
    LOG.debug("HTTP {}: {}", status, message);
    response.setStatus(status);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain; charset=utf-8");
    response.write(true, ByteBuffer.wrap((message + "\n").getBytes(StandardCharsets.UTF_8)), callback);
    return true;
  }

  static String queryParam(String query, String name) {
    return io.talos.common.QueryParts.first(query, name);
  }
}
