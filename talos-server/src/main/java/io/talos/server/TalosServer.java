package io.talos.server;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import io.talos.common.config.ConfigException;
import io.talos.server.auth.AdminCredentials;
import io.talos.server.auth.AuditLog;
import io.talos.server.auth.Authenticator;
import io.talos.server.auth.ReplayGuard;
import io.talos.server.cluster.NodeInfo;
import io.talos.server.cluster.NodeState;
import io.talos.server.cluster.PartitionRouting;
import io.talos.server.forward.ClusterSecret;
import io.talos.server.forward.PeerClient;
import io.talos.server.forward.PeerClients;
import io.talos.server.forward.PeerServer;
import io.talos.server.frontend.ApiHandler;
import io.talos.server.frontend.ArgumentLimits;
import io.talos.server.frontend.ErrorBoundary;
import io.talos.server.auth.Authorizer;
import io.talos.server.metadata.CachingMetadataStore;
import io.talos.server.quota.QuotaShare;
import io.talos.server.quota.Throttle;
import io.talos.server.frontend.SlicedThreadPool;
import io.talos.server.scheduling.OsCpuUse;
import io.talos.server.scheduling.ThreadSlicePolicy;
import io.talos.server.frontend.TalosErrorHandler;
import io.talos.server.frontend.TlsConnector;
import io.talos.server.metadata.Credential;
import io.talos.server.metadata.HBaseMetadataStore;
import io.talos.server.metadata.MetadataException;
import io.talos.server.metadata.MetadataStore;
import io.talos.server.metadata.MvStoreMetadataStore;
import io.talos.server.metadata.PartitionOwnerEpochs;
import io.talos.server.cluster.ClusterNode;
import io.talos.server.cluster.ClusterOpsHandler;
import io.talos.server.cluster.ClusterSettings;
import io.talos.server.cluster.NodeInfo;
import io.talos.server.cluster.NodeState;
import io.talos.server.cluster.PartitionRouting;
import io.talos.server.metadata.TopicRecord;
import io.talos.server.ops.BridgedMetricRegistry;
import io.talos.server.ops.ClusterView;
import io.talos.server.ops.ConsoleHandler;
import io.talos.server.ops.HealthChecks;
import io.talos.server.ops.MembershipClusterView;
import io.talos.server.ops.MetricsHandler;
import io.talos.server.ops.OpsAdminAuth;
import io.talos.server.ops.OpsApiHandler;
import io.talos.server.ops.PartitionMeters;
import io.talos.server.ops.PrometheusMetrics;
import io.talos.server.storage.StorageFailureLog;
import io.talos.server.ops.OpsHandler;
import io.talos.server.ops.OrphansHandler;
import io.talos.server.scheduling.PoolConfig;
import io.talos.server.scheduling.TaskPool;
import io.talos.server.scheduling.WorkerSelector;
import io.talos.server.service.ConsumerServiceHandler;
import io.talos.server.service.MessageBlockValidator;
import io.talos.server.service.MessageServiceHandler;
import io.talos.server.service.CredentialServiceHandler;
import io.talos.server.service.QuotaLimits;
import io.talos.server.service.QuotaServiceHandler;
import io.talos.server.service.TopicDeletions;
import io.talos.server.service.TopicServiceHandler;
import io.talos.server.service.Topics;
import io.talos.server.storage.Durability;
import io.talos.server.storage.LogConfig;
import io.talos.server.storage.NextOffsetStore;
import io.talos.server.storage.PartitionLogs;
import io.talos.server.storage.OwnerOnlyLocalFileSystem;
import io.talos.server.storage.BlockBitmapPreload;
import io.talos.server.storage.DataDirMount;
import io.talos.server.storage.PageCacheDropBehind;
import io.talos.server.storage.TailCache;
import io.talos.server.service.ScheduleInfoHandler;
import io.talos.thrift.ClusterService;
import io.talos.thrift.ConsumerService;
import io.talos.thrift.MessageService;
import io.talos.thrift.CredentialService;
import io.talos.thrift.QuotaService;
import io.talos.thrift.TopicService;
import java.io.IOException;
import java.net.URI;
import java.time.Clock;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Talos node: the metadata store, the partition logs, the services and the Jetty front-end,
 * started in that order and closed in reverse. Standalone by default (embedded metadata, local
 * files); everything it needs comes from {@link ServerConfig}.
 *
 * <p>Thread-safe: {@link #close()} may be called from any thread, once or more.
 */
public final class TalosServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TalosServer.class);
  private static final String HTTP_CONNECTOR = "http";

  private final ServerConfig config;
  /** Dropwizard, recorded into by every component; its request timers also feed Prometheus. */
  private final BridgedMetricRegistry metrics = new BridgedMetricRegistry();
  private final PartitionMeters partitionMeters;
  /** What /ops/nodes and partition owners come from; the cluster layer replaces the single-node view. */
  private volatile ClusterView clusterView;
  private final MetadataStore metadata;
  private final PartitionLogs logs;
  private final Server jetty;
  /** The ops listener on its own port and threads (server.ops.port), or null when disabled. */
  private final Server opsJetty;
  private final TaskPool pool;
  /** The scheduler slice of the request threads (scheduling.thread.slice.*); sampled on its own thread. */
  private final ThreadSlicePolicy threadSlices;
  private final ScheduledExecutorService maintenance;
  private final AdminCredentials.Result admin;
  /** This node's part in the cluster (cluster.enabled), or null for a single node. */
  private final ClusterNode cluster;
  /** Where partitions are served: the cluster's routing, or every partition here (single node). */
  private volatile PartitionRouting routing;
  /** The peer port and the per-peer client pools: cluster mode only, else null. */
  private final PeerServer peerServer;
  private final PeerClients peerClients;
  /** The API front-end: refuses new requests and counts unanswered puts during a stop. */
  private final ApiHandler api;
  private volatile boolean closed;
  /**
   * Longest wait, after the peer client pools closed, for the answers of the forwarded puts a
   * drain abandoned (REQUEST_PROCESS_TIMEOUT, ready at once) to be written before the front-end
   * closes its connections.
   */
  private static final long ABANDONED_ANSWERS_WAIT_MS = 1_000;

  private TalosServer(ServerConfig config, Clock clock, UnaryOperator<MetadataStore> wrapStore,
      PartitionRouting clusterRouting) throws Exception {
    this.config = config;
    ClusterSettings clusterSettings = ClusterSettings.from(config); // refuses a bad cluster setup before anything
    this.partitionMeters = new PartitionMeters(config.getInt(ServerConfig.OPS_METRICS_LABELS_MAX));
    this.clusterView = ClusterView.singleNode(() -> ClusterView.localNodeInfo(
        endpoint().getHost() + ":" + endpoint().getPort(), endpoint().toString()));
    createPrivateDirectory(config.dataDir());
    MetadataStore opened = openMetadata(config);
    MetadataStore store = cached(config, clock, wrapStore.apply(opened));
    ClusterNode clusterNode = null;
    PartitionLogs partitionLogs = null;
    this.threadSlices = threadSlices(config);
    TaskPool taskPool = null;
    Server server = null;
    Server opsServer = null;
    ScheduledExecutorService scheduler = null;
    PeerServer peers = null;
    PeerClients clients = null;
    try {
      partitionLogs = openLogs(config, clock, store);
      // Before anything is written to the store: it may be the wrong one for this data.
      TopicDeletions.checkStartup(store, partitionLogs, storeName(config), config.storageRootUri(),
          config.getBoolean(ServerConfig.STORAGE_ORPHAN_DATA_ACCEPT), TalosServerMain.ACCEPT_ORPHAN_DATA_FLAG
              + " (or " + ServerConfig.STORAGE_ORPHAN_DATA_ACCEPT + "=true)");
      this.admin = AdminCredentials.ensure(store, config.adminCredentialFile());
      TailCache tailCache = partitionLogs.tailCache();
      metrics.register("storage.tail.cache.bytes", (Gauge<Long>) tailCache::sizeBytes);
      metrics.register("storage.tail.cache.hits", (Gauge<Long>) tailCache::hits);
      metrics.register("storage.tail.cache.misses", (Gauge<Long>) tailCache::misses);
      final PartitionLogs gauged = partitionLogs;
      metrics.register("storage.open.logs", (Gauge<Integer>) gauged::openLogCount);
      metrics.register("storage.next.offset.raises.pending", (Gauge<Integer>) gauged::nextOffsetRaisesPending);
      metrics.register("storage.next.offset.raise.failures", (Gauge<Long>) gauged::nextOffsetRaiseFailures);
      metrics.register("storage.open.files", (Gauge<Integer>) gauged::openFileCount);
      metrics.register("storage.opened.logs", (Gauge<Integer>) gauged::openedLogs);
      metrics.register("storage.evicted.logs", (Gauge<Integer>) gauged::evictedLogs);
      if (partitionLogs.fileSystem() instanceof OwnerOnlyLocalFileSystem local) {
        metrics.register("storage.segment.pinned.files", (Gauge<Long>) local::pinnedFiles);
        metrics.register("storage.segment.pin.failures", (Gauge<Long>) local::pinFailures);
        PageCacheDropBehind dropBehind = local.dropBehind();
        if (dropBehind != null) {
          metrics.register("storage.page.cache.written.back.bytes", (Gauge<Long>) dropBehind::writtenBackBytes);
          metrics.register("storage.page.cache.dropped.bytes", (Gauge<Long>) dropBehind::droppedBytes);
          metrics.register("storage.page.cache.skipped.chunks", (Gauge<Long>) dropBehind::skippedChunks);
          metrics.register("storage.page.cache.failed.calls", (Gauge<Long>) dropBehind::failedCalls);
          metrics.register("storage.page.cache.queued.chunks", (Gauge<Integer>) dropBehind::queuedChunks);
        }
      }

      if (clusterSettings != null) {
        if (!(opened instanceof PartitionOwnerEpochs epochs)) {
          throw new ConfigException(ServerConfig.CLUSTER_ENABLED + "=true requires " + ServerConfig.METADATA_STORE
              + "=hbase");
        }
        clusterNode = new ClusterNode(clusterSettings, new NodeInfo("starting", "http://starting", null, 0,
            NodeState.ACTIVE, clusterSettings.capacity()), epochs, partitionLogs, store,
            store instanceof CachingMetadataStore c ? c : null, clock);
        this.clusterView = new MembershipClusterView(clusterNode); // /ops/nodes, owners, drain
      }
      MetadataStore topicStore = clusterNode != null ? clusterNode.broadcasting(store) : store;
      // Deletions go through the broadcasting store too: other nodes drop the topic and close its logs.
      TopicDeletions topicDeletions = new TopicDeletions(topicStore, partitionLogs, clock, partitionMeters::removeTopic);
      topicDeletions.runOnce(); // finishes deletions interrupted by the last stop
      metrics.register("storage.orphan.topics", (Gauge<Integer>) () -> topicDeletions.orphans().size());
      Topics topics = new Topics(topicStore);
      MessageServiceHandler messageHandler = new MessageServiceHandler(topics, partitionLogs, clock,
          new MessageBlockValidator(MessageBlockValidator.Mode.valueOf(
              config.getString(ServerConfig.MESSAGE_BLOCK_VALIDATION).toUpperCase(Locale.ROOT)),
              config.getInt(ServerConfig.MESSAGE_MAX_BYTES),
              config.getLong(ServerConfig.MESSAGE_BLOCK_UNCOMPRESSED_MAX_BYTES)),
          config.getInt(ServerConfig.GET_MAX_MESSAGES), config.getInt(ServerConfig.GET_MAX_BYTES), partitionMeters,
          new StorageFailureLog(clock, config.getLong(ServerConfig.STORAGE_FAILURE_LOG_INTERVAL_MS)));
      threadSlices.start();
      metrics.register("scheduling.thread.slice.us", (Gauge<Integer>) threadSlices::currentUs);
      metrics.register("scheduling.thread.slice.switches", (Gauge<Long>) threadSlices::switches);
      taskPool = TaskPool.create(poolConfig(config, threadSlices), clock, metrics, true);
      if (clusterNode != null) {
        TaskPool pool = taskPool;
        // The node's load: every put and get its pool dequeued (its own partitions, local or forwarded here).
        com.codahale.metrics.Timer dequeued = metrics.timer(io.talos.server.scheduling.PoolMetrics.QUEUE_WAIT);
        clusterNode.loadCountedBy(dequeued::getCount);
      }
      Map<String, ApiHandler.Service> services = Map.of(
          "topic", new ApiHandler.Service(ErrorBoundary.wrap(TopicService.Iface.class,
              new TopicServiceHandler(topics, partitionLogs, topicDeletions, clock, config.getInt(ServerConfig.TOPIC_PARTITIONS_MAX),
                  config.getInt(ServerConfig.TOPIC_RETENTION_SECS_DEFAULT),
                  config.getInt(ServerConfig.TOPIC_RETENTION_SECS_MIN), config.getInt(ServerConfig.ACL_GRANTS_MAX),
                  QuotaLimits.from(config)), metrics),
              new TopicService.Processor<>(null).getProcessMapView()),
          "message", new ApiHandler.Service(ErrorBoundary.wrap(MessageService.Iface.class, messageHandler, metrics),
              new MessageService.Processor<>(null).getProcessMapView()),
          "consumer", new ApiHandler.Service(ErrorBoundary.wrap(ConsumerService.Iface.class,
              new ConsumerServiceHandler(topics, config.getLong(ServerConfig.CONSUMER_LOCK_TTL_MS)), metrics),
              new ConsumerService.Processor<>(null).getProcessMapView()),
          "quota", new ApiHandler.Service(ErrorBoundary.wrap(QuotaService.Iface.class,
              new QuotaServiceHandler(store, QuotaLimits.from(config)), metrics),
              new QuotaService.Processor<>(null).getProcessMapView()),
          "credential", new ApiHandler.Service(ErrorBoundary.wrap(CredentialService.Iface.class,
              new CredentialServiceHandler(store, clock, config.getLong(ServerConfig.AUTH_CREDENTIAL_ROTATION_GRACE_MS),
                  config.getLong(ServerConfig.AUTH_CREDENTIAL_ROTATION_GRACE_MAX_MS),
                  config.getInt(ServerConfig.AUTH_CREDENTIALS_MAX),
                  config.getInt(ServerConfig.AUTH_CREDENTIALS_PER_ACCOUNT_MAX)), metrics),
              new CredentialService.Processor<>(null).getProcessMapView()),
          "cluster", new ApiHandler.Service(ErrorBoundary.wrap(ClusterService.Iface.class,
              new ScheduleInfoHandler(topics, this::routing), metrics),
              new ClusterService.Processor<>(null).getProcessMapView()));

      int maxRequest = (int) config.getLong(ServerConfig.REQUEST_MAX_BYTES);
      long skewPastMs = config.getLong(ServerConfig.AUTH_CLOCK_SKEW_MAX_MS);
      Authenticator authenticator = new Authenticator(store, clock, skewPastMs,
          config.getLong(ServerConfig.AUTH_CLOCK_SKEW_FUTURE_MAX_MS));
      ReplayGuard replayGuard = new ReplayGuard(clock, skewPastMs, config.getInt(ServerConfig.AUTH_REPLAY_MAX_ENTRIES));
      long inflightMax = config.getLong(ServerConfig.REQUEST_BODY_INFLIGHT_MAX_BYTES);
      if (inflightMax < maxRequest) {
        throw new ConfigException(ServerConfig.REQUEST_BODY_INFLIGHT_MAX_BYTES + " (" + inflightMax
            + ") must be at least " + ServerConfig.REQUEST_MAX_BYTES + " (" + maxRequest + ")");
      }
      QueuedThreadPool threads = new SlicedThreadPool(config.getInt(ServerConfig.HTTP_THREADS_MAX), threadSlices);
      threads.setName("talos-http");
      server = new Server(threads);
      HttpConfiguration http = httpConfiguration(config);
      boolean tls = config.getInt(ServerConfig.TLS_PORT) >= 0;
      if (!config.getBoolean(ServerConfig.HTTP_ENABLED) && !tls) {
        throw new ConfigException(ServerConfig.HTTP_ENABLED + "=false needs TLS (" + ServerConfig.TLS_PORT
            + " >= 0): the API would have no listener");
      }
      if (config.getBoolean(ServerConfig.HTTP_ENABLED)) {
        ServerConnector connector = new ServerConnector(server, new HttpConnectionFactory(http));
        connector.setName(HTTP_CONNECTOR);
        connector.setHost(config.getString(ServerConfig.HOST));
        connector.setPort(config.getInt(ServerConfig.PORT));
        // Cuts connections that stop sending, a body included (RequestBodyReader answers 408).
        connector.setIdleTimeout(config.getLong(ServerConfig.HTTP_IDLE_TIMEOUT_MS));
        server.addConnector(connector);
      }
      if (tls) server.addConnector(TlsConnector.create(server, config, http));
      NetworkConnectionLimit connectionLimit =
          limitConnections(server, config.getInt(ServerConfig.HTTP_CONNECTIONS_MAX), config);
      metrics.gauge("http.connections.open", () -> connectionLimit::getNetworkConnectionCount);
      HealthChecks healthChecks = healthChecks(config, store, partitionLogs);
      OpsHandlers opsHandlers = new OpsHandlers(config, clock, store, partitionLogs, topicDeletions, healthChecks,
          new OpsAdminAuth(authenticator, clock), clusterNode);
      Throttle throttle = new Throttle(new Throttle.Limits(
          config.getLong(ServerConfig.QUOTA_PARTITION_PUT_BYTES_PER_SEC),
          config.getLong(ServerConfig.QUOTA_PARTITION_GET_BYTES_PER_SEC), config.getLong(ServerConfig.QUOTA_BURST_MS),
          config.getLong(ServerConfig.QUOTA_THROTTLE_MAX_DELAY_MS), config.getInt(ServerConfig.QUOTA_BUCKETS_MAX)),
          // Cluster mode: 1 / the ACTIVE members, following the membership; else the configured share.
          clusterNode != null ? clusterNode.quotaShare()
              : QuotaShare.fixed(Double.parseDouble(config.getString(ServerConfig.QUOTA_SHARE))),
          () -> TimeUnit.MILLISECONDS.toNanos(clock.millis()), store);
      ApiHandler api = new ApiHandler(services, authenticator, clock, maxRequest, metrics, taskPool,
              config.getLong(ServerConfig.SCHEDULING_MAX_WAITING_BYTES), messageHandler, replayGuard,
              new ApiHandler.BodyLimits(config.getLong(ServerConfig.REQUEST_BODY_MIN_BYTES_PER_SEC),
                  config.getLong(ServerConfig.REQUEST_BODY_RATE_GRACE_MS), inflightMax,
                  config.getLong(ServerConfig.REQUEST_EARLY_ANSWER_DRAIN_MAX_BYTES)),
              ArgumentLimits.from(config), config.storageIoThreads(),
              new AuditLog(clock, config.getLong(ServerConfig.AUDIT_AUTH_FAILURE_INTERVAL_MS),
                  config.getInt(ServerConfig.AUDIT_AUTH_FAILURE_KEYS_MAX)),
              new ApiHandler.Security(new Authorizer(store), throttle),
              new ApiHandler.LongPoll(config.getLong(ServerConfig.GET_WAIT_MAX_MS),
                  config.getInt(ServerConfig.GET_WAITERS_MAX)),
              new ApiHandler.GetReplies(config.getLong(ServerConfig.GET_INFLIGHT_MAX_BYTES),
                  config.getInt(ServerConfig.GET_MAX_BYTES), config.getLong(ServerConfig.GET_READ_BUFFER_BYTES)),
              config.getBoolean(ServerConfig.SCHEDULING_INLINE_IDLE));
      this.api = api;
      if (clusterNode != null) {
        TaskPool drainedPool = taskPool;
        clusterNode.drainWaitsFor(api::stopAccepting, timeoutMs -> awaitAnswered(api, drainedPool, timeoutMs));
      }
      // Cluster mode: routing from the membership (or one given by a test), and the peer port
      // (forwarded requests in) and the client pools (out).
      PartitionRouting effectiveRouting = clusterRouting != null ? clusterRouting
          : clusterNode != null ? clusterNode.routing() : null;
      if (effectiveRouting != null) {
        ClusterSecret secret = ClusterSecret.from(config);
        int maxFrame = config.getInt(ServerConfig.CLUSTER_PEER_MAX_FRAME_BYTES);
        if (maxFrame < maxRequest + 64 * 1024L) {
          throw new ConfigException(ServerConfig.CLUSTER_PEER_MAX_FRAME_BYTES + " (" + maxFrame + ") must be at least "
              + ServerConfig.REQUEST_MAX_BYTES + " (" + maxRequest + ") + 65536: a forwarded request must fit in a frame");
        }
        String localId = clusterSettings != null && !clusterSettings.nodeId().isEmpty() ? clusterSettings.nodeId()
            : effectiveRouting.localNode().id();
        clients = new PeerClients(localId, secret, new PeerClient.Settings(
            config.getInt(ServerConfig.CLUSTER_PEER_CLIENT_THREADS), config.getInt(ServerConfig.CLUSTER_PEER_CLIENT_CONNECTIONS),
            config.getInt(ServerConfig.CLUSTER_PEER_CLIENT_PENDING_MAX), config.getBoolean(ServerConfig.CLUSTER_PEER_CLIENT_MERGE),
            config.getLong(ServerConfig.CLUSTER_PEER_CONNECT_TIMEOUT_MS), maxFrame), metrics);
        api.cluster(effectiveRouting, clients, config.getLong(ServerConfig.CLUSTER_PEER_REQUEST_TIMEOUT_MS));
        if (clusterNode != null) clusterNode.onMembersChanged(clients::retainMembers);
        peers = new PeerServer(config.getString(ServerConfig.CLUSTER_PEER_HOST), config.getInt(ServerConfig.CLUSTER_PEER_PORT),
            config.getInt(ServerConfig.CLUSTER_PEER_SERVER_THREADS), maxFrame,
            config.getLong(ServerConfig.CLUSTER_PEER_HANDSHAKE_TIMEOUT_MS), secret, api, metrics);
      }
      Handler apiAndOps = new Handler.Sequence(api, opsHandlers.sequence());
      server.setHandler(tls && config.getBoolean(ServerConfig.HTTP_REDIRECT_HTTPS)
          ? TlsConnector.redirectingPlainHttp(apiAndOps) : apiAndOps);
      // Errors Jetty answers itself (bad URI, 413/414/431, a handler that threw) in the
      // endpoint's language: JSON under /ops, a Thrift exception elsewhere; never an HTML page.
      server.setErrorHandler(new TalosErrorHandler(metrics));
      server.start();
      if (tls) TlsConnector.started(server, http);
      opsServer = startOpsServer(config, opsHandlers);
      if (clusterNode != null) clusterNode.join(localNode(clusterSettings, config, server, peers));

      final PartitionLogs retained = partitionLogs;
      scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "talos-retention");
        t.setDaemon(true);
        return t;
      });
      long interval = config.getLong(ServerConfig.STORAGE_RETENTION_CHECK_INTERVAL_MS);
      scheduler.scheduleWithFixedDelay(() -> runRetention(store, retained), interval, interval, TimeUnit.MILLISECONDS);
      long deletionInterval = config.getLong(ServerConfig.STORAGE_TOPIC_DELETION_CHECK_INTERVAL_MS);
      scheduler.scheduleWithFixedDelay(() -> {
        try {
          topicDeletions.runOnce();
        } catch (RuntimeException e) {
          LOG.warn("topic deletion pass failed; will retry", e);
        }
      }, deletionInterval, deletionInterval, TimeUnit.MILLISECONDS);
      long sweep = config.getLong(ServerConfig.STORAGE_OPEN_SWEEP_INTERVAL_MS);
      scheduler.scheduleWithFixedDelay(() -> {
        try {
          retained.runEvictionOnce();
        } catch (RuntimeException e) {
          LOG.warn("closing idle partition logs failed; will retry", e);
        }
      }, sweep, sweep, TimeUnit.MILLISECONDS);
    } catch (Exception | Error e) {
      if (scheduler != null) scheduler.shutdownNow();
      if (peers != null) peers.close();
      if (clients != null) clients.close();
      if (opsServer != null) {
        try {
          opsServer.stop();
        } catch (Exception suppressed) {
          e.addSuppressed(suppressed);
        }
      }
      if (server != null) {
        try {
          server.stop();
        } catch (Exception suppressed) {
          e.addSuppressed(suppressed);
        }
      }
      if (taskPool != null) taskPool.close();
      threadSlices.close();
      if (clusterNode != null) clusterNode.close();
      if (partitionLogs != null) {
        partitionLogs.close();
        try {
          partitionLogs.fileSystem().close();
        } catch (IOException suppressed) {
          e.addSuppressed(suppressed);
        }
      }
      store.close();
      throw e;
    }
    this.metadata = store;
    this.logs = partitionLogs;
    this.jetty = server;
    this.opsJetty = opsServer;
    this.pool = taskPool;
    this.maintenance = scheduler;
    this.cluster = clusterNode;
    this.routing = clusterRouting != null ? clusterRouting : clusterNode != null ? clusterNode.routing()
        : PartitionRouting.singleNode(new NodeInfo("local", endpoint().toString(), config.getString(ServerConfig.HOST), 0,
            NodeState.ACTIVE, 1));
    this.peerServer = peers;
    this.peerClients = clients;
  }

  /**
   * The wait of a drain: at most {@code timeoutMs} for every put this node received to be
   * answered on its connection (served here or forwarded to its owner: a forwarded put is
   * answered with the owner's reply), then, within the same bound, for the task pool to be idle
   * (requests other nodes forwarded here). What is still unanswered at the bound is abandoned
   * and logged: see {@link #close()} for how those are answered.
   *
   * @return true if nothing was left
   */
  private static boolean awaitAnswered(ApiHandler api, TaskPool pool, long timeoutMs) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    try {
      boolean puts = api.awaitPutsAnswered(timeoutMs);
      boolean tasks = pool.awaitIdle(Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
      if (!puts || !tasks) {
        LOG.warn("Drain: after {} ms ({}) {} puts received are still unanswered and the task pool is {}; abandoning"
            + " them: a put forwarded to its owner is answered REQUEST_PROCESS_TIMEOUT (it may still be stored),"
            + " a queued one 'shutting down, retry' (not run), one running finishes", timeoutMs,
            ServerConfig.CLUSTER_DRAIN_TIMEOUT_MS, api.putsInFlight(), pool);
      }
      return puts && tasks;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** This node as it registers in the cluster: its id, API URL and capacity. */
  private static NodeInfo localNode(ClusterSettings settings, ServerConfig config, Server server, PeerServer peers) {
    ServerConnector c = (ServerConnector) server.getConnectors()[0];
    String host = c.getHost() == null || c.getHost().equals("0.0.0.0") ? "127.0.0.1" : c.getHost();
    String id = settings.nodeId().isEmpty() ? ClusterNode.defaultNodeId(host, c.getLocalPort()) : settings.nodeId();
    String url = settings.advertisedUrl().isEmpty() ? "http://" + host + ":" + c.getLocalPort() : settings.advertisedUrl();
    String peerHost = config.getString(ServerConfig.CLUSTER_PEER_HOST);
    if (peerHost.isEmpty() || peerHost.equals("0.0.0.0")) peerHost = host;
    return new NodeInfo(id, url, peerHost, peers == null ? 0 : peers.port(), NodeState.ACTIVE, settings.capacity());
  }

  /**
   * The HTTP settings of both Jetty servers. Jetty's per-connection header cache is an index sized
   * for its whole capacity (~100 bytes per character), held as long as the connection: off by
   * default (see the key's doc).
   */
  private static HttpConfiguration httpConfiguration(ServerConfig config) {
    HttpConfiguration http = new HttpConfiguration();
    http.setSendServerVersion(false);
    http.setHeaderCacheSize(config.getInt(ServerConfig.HTTP_HEADER_CACHE_SIZE));
    return http;
  }

  /**
   * Bounds the open connections of all of {@code jetty}'s connectors: each holds heap (its parser,
   * buffers, the request being read). At the limit the connectors stop accepting (new connections
   * wait in the listen backlog) and idle ones are cut after a tenth of the idle timeout, so that
   * the waiting ones get in.
   */
  private static NetworkConnectionLimit limitConnections(Server jetty, int max, ServerConfig config) {
    NetworkConnectionLimit limit = new NetworkConnectionLimit(max, jetty);
    limit.setEndPointIdleTimeout(Math.max(1000, config.getLong(ServerConfig.HTTP_IDLE_TIMEOUT_MS) / 10));
    jetty.addBean(limit);
    return limit;
  }

  /**
   * A second Jetty server for /ops/ only, with its own small thread pool, so that a health check
   * answers while the API's threads are all busy; /ops/ on the API port keeps working as before.
   * One acceptor and one selector: it serves a few monitoring requests.
   */
  private Server startOpsServer(ServerConfig config, OpsHandlers opsHandlers) throws Exception {
    int port = config.getInt(ServerConfig.OPS_PORT);
    if (port < 0) return null;
    QueuedThreadPool threads = new QueuedThreadPool(config.getInt(ServerConfig.OPS_THREADS_MAX), 2);
    threads.setName("talos-ops");
    Server ops = new Server(threads);
    ServerConnector connector = new ServerConnector(ops, 1, 1, new HttpConnectionFactory(httpConfiguration(config)));
    connector.setHost(config.getString(ServerConfig.HOST));
    connector.setPort(port);
    connector.setIdleTimeout(config.getLong(ServerConfig.HTTP_IDLE_TIMEOUT_MS));
    ops.addConnector(connector);
    limitConnections(ops, config.getInt(ServerConfig.OPS_CONNECTIONS_MAX), config);
    ops.setHandler(opsHandlers.sequence());
    ops.setErrorHandler(new TalosErrorHandler(metrics));
    try {
      ops.start();
    } catch (Exception e) {
      ops.stop();
      throw e;
    }
    return ops;
  }

  /**
   * The handlers of everything that is not the API, on both ports: orphans, the ops REST API,
   * /metrics, the console, health and the JSON metrics dump, then the 404 for anything else.
   */
  private final class OpsHandlers {
    private final TopicDeletions deletions;
    private final HealthChecks healthChecks;
    private final OpsApiHandler.Sources sources;
    private final OpsAdminAuth auth;
    private final Clock clock;
    private final PrometheusMetrics prometheus;

    private final ClusterNode clusterNode;

    OpsHandlers(ServerConfig config, Clock clock, MetadataStore store, PartitionLogs logs, TopicDeletions deletions,
        HealthChecks healthChecks, OpsAdminAuth auth, ClusterNode clusterNode) {
      this.clusterNode = clusterNode;
      this.deletions = deletions;
      this.healthChecks = healthChecks;
      this.auth = auth;
      this.clock = clock;
      this.sources = new OpsApiHandler.Sources(store, logs, new ClusterView.Delegating(() -> clusterView),
          partitionMeters, readinessChecks(config, store, logs), () -> closed ? "the server is shutting down" : null);
      this.prometheus = new PrometheusMetrics(metrics, partitionMeters, store, logs,
          config.getInt(ServerConfig.OPS_METRICS_LABELS_MAX));
    }

    /** New handler instances each call: a Jetty handler belongs to one server. */
    Handler sequence() {
      return new Handler.Sequence(new OrphansHandler(deletions),
          clusterNode != null ? new ClusterOpsHandler(clusterNode) : new Handler.Sequence(),
          new OpsApiHandler(sources, auth, metrics, clock, config.getLong(ServerConfig.CONSUMER_LOCK_TTL_MS),
              config.getInt(ServerConfig.OPS_LIST_MAX_ENTRIES)),
          new MetricsHandler(prometheus, metrics), new ConsoleHandler(metrics), new OpsHandler(metrics, healthChecks),
          new NotFoundHandler(metrics));
    }
  }

  /**
   * The data directory holds the messages and the metadata store the credentials' secret keys:
   * both owner-only (0700) when created; an existing directory keeps its mode.
   */
  private static void createPrivateDirectory(java.nio.file.Path dir) {
    try {
      if (java.nio.file.Files.isDirectory(dir)) return;
      java.nio.file.Files.createDirectories(dir.toAbsolutePath().getParent());
      try {
        java.nio.file.Files.createDirectory(dir, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
            java.nio.file.attribute.PosixFilePermissions.fromString("rwx------")));
      } catch (UnsupportedOperationException e) {
        java.nio.file.Files.createDirectory(dir);
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException("cannot create the metadata directory " + dir, e);
    }
  }

  public static TalosServer start(ServerConfig config) throws Exception {
    return start(config, Clock.systemUTC());
  }

  public static TalosServer start(ServerConfig config, Clock clock) throws Exception {
    return start(config, clock, UnaryOperator.identity());
  }

  /**
   * As {@link #start(ServerConfig, Clock)}, with {@code wrapStore} applied to the metadata store
   * as opened (below the cache): tests use it to observe or fail store calls.
   */
  static TalosServer start(ServerConfig config, Clock clock, UnaryOperator<MetadataStore> wrapStore) throws Exception {
    return start(config, clock, wrapStore, null);
  }

  /**
   * A cluster node: puts and gets are served where {@code routing} says (here, forwarded to their
   * owner through the peer port, or refused PARTITION_NOT_SERVING), and the peer port
   * ({@code cluster.peer.*}, which needs the cluster secret) serves what other nodes forward.
   */
  public static TalosServer start(ServerConfig config, PartitionRouting routing) throws Exception {
    return start(config, Clock.systemUTC(), UnaryOperator.identity(), java.util.Objects.requireNonNull(routing, "routing"));
  }

  static TalosServer start(ServerConfig config, Clock clock, UnaryOperator<MetadataStore> wrapStore,
      PartitionRouting routing) throws Exception {
    TalosServer server = new TalosServer(config, clock, wrapStore, routing);
    LOG.info("Talos server listening on {} with data in {}", server.endpoint(), config.dataDir());
    return server;
  }

  /** {@code store} behind a {@link CachingMetadataStore}, unless the cache is configured off. */
  static MetadataStore cached(ServerConfig config, Clock clock, MetadataStore store) {
    int maxEntries = config.getInt(ServerConfig.METADATA_CACHE_MAX_ENTRIES);
    long ttlMs = config.getLong(ServerConfig.METADATA_CACHE_TTL_MS);
    if (maxEntries == 0 || ttlMs == 0) return store;
    return new CachingMetadataStore(store, maxEntries, ttlMs, () -> TimeUnit.MILLISECONDS.toNanos(clock.millis()));
  }

  private static String storeName(ServerConfig config) {
    return config.getString(ServerConfig.METADATA_STORE).equals("hbase")
        ? "in HBase namespace " + config.getString(ServerConfig.METADATA_HBASE_NAMESPACE)
        + " (quorum " + config.getString(ServerConfig.METADATA_HBASE_ZOOKEEPER_QUORUM) + ")"
        : config.metadataDir().resolve(MvStoreMetadataStore.FILE_NAME).toString();
  }

  /** The metadata store {@code metadata.store} selects. */
  static MetadataStore openMetadata(ServerConfig config) {
    String kind = config.getString(ServerConfig.METADATA_STORE);
    if (!kind.equals("hbase")) {
      createPrivateDirectory(config.metadataDir());
      return MvStoreMetadataStore.open(config.metadataDir());
    }
    String quorum = config.getString(ServerConfig.METADATA_HBASE_ZOOKEEPER_QUORUM);
    if (quorum == null || quorum.isBlank()) {
      throw new ConfigException("Must set " + ServerConfig.METADATA_HBASE_ZOOKEEPER_QUORUM
          + " to use " + ServerConfig.METADATA_STORE + "=hbase.");
    }
    Configuration hbase = new Configuration();
    hbase.set("hbase.zookeeper.quorum", quorum);
    hbase.set("zookeeper.znode.parent", config.getString(ServerConfig.METADATA_HBASE_ZNODE_PARENT));
    long timeoutMs = config.getLong(ServerConfig.METADATA_HBASE_OPERATION_TIMEOUT_MS);
    hbase.setLong("hbase.client.operation.timeout", timeoutMs);
    hbase.setLong("hbase.client.meta.operation.timeout", timeoutMs);
    hbase.setLong("hbase.rpc.timeout", Math.min(timeoutMs, 10_000L));
    config.hbasePassThrough().forEach(hbase::set);
    return HBaseMetadataStore.open(hbase, config.getString(ServerConfig.METADATA_HBASE_NAMESPACE));
  }

  private static PartitionLogs openLogs(ServerConfig config, Clock clock, MetadataStore store) throws IOException {
    Configuration hadoop = new Configuration();
    config.withPrefix(ServerConfig.HADOOP_PREFIX).forEach(hadoop::set);
    URI root = URI.create(config.storageRootUri());
    FileSystem fs = PartitionLogs.fileSystemFor(root, hadoop,
        config.getLong(ServerConfig.STORAGE_LOCAL_PAGE_CACHE_WINDOW_BYTES),
        config.getBoolean(ServerConfig.STORAGE_LOCAL_SEGMENT_PIN_EXTENT_TREE));
    LogConfig logConfig = LogConfig.builder()
        .segmentBytes(config.getLong(ServerConfig.STORAGE_SEGMENT_BYTES))
        .segmentMs(config.getLong(ServerConfig.STORAGE_SEGMENT_MS))
        .indexIntervalBytes(config.getInt(ServerConfig.STORAGE_INDEX_INTERVAL_BYTES))
        .durability(Durability.valueOf(config.getString(ServerConfig.STORAGE_DURABILITY).toUpperCase(Locale.ROOT)))
        // The front end bounds a block by the request size; the log's limit is only a backstop.
        .maxBlockBytes((int) config.getLong(ServerConfig.REQUEST_MAX_BYTES))
        .leaseRecoveryTimeoutMs(config.getLong(ServerConfig.STORAGE_LEASE_RECOVERY_TIMEOUT_MS))
        .readerRefreshMs(config.getLong(ServerConfig.STORAGE_READER_REFRESH_INTERVAL_MS))
        .producerStateMaxProducers(config.getInt(ServerConfig.STORAGE_PRODUCERS_PER_PARTITION_MAX))
        .producerStateExpiryMs(config.getLong(ServerConfig.STORAGE_PRODUCER_EXPIRY_MS))
        .build();
    fs.mkdirs(new Path(root)); // exists from the start: /ops/health probes it
    if (fs instanceof OwnerOnlyLocalFileSystem) {
      java.nio.file.Path dir = java.nio.file.Path.of(root);
      Optional<DataDirMount> mount = DataDirMount.of(dir);
      Optional<BlockBitmapPreload> preload = config.getBoolean(ServerConfig.STORAGE_LOCAL_BLOCK_BITMAPS_PRELOAD)
          ? mount.flatMap(BlockBitmapPreload::of) : Optional.empty();
      mount.ifPresent(m -> m.advice(dir, preload.isPresent()).forEach(a -> LOG.warn("Storage: {}", a)));
      preload.ifPresent(BlockBitmapPreload::start);
    }
    PartitionLogs.Limits limits = new PartitionLogs.Limits(config.getInt(ServerConfig.STORAGE_OPEN_LOGS_MAX),
        config.getInt(ServerConfig.STORAGE_OPEN_FILES_MAX), config.getLong(ServerConfig.STORAGE_OPEN_IDLE_CLOSE_MS),
        config.getInt(ServerConfig.STORAGE_OPEN_THREADS), config.getInt(ServerConfig.STORAGE_OPEN_PENDING_MAX),
        config.getLong(ServerConfig.SCHEDULING_DEADLINE_DEFAULT_MS), config.getInt(ServerConfig.STORAGE_FLUSH_THREADS));
    long tailCacheBytes = ServerConfig.tailCacheBytes(config.getLong(ServerConfig.STORAGE_TAIL_CACHE_BYTES), fs.getUri());
    return new PartitionLogs(fs, new Path(root), logConfig, clock, tailCacheBytes, limits, new MetadataNextOffsets(store));
  }

  /** Partition logs record their next offsets in the metadata store; its failures become I/O errors. */
  private record MetadataNextOffsets(MetadataStore store) implements NextOffsetStore {
    @Override
    public long nextOffset(String topicResourceName, int partitionId) throws IOException {
      try {
        return store.partitionNextOffset(topicResourceName, partitionId).orElse(0);
      } catch (MetadataException e) {
        throw new IOException("cannot read the next offset of partition " + partitionId + " of "
            + topicResourceName + " from the metadata store: " + e.getMessage(), e);
      }
    }

    @Override
    public void raiseNextOffset(String topicResourceName, int partitionId, long nextOffset) throws IOException {
      try {
        store.raisePartitionNextOffset(topicResourceName, partitionId, nextOffset);
      } catch (MetadataException e) {
        throw new IOException("cannot record the next offset of partition " + partitionId + " of "
            + topicResourceName + " in the metadata store: " + e.getMessage(), e);
      }
    }
  }

  /** The request threads' slice policy the scheduling.thread.slice.* keys describe (not started). */
  static ThreadSlicePolicy threadSlices(ServerConfig config) {
    return new ThreadSlicePolicy(config.getInt(ServerConfig.SCHEDULING_THREAD_SLICE_US),
        ThreadSlicePolicy.When.named(config.getString(ServerConfig.SCHEDULING_THREAD_SLICE_WHEN)),
        config.getInt(ServerConfig.SCHEDULING_THREAD_SLICE_MACHINE_BUSY_MIN_PERCENT) / 100.0,
        config.getInt(ServerConfig.SCHEDULING_THREAD_SLICE_PROCESS_CPU_MAX_PERCENT) / 100.0, new OsCpuUse(),
        config.getLong(ServerConfig.SCHEDULING_THREAD_SLICE_CHECK_INTERVAL_MS));
  }

  static PoolConfig poolConfig(ServerConfig config, ThreadSlicePolicy threadSlices) {
    return PoolConfig.builder()
        .workers(config.getInt(ServerConfig.SCHEDULING_WORKERS))
        .selector(WorkerSelector.named(config.getString(ServerConfig.SCHEDULING_SELECTOR)))
        .maxWaitingTasks(config.getInt(ServerConfig.SCHEDULING_MAX_WAITING_TASKS))
        .priorityClasses(config.getString(ServerConfig.SCHEDULING_PRIORITY_CLASSES).split(","))
        .maxBatchCount(config.getInt(ServerConfig.SCHEDULING_BATCH_MAX_COUNT))
        .maxLentRuns(config.getInt(ServerConfig.SCHEDULING_INLINE_RUNS_MAX))
        .maxBatchBytes(config.getLong(ServerConfig.SCHEDULING_BATCH_MAX_BYTES))
        .defaultDeadlineMs(config.getLong(ServerConfig.SCHEDULING_DEADLINE_DEFAULT_MS))
        .threadSlices(threadSlices)
        .build();
  }

  /**
   * /ops/health: the metadata store answers a read, the storage root answers a status call, and
   * open file descriptors are below {@code ops.health.fd.used.max.percent} of the limit.
   */
  static HealthChecks healthChecks(ServerConfig config, MetadataStore store, PartitionLogs logs) {
    int fdPercent = config.getInt(ServerConfig.OPS_HEALTH_FD_USED_MAX_PERCENT);
    return readinessChecks(config, store, logs)
        .add("file-descriptors", HealthChecks.fileDescriptors(HealthChecks::openFileDescriptors,
            HealthChecks::maxFileDescriptors, fdPercent));
  }

  /**
   * /ops/ready: the metadata store answers a read and the storage root a status call (the cluster
   * layer adds ZooKeeper).
   */
  static HealthChecks readinessChecks(ServerConfig config, MetadataStore store, PartitionLogs logs) {
    Path root = new Path(URI.create(config.storageRootUri()));
    return new HealthChecks(config.getLong(ServerConfig.OPS_HEALTH_PROBE_TIMEOUT_MS))
        .add("metadata", () -> {
          // The store's own view first (the embedded store knows when it failed and is reopening).
          Optional<String> broken = store.probe();
          if (broken.isPresent()) return broken.get();
          // A read of a key no topic uses: goes to the store (caches hold only what exists).
          store.committedOffset("__talos_health", "__talos_health", 0);
          return null;
        })
        .add("storage", () -> logs.fileSystem().getFileStatus(root).isDirectory() ? null
            : "storage root " + root + " is not a directory");
  }

  private void runRetention(MetadataStore store, PartitionLogs partitionLogs) {
    try {
      Map<String, Long> retentionMs = store.topics().stream()
          .collect(Collectors.toMap(TopicRecord::resourceName, t -> t.retentionSecs() * 1000L));
      partitionLogs.runRetentionOnce(retentionMs::get);
    } catch (RuntimeException e) {
      LOG.warn("retention pass failed; will retry", e);
    }
  }

  /** The API's base URI: plain HTTP when enabled, else https. */
  public URI endpoint() {
    ServerConnector c = (ServerConnector) jetty.getConnectors()[0];
    String host = c.getHost() == null || c.getHost().equals("0.0.0.0") ? "127.0.0.1" : c.getHost();
    return URI.create((HTTP_CONNECTOR.equals(c.getName()) ? "http" : "https") + "://" + host + ":" + c.getLocalPort());
  }

  /** The API's https base URI (server.tls.port), or null when TLS is off. */
  public URI tlsEndpoint() {
    for (org.eclipse.jetty.server.Connector connector : jetty.getConnectors()) {
      if (TlsConnector.NAME.equals(connector.getName())) {
        ServerConnector c = (ServerConnector) connector;
        String host = c.getHost() == null || c.getHost().equals("0.0.0.0") ? "127.0.0.1" : c.getHost();
        return URI.create("https://" + host + ":" + c.getLocalPort());
      }
    }
    return null;
  }

  /** The ops listener's base URI (server.ops.port), or null when it is disabled. */
  public URI opsEndpoint() {
    if (opsJetty == null) return null;
    ServerConnector c = (ServerConnector) opsJetty.getConnectors()[0];
    String host = c.getHost() == null || c.getHost().equals("0.0.0.0") ? "127.0.0.1" : c.getHost();
    return URI.create("http://" + host + ":" + c.getLocalPort());
  }

  public int port() {
    return ((ServerConnector) jetty.getConnectors()[0]).getLocalPort();
  }

  public Credential adminCredential() {
    return admin.credential();
  }

  /** Whether this start created the admin credential (the first start on this data directory). */
  public boolean adminCredentialCreated() {
    return admin.created();
  }

  /** The peer port's local port, or -1 when this node is not in cluster mode. */
  public int peerPort() {
    return peerServer == null ? -1 : peerServer.port();
  }

  public MetricRegistry metrics() {
    return metrics;
  }

  /** Per-partition put/get meters (ops API rates, /metrics). */
  public PartitionMeters partitionMeters() {
    return partitionMeters;
  }

  /** Replaces what the ops API reports about nodes and partition owners (the cluster layer's view). */
  public void clusterView(ClusterView view) {
    this.clusterView = java.util.Objects.requireNonNull(view, "view");
  }

  public ServerConfig config() {
    return config;
  }

  public MetadataStore metadata() {
    return metadata;
  }

  /**
   * Where each partition is served: {@link PartitionRouting#singleNode} for a single server, the
   * cluster assignment with cluster.enabled (available from construction; NOT_SERVING everywhere
   * until the node has joined).
   */
  public PartitionRouting routing() {
    return routing;
  }

  /** This node's partition logs. */
  PartitionLogs partitionLogs() {
    return logs;
  }

  /** The task pool every API call (local or forwarded here) runs in; tests queue their own tasks. */
  TaskPool taskPool() {
    return pool;
  }

  /** This node's part in the cluster, or null without cluster.enabled. */
  public ClusterNode cluster() {
    return cluster;
  }

  /**
   * Like a killed process, for tests: leaves the cluster (the ZooKeeper session ends) and stops
   * answering, without draining and without closing its partition logs (segments stay open, their
   * leases held by this process's file-system client, until the next owner recovers them).
   */
  void crash() {
    synchronized (this) {
      if (closed) return;
      closed = true;
    }
    if (cluster != null) cluster.close();
    pool.close();
    try {
      jetty.stop();
      if (opsJetty != null) opsJetty.stop();
    } catch (Exception e) {
      LOG.warn("stopping the front-end failed", e);
    }
    maintenance.shutdownNow();
    metadata.close();
  }

  @Override
  public synchronized void close() {
    if (closed) return;
    closed = true;
    // A cluster node drains first (DelayRemoved): new requests are refused at once (retriable),
    // its partitions move to the other nodes without the reassign delay, and the puts it
    // accepted (served here or forwarded to their owner) are answered before anything closes,
    // up to cluster.drain.timeout.ms. A node with a given routing (no membership) does the same
    // without the membership part.
    if (cluster != null) {
      cluster.drain();
    } else if (peerClients != null) {
      api.stopAccepting();
      awaitAnswered(api, pool, config.getLong(ServerConfig.CLUSTER_DRAIN_TIMEOUT_MS));
    }
    // The pool first: waiting tasks are answered "shutting down, retry" and running ones finish,
    // so Jetty's stop finds no request still waiting for a worker.
    pool.close();
    if (peerServer != null) peerServer.close();
    if (peerClients != null) {
      // Forwards still waiting (the drain's bound passed) fail here: answered REQUEST_PROCESS_TIMEOUT
      // if sent ("may or may not have been served"), PARTITION_NOT_SERVING if not; those answers
      // are written before Jetty closes the connections.
      peerClients.close();
      try {
        api.awaitPutsAnswered(ABANDONED_ANSWERS_WAIT_MS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    try {
      jetty.stop();
    } catch (Exception e) {
      LOG.warn("stopping the HTTP front-end failed", e);
    }
    if (opsJetty != null) {
      try {
        opsJetty.stop();
      } catch (Exception e) {
        LOG.warn("stopping the ops listener failed", e);
      }
    }
    maintenance.shutdownNow();
    threadSlices.close();
    if (cluster != null) cluster.close();
    logs.close();
    try {
      logs.fileSystem().close(); // a new instance per server (PartitionLogs.fileSystemFor)
    } catch (IOException e) {
      LOG.warn("closing the storage file system failed", e);
    }
    try {
      metadata.close();
    } catch (io.talos.server.metadata.MetadataException e) {
      // Every metadata change was durable when its call returned; what a failed close loses is
      // housekeeping (the embedded store's compaction), and the next start recovers as after a
      // crash. The shutdown goes on, as past the other resources above.
      LOG.warn("closing the metadata store failed; nothing acknowledged is lost", e);
    }
    LOG.info("Talos server stopped");
  }

  /** Last handler: a JSON 404 (counted) for paths that are neither the API, ops, /metrics nor the console. */
  private static final class NotFoundHandler extends Handler.Abstract {
    private final MetricRegistry metrics;

    NotFoundHandler(MetricRegistry metrics) {
      this.metrics = metrics;
    }

    @Override
    public boolean handle(org.eclipse.jetty.server.Request request, org.eclipse.jetty.server.Response response,
        org.eclipse.jetty.util.Callback callback) {
      metrics.meter("http.status.404").mark();
      response.setStatus(404);
      response.getHeaders().put(org.eclipse.jetty.http.HttpHeader.CONTENT_TYPE, "application/json");
      String message = "no such path " + request.getHttpURI().getPath() + "; the API is POST " + ApiHandler.API_PREFIX
          + "{topic,message,consumer,quota,credential,cluster}; ops: GET /ops/{health,ready,nodes,topics,groups,metrics,orphans},"
          + " /metrics, /console/";
      response.write(true, java.nio.ByteBuffer.wrap(("{\"status\":404,\"error\":"
          + com.fasterxml.jackson.databind.node.TextNode.valueOf(message) + "}\n")
          .getBytes(java.nio.charset.StandardCharsets.UTF_8)), callback);
      return true;
    }
  }
}
