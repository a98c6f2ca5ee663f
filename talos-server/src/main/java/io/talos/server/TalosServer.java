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
import io.talos.server.metadata.CachingMetadataStore;
import io.talos.server.frontend.TalosErrorHandler;
import io.talos.server.metadata.Credential;
import io.talos.server.metadata.HBaseMetadataStore;
import io.talos.server.metadata.MetadataException;
import io.talos.server.metadata.MetadataStore;
import io.talos.server.metadata.MvStoreMetadataStore;
import io.talos.server.metadata.TopicRecord;
import io.talos.server.ops.HealthChecks;
import io.talos.server.ops.OpsHandler;
import io.talos.server.ops.OrphansHandler;
import io.talos.server.scheduling.PoolConfig;
import io.talos.server.scheduling.TaskPool;
import io.talos.server.scheduling.WorkerSelector;
import io.talos.server.service.ConsumerServiceHandler;
import io.talos.server.service.MessageBlockValidator;
import io.talos.server.service.MessageServiceHandler;
import io.talos.server.service.CredentialServiceHandler;
import io.talos.server.service.QuotaServiceHandler;
import io.talos.server.service.TopicDeletions;
import io.talos.server.service.TopicServiceHandler;
import io.talos.server.service.Topics;
import io.talos.server.storage.Durability;
import io.talos.server.storage.LogConfig;
import io.talos.server.storage.NextOffsetStore;
import io.talos.server.storage.PartitionLogs;
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

  private final ServerConfig config;
  private final MetricRegistry metrics = new MetricRegistry();
  private final MetadataStore metadata;
  private final PartitionLogs logs;
  private final Server jetty;
  /** The ops listener on its own port and threads (server.ops.port), or null when disabled. */
  private final Server opsJetty;
  private final TaskPool pool;
  private final ScheduledExecutorService maintenance;
  private final AdminCredentials.Result admin;
  /** Where partitions are served: the cluster's routing, or every partition here (single node). */
  private volatile PartitionRouting routing;
  /** The peer port and the per-peer client pools: cluster mode only, else null. */
  private final PeerServer peerServer;
  private final PeerClients peerClients;
  private volatile boolean closed;

  private TalosServer(ServerConfig config, Clock clock, UnaryOperator<MetadataStore> wrapStore,
      PartitionRouting clusterRouting) throws Exception {
    this.config = config;
    createPrivateDirectory(config.dataDir());
    MetadataStore store = cached(config, clock, wrapStore.apply(openMetadata(config)));
    PartitionLogs partitionLogs = null;
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
      TopicDeletions topicDeletions = new TopicDeletions(store, partitionLogs, clock);
      topicDeletions.runOnce(); // finishes deletions interrupted by the last stop
      metrics.register("storage.orphan.topics", (Gauge<Integer>) () -> topicDeletions.orphans().size());
      final PartitionLogs gauged = partitionLogs;
      metrics.register("storage.open.logs", (Gauge<Integer>) gauged::openLogCount);
      metrics.register("storage.open.files", (Gauge<Integer>) gauged::openFileCount);
      metrics.register("storage.opened.logs", (Gauge<Integer>) gauged::openedLogs);
      metrics.register("storage.evicted.logs", (Gauge<Integer>) gauged::evictedLogs);

      Topics topics = new Topics(store);
      MessageServiceHandler messageHandler = new MessageServiceHandler(topics, partitionLogs, clock,
          new MessageBlockValidator(MessageBlockValidator.Mode.valueOf(
              config.getString(ServerConfig.MESSAGE_BLOCK_VALIDATION).toUpperCase(Locale.ROOT)),
              config.getInt(ServerConfig.MESSAGE_MAX_BYTES),
              config.getLong(ServerConfig.MESSAGE_BLOCK_UNCOMPRESSED_MAX_BYTES)),
          config.getInt(ServerConfig.GET_MAX_MESSAGES), config.getInt(ServerConfig.GET_MAX_BYTES));
      taskPool = TaskPool.create(poolConfig(config), clock, metrics, true);
      Map<String, ApiHandler.Service> services = Map.of(
          "topic", new ApiHandler.Service(ErrorBoundary.wrap(TopicService.Iface.class,
              new TopicServiceHandler(topics, partitionLogs, topicDeletions, clock, config.getInt(ServerConfig.TOPIC_PARTITIONS_MAX),
                  config.getInt(ServerConfig.TOPIC_RETENTION_SECS_DEFAULT),
                  config.getInt(ServerConfig.TOPIC_RETENTION_SECS_MIN)), metrics),
              new TopicService.Processor<>(null).getProcessMapView()),
          "message", new ApiHandler.Service(ErrorBoundary.wrap(MessageService.Iface.class, messageHandler, metrics),
              new MessageService.Processor<>(null).getProcessMapView()),
          "consumer", new ApiHandler.Service(ErrorBoundary.wrap(ConsumerService.Iface.class,
              new ConsumerServiceHandler(topics, clock, config.getLong(ServerConfig.CONSUMER_LOCK_TTL_MS)), metrics),
              new ConsumerService.Processor<>(null).getProcessMapView()),
          "quota", new ApiHandler.Service(ErrorBoundary.wrap(QuotaService.Iface.class,
              new QuotaServiceHandler(), metrics),
              new QuotaService.Processor<>(null).getProcessMapView()),
          "credential", new ApiHandler.Service(ErrorBoundary.wrap(CredentialService.Iface.class,
              new CredentialServiceHandler(store, clock, config.getLong(ServerConfig.AUTH_CREDENTIAL_ROTATION_GRACE_MS),
                  config.getLong(ServerConfig.AUTH_CREDENTIAL_ROTATION_GRACE_MAX_MS),
                  config.getInt(ServerConfig.AUTH_CREDENTIALS_MAX)), metrics),
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
      QueuedThreadPool threads = new QueuedThreadPool(config.getInt(ServerConfig.HTTP_THREADS_MAX));
      threads.setName("talos-http");
      server = new Server(threads);
      HttpConfiguration http = new HttpConfiguration();
      http.setSendServerVersion(false);
      ServerConnector connector = new ServerConnector(server, new HttpConnectionFactory(http));
      connector.setHost(config.getString(ServerConfig.HOST));
      connector.setPort(config.getInt(ServerConfig.PORT));
      // Cuts connections that stop sending, a body included (RequestBodyReader answers 408).
      connector.setIdleTimeout(config.getLong(ServerConfig.HTTP_IDLE_TIMEOUT_MS));
      server.addConnector(connector);
      HealthChecks healthChecks = healthChecks(config, store, partitionLogs);
      ApiHandler api = new ApiHandler(services, authenticator, clock, maxRequest, metrics, taskPool,
              config.getLong(ServerConfig.SCHEDULING_MAX_WAITING_BYTES), messageHandler, replayGuard,
              new ApiHandler.BodyLimits(config.getLong(ServerConfig.REQUEST_BODY_MIN_BYTES_PER_SEC),
                  config.getLong(ServerConfig.REQUEST_BODY_RATE_GRACE_MS), inflightMax,
                  config.getLong(ServerConfig.REQUEST_EARLY_ANSWER_DRAIN_MAX_BYTES)),
              ArgumentLimits.from(config), config.getInt(ServerConfig.STORAGE_IO_THREADS),
              new AuditLog(clock, config.getLong(ServerConfig.AUDIT_AUTH_FAILURE_INTERVAL_MS),
                  config.getInt(ServerConfig.AUDIT_AUTH_FAILURE_KEYS_MAX)));
      if (clusterRouting != null) {
        // Cluster mode: the peer port (forwarded requests in) and the client pools (out).
        ClusterSecret secret = ClusterSecret.from(config);
        int maxFrame = config.getInt(ServerConfig.CLUSTER_PEER_MAX_FRAME_BYTES);
        if (maxFrame < maxRequest + 64 * 1024L) {
          throw new ConfigException(ServerConfig.CLUSTER_PEER_MAX_FRAME_BYTES + " (" + maxFrame + ") must be at least "
              + ServerConfig.REQUEST_MAX_BYTES + " (" + maxRequest + ") + 65536: a forwarded request must fit in a frame");
        }
        clients = new PeerClients(clusterRouting.localNode().id(), secret, new PeerClient.Settings(
            config.getInt(ServerConfig.CLUSTER_PEER_CLIENT_THREADS), config.getInt(ServerConfig.CLUSTER_PEER_CLIENT_CONNECTIONS),
            config.getInt(ServerConfig.CLUSTER_PEER_CLIENT_PENDING_MAX), config.getBoolean(ServerConfig.CLUSTER_PEER_CLIENT_MERGE),
            config.getLong(ServerConfig.CLUSTER_PEER_CONNECT_TIMEOUT_MS), maxFrame), metrics);
        api.cluster(clusterRouting, clients, config.getLong(ServerConfig.CLUSTER_PEER_REQUEST_TIMEOUT_MS));
        peers = new PeerServer(config.getString(ServerConfig.CLUSTER_PEER_HOST), config.getInt(ServerConfig.CLUSTER_PEER_PORT),
            config.getInt(ServerConfig.CLUSTER_PEER_SERVER_THREADS), maxFrame,
            config.getLong(ServerConfig.CLUSTER_PEER_HANDSHAKE_TIMEOUT_MS), secret, api, metrics);
      }
      server.setHandler(new Handler.Sequence(
          api,
          new OrphansHandler(topicDeletions),
          new OpsHandler(metrics, healthChecks),
          new NotFoundHandler()));
      // Errors Jetty answers itself (bad URI, 413/414/431, a handler that threw) in the
      // endpoint's language: JSON under /ops, a Thrift exception elsewhere; never an HTML page.
      server.setErrorHandler(new TalosErrorHandler(metrics));
      // Single node: every partition here; the API URL is known once the connector is bound.
      this.routing = clusterRouting != null ? clusterRouting : PartitionRouting.singleNode(new NodeInfo("local",
          "http://" + config.getString(ServerConfig.HOST) + ":" + config.getInt(ServerConfig.PORT), null, -1, NodeState.ACTIVE, 1));
      server.start();
      if (clusterRouting == null) {
        String host = connector.getHost() == null || connector.getHost().equals("0.0.0.0") ? "127.0.0.1" : connector.getHost();
        this.routing = PartitionRouting.singleNode(new NodeInfo("local", "http://" + host + ":" + connector.getLocalPort(),
            null, -1, NodeState.ACTIVE, 1));
      }
      opsServer = startOpsServer(config, topicDeletions, healthChecks);

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
    this.peerServer = peers;
    this.peerClients = clients;
  }

  /**
   * A second Jetty server for /ops/ only, with its own small thread pool, so that a health check
   * answers while the API's threads are all busy; /ops/ on the API port keeps working as before.
   * One acceptor and one selector: it serves a few monitoring requests.
   */
  private Server startOpsServer(ServerConfig config, TopicDeletions topicDeletions,
      HealthChecks healthChecks) throws Exception {
    int port = config.getInt(ServerConfig.OPS_PORT);
    if (port < 0) return null;
    QueuedThreadPool threads = new QueuedThreadPool(config.getInt(ServerConfig.OPS_THREADS_MAX), 2);
    threads.setName("talos-ops");
    Server ops = new Server(threads);
    HttpConfiguration http = new HttpConfiguration();
    http.setSendServerVersion(false);
    ServerConnector connector = new ServerConnector(ops, 1, 1, new HttpConnectionFactory(http));
    connector.setHost(config.getString(ServerConfig.HOST));
    connector.setPort(port);
    connector.setIdleTimeout(config.getLong(ServerConfig.HTTP_IDLE_TIMEOUT_MS));
    ops.addConnector(connector);
    ops.setHandler(new Handler.Sequence(new OrphansHandler(topicDeletions), new OpsHandler(metrics, healthChecks),
        new NotFoundHandler()));
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
    FileSystem fs = PartitionLogs.fileSystemFor(root, hadoop);
    LogConfig logConfig = LogConfig.builder()
        .segmentBytes(config.getLong(ServerConfig.STORAGE_SEGMENT_BYTES))
        .segmentMs(config.getLong(ServerConfig.STORAGE_SEGMENT_MS))
        .indexIntervalBytes(config.getInt(ServerConfig.STORAGE_INDEX_INTERVAL_BYTES))
        .durability(Durability.valueOf(config.getString(ServerConfig.STORAGE_DURABILITY).toUpperCase(Locale.ROOT)))
        // The front end bounds a block by the request size; the log's limit is only a backstop.
        .maxBlockBytes((int) config.getLong(ServerConfig.REQUEST_MAX_BYTES))
        .leaseRecoveryTimeoutMs(config.getLong(ServerConfig.STORAGE_LEASE_RECOVERY_TIMEOUT_MS))
        .readerRefreshMs(config.getLong(ServerConfig.STORAGE_READER_REFRESH_INTERVAL_MS))
        .build();
    fs.mkdirs(new Path(root)); // exists from the start: /ops/health probes it
    PartitionLogs.Limits limits = new PartitionLogs.Limits(config.getInt(ServerConfig.STORAGE_OPEN_LOGS_MAX),
        config.getInt(ServerConfig.STORAGE_OPEN_FILES_MAX), config.getLong(ServerConfig.STORAGE_OPEN_IDLE_CLOSE_MS),
        config.getInt(ServerConfig.STORAGE_OPEN_THREADS), config.getInt(ServerConfig.STORAGE_OPEN_PENDING_MAX),
        config.getLong(ServerConfig.SCHEDULING_DEADLINE_DEFAULT_MS));
    return new PartitionLogs(fs, new Path(root), logConfig, clock, config.getLong(ServerConfig.STORAGE_TAIL_CACHE_BYTES),
        limits, new MetadataNextOffsets(store));
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

  static PoolConfig poolConfig(ServerConfig config) {
    return PoolConfig.builder()
        .workers(config.getInt(ServerConfig.SCHEDULING_WORKERS))
        .selector(WorkerSelector.named(config.getString(ServerConfig.SCHEDULING_SELECTOR)))
        .maxWaitingTasks(config.getInt(ServerConfig.SCHEDULING_MAX_WAITING_TASKS))
        .priorityClasses(config.getString(ServerConfig.SCHEDULING_PRIORITY_CLASSES).split(","))
        .maxBatchCount(config.getInt(ServerConfig.SCHEDULING_BATCH_MAX_COUNT))
        .maxBatchBytes(config.getLong(ServerConfig.SCHEDULING_BATCH_MAX_BYTES))
        .defaultDeadlineMs(config.getLong(ServerConfig.SCHEDULING_DEADLINE_DEFAULT_MS))
        .build();
  }

  /**
   * /ops/health: the metadata store answers a read, the storage root answers a status call, and
   * open file descriptors are below {@code ops.health.fd.used.max.percent} of the limit.
   */
  static HealthChecks healthChecks(ServerConfig config, MetadataStore store, PartitionLogs logs) {
    int fdPercent = config.getInt(ServerConfig.OPS_HEALTH_FD_USED_MAX_PERCENT);
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
            : "storage root " + root + " is not a directory")
        .add("file-descriptors", HealthChecks.fileDescriptors(HealthChecks::openFileDescriptors,
            HealthChecks::maxFileDescriptors, fdPercent));
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

  public URI endpoint() {
    ServerConnector c = (ServerConnector) jetty.getConnectors()[0];
    String host = c.getHost() == null || c.getHost().equals("0.0.0.0") ? "127.0.0.1" : c.getHost();
    return URI.create("http://" + host + ":" + c.getLocalPort());
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

  /** Where this node serves partitions (single node: every partition here, version 0). */
  public PartitionRouting routing() {
    return routing;
  }

  /** The peer port's local port, or -1 when this node is not in cluster mode. */
  public int peerPort() {
    return peerServer == null ? -1 : peerServer.port();
  }

  public MetricRegistry metrics() {
    return metrics;
  }

  public ServerConfig config() {
    return config;
  }

  public MetadataStore metadata() {
    return metadata;
  }

  @Override
  public synchronized void close() {
    if (closed) return;
    closed = true;
    // The pool first: waiting tasks are answered "shutting down, retry" and running ones finish,
    // so Jetty's stop finds no request still waiting for a worker.
    pool.close();
    if (peerServer != null) peerServer.close();
    if (peerClients != null) peerClients.close();
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
    logs.close();
    try {
      logs.fileSystem().close(); // a new instance per server (PartitionLogs.fileSystemFor)
    } catch (IOException e) {
      LOG.warn("closing the storage file system failed", e);
    }
    metadata.close();
    LOG.info("Talos server stopped");
  }

  /** Last handler: a plain 404 for paths that are neither the API nor ops. */
  private static final class NotFoundHandler extends Handler.Abstract {
    @Override
    public boolean handle(org.eclipse.jetty.server.Request request, org.eclipse.jetty.server.Response response,
        org.eclipse.jetty.util.Callback callback) {
      response.setStatus(404);
      response.getHeaders().put(org.eclipse.jetty.http.HttpHeader.CONTENT_TYPE, "text/plain; charset=utf-8");
      response.write(true, java.nio.ByteBuffer.wrap(("no such path " + request.getHttpURI().getPath()
          + "; the API is POST " + ApiHandler.API_PREFIX + "{topic,message,consumer,quota,credential,cluster}, ops is GET /ops/{health,metrics,orphans}\n")
          .getBytes(java.nio.charset.StandardCharsets.UTF_8)), callback);
      return true;
    }
  }
}
