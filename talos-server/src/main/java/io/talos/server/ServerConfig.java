package io.talos.server;

import io.talos.common.config.ConfigDef;
import io.talos.common.config.ConfigDef.Type;
import io.talos.common.config.ConfigDef.Validator;
import io.talos.common.config.TalosConfig;
import io.talos.server.scheduling.PoolConfig;
import io.talos.server.scheduling.ThreadSlice;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

/**
 * Every server configuration key, declared once: name, type, default, validation, doc line.
 * {@code conf/talos.properties} lists them all at their defaults (ServerConfigTest keeps the two
 * in step). Keys under {@code hadoop.} are passed to the Hadoop FileSystem configuration with the
 * prefix removed.
 */
public final class ServerConfig extends TalosConfig {
  public static final String HOST = "server.host";
  public static final String PORT = "server.port";
  public static final String DATA_DIR = "server.data.dir";
  public static final String HTTP_THREADS_MAX = "server.http.threads.max";
  public static final String REQUEST_MAX_BYTES = "server.request.max.bytes";
  public static final String HTTP_IDLE_TIMEOUT_MS = "server.http.idle.timeout.ms";
  public static final String HTTP_CONNECTIONS_MAX = "server.http.connections.max";
  public static final String HTTP_HEADER_CACHE_SIZE = "server.http.header.cache.size";
  public static final String REQUEST_BODY_MIN_BYTES_PER_SEC = "server.request.body.min.bytes.per.sec";
  public static final String REQUEST_BODY_RATE_GRACE_MS = "server.request.body.rate.grace.ms";
  public static final String REQUEST_BODY_INFLIGHT_MAX_BYTES = "server.request.body.inflight.max.bytes";
  public static final String REQUEST_EARLY_ANSWER_DRAIN_MAX_BYTES = "server.request.early.answer.drain.max.bytes";
  public static final String OPS_PORT = "server.ops.port";
  public static final String OPS_THREADS_MAX = "server.ops.threads.max";
  public static final String OPS_CONNECTIONS_MAX = "server.ops.connections.max";
  public static final String REQUEST_CONTAINER_MAX_LENGTH = "server.request.container.max.length";
  public static final String REQUEST_NESTING_MAX_DEPTH = "server.request.nesting.max.depth";
  public static final String REQUEST_NAME_MAX_CHARS = "request.name.max.chars";
  public static final String REQUEST_STRING_MAX_CHARS = "request.string.max.chars";
  public static final String REQUEST_PARTITION_LIST_MAX_ENTRIES = "request.partition.list.max.entries";
  public static final String REQUEST_PUT_BLOCKS_MAX_COUNT = "request.put.blocks.max.count";
  public static final String REQUEST_MAP_MAX_ENTRIES = "request.map.max.entries";
  public static final String AUTH_CLOCK_SKEW_MAX_MS = "auth.clock.skew.max.ms";
  public static final String AUTH_CLOCK_SKEW_FUTURE_MAX_MS = "auth.clock.skew.future.max.ms";
  public static final String AUTH_REPLAY_MAX_ENTRIES = "auth.replay.max.entries";
  public static final String ADMIN_CREDENTIAL_FILE = "auth.admin.credential.file";
  public static final String AUTH_CREDENTIAL_ROTATION_GRACE_MS = "auth.credential.rotation.grace.ms";
  public static final String AUTH_CREDENTIAL_ROTATION_GRACE_MAX_MS = "auth.credential.rotation.grace.max.ms";
  public static final String AUTH_CREDENTIALS_MAX = "auth.credentials.max";
  public static final String AUTH_CREDENTIALS_PER_ACCOUNT_MAX = "auth.credentials.per.account.max";
  public static final String ACL_GRANTS_MAX = "acl.grants.max";
  public static final String AUDIT_AUTH_FAILURE_INTERVAL_MS = "audit.auth.failure.interval.ms";
  public static final String AUDIT_AUTH_FAILURE_KEYS_MAX = "audit.auth.failure.keys.max";
  public static final String QUOTA_PARTITION_PUT_BYTES_PER_SEC = "quota.partition.put.bytes.per.sec";
  public static final String QUOTA_PARTITION_GET_BYTES_PER_SEC = "quota.partition.get.bytes.per.sec";
  public static final String QUOTA_BURST_MS = "quota.burst.ms";
  public static final String QUOTA_THROTTLE_MAX_DELAY_MS = "quota.throttle.max.delay.ms";
  public static final String QUOTA_BUCKETS_MAX = "quota.buckets.max";
  public static final String QUOTA_BYTES_PER_SEC_MAX = "quota.bytes.per.sec.max";
  public static final String QUOTA_REQUESTS_PER_SEC_MAX = "quota.requests.per.sec.max";
  public static final String QUOTA_TOPICS_MAX = "quota.topics.max";
  public static final String QUOTA_SHARE = "quota.share";
  public static final String HTTP_ENABLED = "server.http.enabled";
  public static final String HTTP_REDIRECT_HTTPS = "server.http.redirect.https";
  public static final String TLS_PORT = "server.tls.port";
  public static final String TLS_KEYSTORE_PATH = "server.tls.keystore.path";
  public static final String TLS_KEYSTORE_PASSWORD = "server.tls.keystore.password";
  public static final String TLS_KEYSTORE_TYPE = "server.tls.keystore.type";
  public static final String TLS_TRUSTSTORE_PATH = "server.tls.truststore.path";
  public static final String TLS_TRUSTSTORE_PASSWORD = "server.tls.truststore.password";
  public static final String TLS_CLIENT_AUTH = "server.tls.client.auth";

  public static final String CLUSTER_PEER_HOST = "cluster.peer.host";
  public static final String CLUSTER_PEER_PORT = "cluster.peer.port";
  public static final String CLUSTER_PEER_SECRET = "cluster.peer.secret";
  public static final String CLUSTER_PEER_SECRET_FILE = "cluster.peer.secret.file";
  public static final String CLUSTER_PEER_SERVER_THREADS = "cluster.peer.server.threads";
  public static final String CLUSTER_PEER_CLIENT_THREADS = "cluster.peer.client.threads";
  public static final String CLUSTER_PEER_CLIENT_CONNECTIONS = "cluster.peer.client.connections";
  public static final String CLUSTER_PEER_CLIENT_PENDING_MAX = "cluster.peer.client.pending.max";
  public static final String CLUSTER_PEER_CLIENT_MERGE = "cluster.peer.client.merge";
  public static final String CLUSTER_PEER_CONNECT_TIMEOUT_MS = "cluster.peer.connect.timeout.ms";
  public static final String CLUSTER_PEER_HANDSHAKE_TIMEOUT_MS = "cluster.peer.handshake.timeout.ms";
  public static final String CLUSTER_PEER_REQUEST_TIMEOUT_MS = "cluster.peer.request.timeout.ms";
  public static final String CLUSTER_PEER_MAX_FRAME_BYTES = "cluster.peer.max.frame.bytes";

  public static final String STORAGE_ROOT_URI = "storage.root.uri";
  public static final String STORAGE_DURABILITY = "storage.durability";
  public static final String STORAGE_SEGMENT_BYTES = "storage.segment.bytes";
  public static final String STORAGE_SEGMENT_MS = "storage.segment.ms";
  public static final String STORAGE_INDEX_INTERVAL_BYTES = "storage.index.interval.bytes";
  public static final String STORAGE_RETENTION_CHECK_INTERVAL_MS = "storage.retention.check.interval.ms";
  public static final String STORAGE_TAIL_CACHE_BYTES = "storage.tail.cache.bytes";
  public static final String STORAGE_LOCAL_PAGE_CACHE_WINDOW_BYTES = "storage.local.page.cache.window.bytes";
  public static final String STORAGE_LOCAL_SEGMENT_PIN_EXTENT_TREE = "storage.local.segment.pin.extent.tree";
  public static final String STORAGE_LOCAL_BLOCK_BITMAPS_PRELOAD = "storage.local.block.bitmaps.preload";
  /** {@link #STORAGE_TAIL_CACHE_BYTES}: chosen by storage (see {@link #tailCacheBytes}). */
  public static final long TAIL_CACHE_AUTO = -1;
  /** {@link #STORAGE_TAIL_CACHE_BYTES} chosen for HDFS. */
  public static final long TAIL_CACHE_HDFS_BYTES = 64L * 1024 * 1024;
  public static final String STORAGE_LEASE_RECOVERY_TIMEOUT_MS = "storage.lease.recovery.timeout.ms";
  public static final String STORAGE_READER_REFRESH_INTERVAL_MS = "storage.reader.refresh.interval.ms";
  public static final String STORAGE_PRODUCERS_PER_PARTITION_MAX = "storage.idempotence.producers.per.partition.max";
  public static final String STORAGE_PRODUCER_EXPIRY_MS = "storage.idempotence.producer.expiry.ms";
  public static final String STORAGE_ORPHAN_DATA_ACCEPT = "storage.orphan.data.accept";
  public static final String STORAGE_TOPIC_DELETION_CHECK_INTERVAL_MS = "storage.topic.deletion.check.interval.ms";
  public static final String STORAGE_OPEN_LOGS_MAX = "storage.open.logs.max";
  public static final String STORAGE_OPEN_FILES_MAX = "storage.open.files.max";
  public static final String STORAGE_OPEN_IDLE_CLOSE_MS = "storage.open.idle.close.ms";
  public static final String STORAGE_OPEN_SWEEP_INTERVAL_MS = "storage.open.sweep.interval.ms";
  public static final String STORAGE_OPEN_THREADS = "storage.open.threads";
  public static final String STORAGE_OPEN_PENDING_MAX = "storage.open.pending.max";
  public static final String STORAGE_FLUSH_THREADS = "storage.flush.threads";
  public static final String STORAGE_IO_THREADS = "storage.io.threads";

  public static final String METADATA_STORE = "metadata.store";
  public static final String METADATA_DIR = "metadata.dir";
  public static final String METADATA_HBASE_ZOOKEEPER_QUORUM = "metadata.hbase.zookeeper.quorum";
  public static final String METADATA_HBASE_ZNODE_PARENT = "metadata.hbase.zookeeper.znode.parent";
  public static final String METADATA_HBASE_NAMESPACE = "metadata.hbase.namespace";
  public static final String METADATA_HBASE_OPERATION_TIMEOUT_MS = "metadata.hbase.operation.timeout.ms";
  public static final String METADATA_CACHE_MAX_ENTRIES = "metadata.cache.max.entries";
  public static final String METADATA_CACHE_TTL_MS = "metadata.cache.ttl.ms";

  public static final String TOPIC_PARTITIONS_MAX = "topic.partitions.max";
  public static final String TOPIC_RETENTION_SECS_DEFAULT = "topic.retention.secs.default";
  public static final String TOPIC_RETENTION_SECS_MIN = "topic.retention.secs.min";

  public static final String MESSAGE_MAX_BYTES = "message.max.bytes";
  public static final String MESSAGE_BLOCK_VALIDATION = "message.block.validation";
  public static final String MESSAGE_BLOCK_UNCOMPRESSED_MAX_BYTES = "message.block.uncompressed.max.bytes";
  public static final String GET_MAX_MESSAGES = "message.get.max.messages";
  public static final String GET_MAX_BYTES = "message.get.max.bytes";
  public static final String GET_INFLIGHT_MAX_BYTES = "message.get.inflight.max.bytes";
  public static final String GET_READ_BUFFER_BYTES = "message.get.read.buffer.bytes";
  public static final String GET_WAIT_MAX_MS = "message.get.wait.max.ms";
  public static final String GET_WAITERS_MAX = "message.get.waiters.max";

  public static final String SCHEDULING_WORKERS = "scheduling.workers";
  public static final String SCHEDULING_INLINE_IDLE = "scheduling.inline.idle";
  public static final String SCHEDULING_INLINE_RUNS_MAX = "scheduling.inline.runs.max";
  public static final String SCHEDULING_THREAD_SLICE_US = "scheduling.thread.slice.us";
  public static final String SCHEDULING_THREAD_SLICE_WHEN = "scheduling.thread.slice.when";
  public static final String SCHEDULING_THREAD_SLICE_MACHINE_BUSY_MIN_PERCENT = "scheduling.thread.slice.machine.busy.min.percent";
  public static final String SCHEDULING_THREAD_SLICE_PROCESS_CPU_MAX_PERCENT = "scheduling.thread.slice.process.cpu.max.percent";
  public static final String SCHEDULING_THREAD_SLICE_CHECK_INTERVAL_MS = "scheduling.thread.slice.check.interval.ms";
  public static final String SCHEDULING_SELECTOR = "scheduling.selector";
  public static final String SCHEDULING_MAX_WAITING_TASKS = "scheduling.max.waiting.tasks";
  public static final String SCHEDULING_MAX_WAITING_BYTES = "scheduling.max.waiting.bytes";
  public static final String SCHEDULING_PRIORITY_CLASSES = "scheduling.priority.classes";
  public static final String SCHEDULING_BATCH_MAX_COUNT = "scheduling.batch.max.count";
  public static final String SCHEDULING_BATCH_MAX_BYTES = "scheduling.batch.max.bytes";
  public static final String SCHEDULING_DEADLINE_DEFAULT_MS = "scheduling.deadline.default.ms";

  public static final String CONSUMER_LOCK_TTL_MS = "consumer.lock.ttl.ms";

  public static final String OPS_HEALTH_PROBE_TIMEOUT_MS = "ops.health.probe.timeout.ms";
  public static final String OPS_HEALTH_FD_USED_MAX_PERCENT = "ops.health.fd.used.max.percent";
  public static final String OPS_LIST_MAX_ENTRIES = "ops.list.max.entries";
  public static final String OPS_METRICS_LABELS_MAX = "ops.metrics.labels.max";
  public static final String STORAGE_FAILURE_LOG_INTERVAL_MS = "storage.failure.log.interval.ms";

  public static final String CLUSTER_ENABLED = "cluster.enabled";
  public static final String CLUSTER_NODE_ID = "cluster.node.id";
  public static final String CLUSTER_NODE_CAPACITY = "cluster.node.capacity";
  public static final String CLUSTER_ADVERTISED_URL = "cluster.advertised.url";
  public static final String CLUSTER_ZOOKEEPER_QUORUM = "cluster.zookeeper.quorum";
  public static final String CLUSTER_ZOOKEEPER_ROOT = "cluster.zookeeper.root";
  public static final String CLUSTER_ZOOKEEPER_SESSION_TIMEOUT_MS = "cluster.zookeeper.session.timeout.ms";
  public static final String CLUSTER_REASSIGN_DELAY_MS = "cluster.reassign.delay.ms";
  public static final String CLUSTER_ASSIGNMENT_VNODES_PER_CAPACITY = "cluster.assignment.vnodes.per.capacity";
  public static final String CLUSTER_DRAIN_TIMEOUT_MS = "cluster.drain.timeout.ms";
  public static final String CLUSTER_ASSIGNMENT_LOAD_SHEDDING_ENABLED = "cluster.assignment.load.shedding.enabled";
  public static final String CLUSTER_ASSIGNMENT_LOAD_FACTOR_MIN_PERCENT = "cluster.assignment.load.factor.min.percent";
  public static final String CLUSTER_ASSIGNMENT_LOAD_FACTOR_STEPS = "cluster.assignment.load.factor.steps";
  public static final String CLUSTER_ASSIGNMENT_LOAD_FLOOR_PER_SEC = "cluster.assignment.load.floor.per.sec";
  public static final String CLUSTER_LOAD_WINDOW_MS = "cluster.load.window.ms";
  public static final String CLUSTER_LOAD_PUBLISH_INTERVAL_MS = "cluster.load.publish.interval.ms";
  public static final String CLUSTER_LOAD_CHANGE_THRESHOLD_PERCENT = "cluster.load.change.threshold.percent";

  public static final String LOG_FILE_MAX_BYTES = "log.file.max.bytes";
  public static final String LOG_FILE_BACKUPS = "log.file.backups";

  public static final String HADOOP_PREFIX = "hadoop.";
  public static final String HBASE_PREFIX = "hbase.";

  public static final String CONF_FILE_HEADER = "# Talos server configuration: every key at its default, commented out.\n"
      + "# Uncomment and change what you need; start with: bin/talos server --conf conf/talos.properties\n"
      + "# Relative paths (server.data.dir, metadata.dir, storage.root.uri=file:..., credential, key store and\n"
      + "# secret files) are relative to the directory of this file, not to where the server is started.\n"
      + "# Generated from io.talos.server.ServerConfig (ServerConfigTest keeps this file in step).\n";

  public static final ConfigDef DEF = new ConfigDef()
      .section("Network")
      .define(HOST, Type.STRING, "127.0.0.1", Validator.nonEmpty(),
          "Address the HTTP front-end binds to; 0.0.0.0 for every interface.")
      .define(PORT, Type.INT, 8080, Validator.between(0, 65535),
          "HTTP port of the Thrift-over-HTTP API and the ops endpoint; 0 picks a free port.")
      .define(HTTP_THREADS_MAX, Type.INT, 64, Validator.between(4, 4096),
          "Maximum number of Jetty threads serving requests.")
      .define(REQUEST_MAX_BYTES, Type.LONG, 32L * 1024 * 1024, Validator.between(1024, Integer.MAX_VALUE),
          "Largest request body accepted, in bytes; larger requests get HTTP 413.")
      .define(HTTP_IDLE_TIMEOUT_MS, Type.LONG, 30_000L, Validator.between(1000, 3_600_000),
          "A connection that sends nothing for this long (while its request body is expected, or idle between requests) is closed, in ms.")
      .define(HTTP_CONNECTIONS_MAX, Type.INT, 10_000, Validator.between(1, 1_000_000),
          "Most client connections open at once on the API listeners (HTTP and HTTPS together). At the limit the server stops accepting: a new connection waits in the listen backlog until one closes, and idle connections are cut after a tenth of server.http.idle.timeout.ms. The ops port has its own listener and still answers.")
      .define(HTTP_HEADER_CACHE_SIZE, Type.INT, 0, Validator.between(0, 8192),
          "Per-connection cache of repeated request header lines, in characters of the lines it holds; each character costs about 100 bytes of heap for as long as the connection stays open (an index sized for the whole capacity, built at the connection's second request). 0 disables it: the header lines are then parsed anew on every request, about half a kilobyte more short-lived garbage per request.")
      .define(REQUEST_BODY_MIN_BYTES_PER_SEC, Type.LONG, 16_384L, Validator.between(0, 1L << 30),
          "Slowest average rate a request body may arrive at, after the grace period; a slower body is answered HTTP 408 and its connection closed. 0 disables the check.")
      .define(REQUEST_BODY_RATE_GRACE_MS, Type.LONG, 2_000L, Validator.between(0, 600_000),
          "How long a request body may take before the minimum rate (server.request.body.min.bytes.per.sec) applies, in ms: small bodies delayed by the network are not cut.")
      .define(REQUEST_BODY_INFLIGHT_MAX_BYTES, Type.LONG, 256L * 1024 * 1024, Validator.between(1024, 1L << 40),
          "Most request-body bytes being received and decoded at once, over all connections; a body that would exceed it is answered HTTP 503 with Retry-After. At least server.request.max.bytes; keep it well under the heap.")
      .define(REQUEST_EARLY_ANSWER_DRAIN_MAX_BYTES, Type.LONG, 65_536L, Validator.between(0, 1L << 30),
          "Largest request body read and dropped before answering a request refused from its headers (401, 404, 409, 412, ...), so that a client still sending it reads the answer instead of a broken pipe; larger bodies are answered at once and the connection closed. Read under the body rate limits, without holding a thread.")
      .define(OPS_PORT, Type.INT, 8081, Validator.between(-1, 65535),
          "Port of the separate ops listener (/ops/health, /ops/metrics) with its own threads, so that health checks answer while the API port is saturated; 0 picks a free port, -1 disables it (/ops/ on the API port always works).")
      .define(OPS_THREADS_MAX, Type.INT, 6, Validator.between(4, 64),
          "Threads of the ops listener (server.ops.port), its acceptor and selector included.")
      .define(OPS_CONNECTIONS_MAX, Type.INT, 256, Validator.between(1, 100_000),
          "Most connections open at once on the ops listener (server.ops.port); beyond it new ones wait in the listen backlog, as on the API listeners (server.http.connections.max).")
      .section("Request decoding and argument limits")
      .define(REQUEST_CONTAINER_MAX_LENGTH, Type.INT, 65_536, Validator.between(16, 16_777_216),
          "Most elements one list, set or map of a Thrift request body may declare (and never more than the body's remaining bytes); beyond it HTTP 400.")
      .define(REQUEST_NESTING_MAX_DEPTH, Type.INT, 16, Validator.between(8, 1024),
          "Deepest nesting of structs and containers in a Thrift request body (the call's argument struct is 1); beyond it HTTP 400.")
      .define(REQUEST_NAME_MAX_CHARS, Type.INT, 256, Validator.between(16, 65_536),
          "Longest name or id in a request (topic and resource names, consumerGroup, workerId, sequenceId, developerId, ...), in characters; beyond it INVALID_REQUEST_PARAMS.")
      .define(REQUEST_STRING_MAX_CHARS, Type.INT, 4096, Validator.between(16, 16_777_216),
          "Longest other string in a request (topic attribute keys and values, version details), in characters; beyond it INVALID_REQUEST_PARAMS.")
      .define(REQUEST_PARTITION_LIST_MAX_ENTRIES, Type.INT, 4096, Validator.between(1, 16_777_216),
          "Most entries of a partition list in a request (ConsumeUnit.partitionIdList, getPartitionsOffset's topicAndPartitionList); beyond it INVALID_REQUEST_PARAMS. Keep it >= topic.partitions.max.")
      .define(REQUEST_PUT_BLOCKS_MAX_COUNT, Type.INT, 1024, Validator.between(1, 16_777_216),
          "Most message blocks in one putMessage (the Talos SDK sends one); beyond it INVALID_REQUEST_PARAMS.")
      .define(REQUEST_MAP_MAX_ENTRIES, Type.INT, 256, Validator.between(1, 16_777_216),
          "Most entries of a map in a request (topic attributes, createTopic's aclMap); beyond it INVALID_REQUEST_PARAMS.")
      .section("Authentication")
      .define(AUTH_CLOCK_SKEW_MAX_MS, Type.LONG, 900_000L, Validator.atLeast(1000),
          "Largest amount a request's X-Xiaomi-Timestamp may lie behind the server clock (how long a signed request stays valid), in ms; beyond it HTTP 412 with the server's timestamp.")
      .define(AUTH_CLOCK_SKEW_FUTURE_MAX_MS, Type.LONG, 60_000L, Validator.atLeast(1000),
          "Largest amount a request's X-Xiaomi-Timestamp may lie ahead of the server clock, in ms; beyond it HTTP 412 with the server's timestamp.")
      .define(AUTH_REPLAY_MAX_ENTRIES, Type.INT, 200_000, Validator.between(1000, 100_000_000),
          "Signatures of state-changing requests remembered to refuse replays (HTTP 409) while their timestamp is valid; 8 to 16 bytes each (a 64-bit fingerprint in a primitive hash set per second). When full, the oldest timestamps are forgotten and requests at or before them are refused with HTTP 412 instead of risking a replay.")
      .define(ADMIN_CREDENTIAL_FILE, Type.STRING, "",
          null, "Where the admin credential created on first start is written (mode 0600); empty means DATA_DIR/admin-credential.properties.")
      .define(AUTH_CREDENTIAL_ROTATION_GRACE_MS, Type.LONG, 86_400_000L, Validator.atLeast(0),
          "After a credential's secret is rotated, how long the previous secret is still accepted next to the new one (clients switch within it), unless the rotation asks for another grace; 0 ends the old secret at once.")
      .define(AUTH_CREDENTIAL_ROTATION_GRACE_MAX_MS, Type.LONG, 604_800_000L, Validator.atLeast(0),
          "Longest grace period a rotation may ask for; a longer one is refused with INVALID_REQUEST_PARAMS.")
      .define(AUTH_CREDENTIALS_MAX, Type.INT, 10_000, Validator.between(1, 10_000_000),
          "Most credentials (revoked ones included, they keep their key id) the server holds; creating one more is refused with OPERATION_FAILED.")
      .define(AUTH_CREDENTIALS_PER_ACCOUNT_MAX, Type.INT, 100, Validator.between(1, 1_000_000),
          "Most credentials (revoked ones included) one account may have; creating one more for it is refused with OPERATION_FAILED (an account has at most one active credential; revoked ones are kept).")
      .define(ACL_GRANTS_MAX, Type.INT, 256, Validator.between(1, 65_536),
          "Most grants (accounts other than the owner) one topic's ACL holds; setPermission and createTopic's aclMap beyond it are refused with INVALID_REQUEST_PARAMS.")
      .define(AUDIT_AUTH_FAILURE_INTERVAL_MS, Type.LONG, 60_000L, Validator.between(0, 86_400_000),
          "Authentication failures are written to the audit log at most once per key id per this many ms; the next line counts the failures not written (suppressed=N). 0 writes every failure.")
      .define(AUDIT_AUTH_FAILURE_KEYS_MAX, Type.INT, 10_000, Validator.between(1, 1_000_000),
          "Key ids whose authentication failures are rate-limited separately at once (about 100 bytes each); failures of further key ids share one entry (keyId=*).")
      .section("Quotas")
      .define(QUOTA_PARTITION_PUT_BYTES_PER_SEC, Type.LONG, 524_288L, Validator.atLeast(0),
          "Default write limit of one partition, in message bytes per second (token bucket on putMessage); 0 means no limit. Beyond it puts are delayed, then refused (see quota.throttle.max.delay.ms).")
      .define(QUOTA_PARTITION_GET_BYTES_PER_SEC, Type.LONG, 1_048_576L, Validator.atLeast(0),
          "Default read limit of one partition, in bytes per second returned by getMessage; 0 means no limit.")
      .define(QUOTA_BURST_MS, Type.LONG, 1_000L, Validator.between(1, 60_000),
          "How much unused rate a quota's token bucket saves up, in ms of its rate: the largest burst above the rate a client can send after being idle.")
      .define(QUOTA_THROTTLE_MAX_DELAY_MS, Type.LONG, 2_000L, Validator.between(0, 60_000),
          "Longest a put or get over a quota is delayed (without holding a thread) before it runs; a request that would wait longer is answered after this long with EXCESSIVE_PENDING_MESSAGE (retriable) saying which quota it exceeded.")
      .define(QUOTA_BUCKETS_MAX, Type.INT, 100_000, Validator.between(1, 10_000_000),
          "Most token buckets (per partition, topic and account quota) kept at once, about 200 bytes each; the least recently used are dropped (and come back full).")
      .define(QUOTA_BYTES_PER_SEC_MAX, Type.LONG, 10L * 1024 * 1024 * 1024, Validator.between(1, 1L << 50),
          "Largest byte rate a topic or user quota may set (putMessageBytesQpsQuota, getMessageBytesQpsQuota), in bytes/s; larger values are refused with INVALID_REQUEST_PARAMS. 0 or less means no limit and is always allowed.")
      .define(QUOTA_REQUESTS_PER_SEC_MAX, Type.LONG, 1_000_000L, Validator.between(1, Integer.MAX_VALUE),
          "Largest request rate a topic or user quota may set (putMessageQpsQuota, getMessageQpsQuota), in requests/s; larger values are refused with INVALID_REQUEST_PARAMS.")
      .define(QUOTA_TOPICS_MAX, Type.LONG, 1_000_000L, Validator.between(1, Integer.MAX_VALUE),
          "Largest topicNumberQuota (topics an account may own) a user quota may set; larger values are refused with INVALID_REQUEST_PARAMS. spaceQuota is stored and reported, not enforced, and not bounded.")
      .define(QUOTA_SHARE, Type.STRING, "1.0", fraction(),
          "Fraction of each user and topic quota (cluster-wide rates) this node enforces without a cluster, in (0, 1]; 1.0 on a single node. In cluster mode (cluster.zookeeper.quorum set) it is not used: each node enforces 1 / the number of ACTIVE members, updated with the membership. Per-partition limits are not divided.")
      .section("TLS")
      .define(HTTP_ENABLED, Type.BOOLEAN, true, null,
          "Whether the plain-HTTP API listener (server.port) runs; turn it off to serve the API over TLS only (server.tls.port).")
      .define(HTTP_REDIRECT_HTTPS, Type.BOOLEAN, false, null,
          "With TLS on: the plain-HTTP listener answers every API request with a redirect (HTTP 308) to https instead of serving it. Note that the SDK does not follow redirects of POSTs: it fails, which shows the misconfigured client.")
      .define(TLS_PORT, Type.INT, -1, Validator.between(-1, 65535),
          "HTTPS port of the API (the same handlers as server.port, over TLS); -1 disables TLS, 0 picks a free port. Needs server.tls.keystore.path.")
      .define(TLS_KEYSTORE_PATH, Type.STRING, "",
          null, "Key store holding the server's private key and certificate chain (PKCS12 or JKS, see server.tls.keystore.type); readable by the server's user only.")
      .define(TLS_KEYSTORE_PASSWORD, Type.STRING, "",
          null, "Password of the key store (and of the key in it). Keep the configuration file owner-only when it holds one.")
      .define(TLS_KEYSTORE_TYPE, Type.STRING, "PKCS12", Validator.oneOf("PKCS12", "JKS"),
          "Type of the key store and the trust store.")
      .define(TLS_TRUSTSTORE_PATH, Type.STRING, "",
          null, "Trust store of the CAs whose client certificates are accepted (server.tls.client.auth); empty: the JVM's default.")
      .define(TLS_TRUSTSTORE_PASSWORD, Type.STRING, "",
          null, "Password of the trust store.")
      .define(TLS_CLIENT_AUTH, Type.STRING, "none", Validator.oneOf("none", "want", "need"),
          "Whether TLS clients must present a certificate the trust store accepts: none, want (asked, optional), need (required). Requests are still authenticated by their signature.")
      .section("Storage")
      .define(DATA_DIR, Type.STRING, "./data", Validator.nonEmpty(),
          "Local data directory: the default home of the partition log and the embedded metadata store.")
      .define(STORAGE_ROOT_URI, Type.STRING, "",
          null, "Root of the partition log as a Hadoop FileSystem URI (file:///..., hdfs://namenode/path); empty means file://DATA_DIR/log.")
      .define(STORAGE_DURABILITY, Type.STRING, "flush", Validator.oneOf("flush", "sync"),
          "When a put is acknowledged: flush (local: handed to the OS, lost in an OS crash or power cut; HDFS: hflush, in the memory of every DataNode of the write pipeline) or sync (local: fsync, survives a power cut; HDFS: hsync, on the disk of every pipeline DataNode). Use sync for production on a local disk; see docs/storage-format.md.")
      .define(STORAGE_SEGMENT_BYTES, Type.LONG, 256L * 1024 * 1024, Validator.between(1024, 1L << 40),
          "A segment file is rolled when it reaches this size in bytes.")
      .define(STORAGE_SEGMENT_MS, Type.LONG, 3_600_000L, Validator.atLeast(1000),
          "A segment file is rolled when its first record is this old, in ms.")
      .define(STORAGE_INDEX_INTERVAL_BYTES, Type.INT, 4096, Validator.between(64, 1 << 24),
          "The sparse offset index gets an entry every this many bytes of segment.")
      .define(STORAGE_RETENTION_CHECK_INTERVAL_MS, Type.LONG, 60_000L, Validator.atLeast(100),
          "How often segments past their topic's retention are deleted, in ms.")
      .define(STORAGE_TAIL_CACHE_BYTES, Type.LONG, TAIL_CACHE_AUTO, Validator.between(TAIL_CACHE_AUTO, 1L << 40),
          "Bytes of recently appended data kept in memory (shared by all partitions, oldest appends evicted first) so that consumers near the tail do not read the file system; 0 disables it. "
              + "-1 (the default) chooses by storage: 67108864 (64 MiB) on HDFS, where each read of a segment being written costs NameNode and DataNode round trips; "
              + "0 on the local file system, whose page cache already serves recent data, without the garbage-collection work of a cache in the heap (appended batches that live a fraction of a second are copied by young collections and promoted).")
      .define(STORAGE_LOCAL_PAGE_CACHE_WINDOW_BYTES, Type.LONG, 32L * 1024 * 1024, Validator.between(0, 1L << 40),
          "Local file system on Linux: bytes at the end of each segment file left in the OS page cache; data further behind is written back to disk and dropped from the page cache in 4 MiB chunks by a background thread, after it is written and again after it is read, so that new data reuses the freed pages (taking fresh pages costs several times the copy itself, most of all in a virtual machine) and dirty data stays bounded per file. Consumers within this much of the end read from memory, others from disk. Advice only: what is stored and when a put is acknowledged do not change. 0: the page cache is left to the kernel.")
      .define(STORAGE_LOCAL_SEGMENT_PIN_EXTENT_TREE, Type.BOOLEAN, true, null,
          "Local file system on Linux: each new segment file gets five 4 KiB blocks reserved past the largest size it can reach (fallocate keeping the size: 20 KiB of disk per segment; what the file holds and its size do not change), which keeps its ext4 extent tree one level deep for the file's life. Otherwise the kernel's write-back can shrink the tree back into the inode and free a tree block, and on a file system mounted with discard and without a journal that block is discarded while the file's block map is locked: appends wait for the disk. false: segment files are created plain. Where fallocate is missing the files stay plain (logged once, counted).")
      .define(STORAGE_LOCAL_BLOCK_BITMAPS_PRELOAD, Type.BOOLEAN, true, null,
          "Local file system on ext4 mounted with no_prefetch_block_bitmaps: at start, a background thread has ext4 load every block group's bitmap once (by reading /proc/fs/ext4/<device>/mb_groups; at most one 4 KiB read per 128 MiB of file system, none for groups never written), as ext4 does after mounting without that option. Otherwise the kernel's write-back reads a group's bitmap from the device the first time it allocates a segment's blocks there, holding the file's block-map lock, and appends to that segment wait for the read. Ignored on other file systems and mounts. false: the bitmaps are read on demand.")
      .define(STORAGE_LEASE_RECOVERY_TIMEOUT_MS, Type.LONG, 60_000L, Validator.atLeast(0),
          "HDFS: how long opening a partition waits for the lease of a segment left open by a crashed or previous owner to be recovered, in ms.")
      .define(STORAGE_PRODUCERS_PER_PARTITION_MAX, Type.INT, 1000, Validator.between(1, 1_000_000),
          "Idempotent produce: producers whose recent puts (the last 5, about 100 bytes) each partition remembers to answer repeats; when full, the producer whose last put is oldest is forgotten (its repeats are then stored again).")
      .define(STORAGE_PRODUCER_EXPIRY_MS, Type.LONG, 900_000L, Validator.between(1000, 7L * 24 * 3_600_000L),
          "Idempotent produce: a producer without a put to a partition for this long (append time) is forgotten there, in ms. Must exceed the producers' delivery timeout (retries of a put). Opening a partition reads back this much of its newest data to rebuild the producer state.")
      .define(STORAGE_READER_REFRESH_INTERVAL_MS, Type.LONG, 500L, Validator.between(0, 3_600_000L),
          "Reads of a partition this server does not write use a read-only view (never claims the partition or recovers a lease); a read beyond what the view knows lists the partition directory again at most this often, in ms: new messages of another server's writer show up after at most this long.")
      .define(STORAGE_ORPHAN_DATA_ACCEPT, Type.BOOLEAN, false, null,
          "Start even if the metadata store has no topics while the storage root holds topic data (normally refused: the metadata is probably lost or the wrong one); the data is kept and reported at GET /ops/orphans, never deleted. Command line: --accept-orphan-data.")
      .define(STORAGE_TOPIC_DELETION_CHECK_INTERVAL_MS, Type.LONG, 60_000L, Validator.atLeast(100),
          "How often deletions of topics whose data could not be removed at once are retried, and orphaned topic directories looked for, in ms.")
      .define(STORAGE_OPEN_LOGS_MAX, Type.INT, 1024, Validator.between(1, 1_000_000),
          "Most partition logs open at once; opening one more closes the least recently used (it reopens, with recovery, on its next use).")
      .define(STORAGE_OPEN_FILES_MAX, Type.INT, 4096, Validator.between(16, 10_000_000),
          "Most files held open by partition logs (counted as segments + 1 per open log); beyond it the least recently used logs are closed. Keep it well under the process's file-descriptor limit (ulimit -n).")
      .define(STORAGE_OPEN_IDLE_CLOSE_MS, Type.LONG, 300_000L, Validator.atLeast(0),
          "A partition log unused this long is closed by the next sweep, in ms; 0 keeps idle logs open (still bounded by storage.open.logs.max).")
      .define(STORAGE_OPEN_SWEEP_INTERVAL_MS, Type.LONG, 10_000L, Validator.atLeast(100),
          "How often idle, fenced and over-limit partition logs are closed, in ms.")
      .define(STORAGE_OPEN_THREADS, Type.INT, 4, Validator.between(1, 1024),
          "Threads opening (recovering) partition logs, off the request threads; a request waits for an open at most until its deadline, then gets REQUEST_PROCESS_TIMEOUT (retriable) while the open goes on.")
      .define(STORAGE_FLUSH_THREADS, Type.INT, 64, Validator.between(1, 4096),
          "Most threads flushing (hflush/hsync) partition logs at the same time; each log has at most one flush in flight while its writer goes on with the next appends, and a log whose flush waits for a thread acknowledges later, never earlier.")
      .define(STORAGE_OPEN_PENDING_MAX, Type.INT, 1024, Validator.between(1, 1_000_000),
          "Most partition opens waiting for an open thread; beyond it a request needing an open is refused at once with HDFS_OPERATION_FAILED (retriable).")
      .define(STORAGE_IO_THREADS, Type.INT, -1, Validator.between(-1, 4096),
          "Threads running the storage part of puts and gets; a pool worker waits for one at most until the request's deadline, so a stalled file system costs a worker at most that. When all are stalled, puts and gets are refused at once (retriable). 0: the storage part runs on the pool worker itself (one thread hand-off less per put and get; a stalled file system then holds the worker). -1: 0 when storage.root.uri is a local file system (file:), else 32.")
      .section("Metadata")
      .define(METADATA_STORE, Type.STRING, "embedded", Validator.oneOf("embedded", "hbase"),
          "Metadata store implementation: embedded (an H2 MVStore file under metadata.dir, one node) or hbase (tables in HBase, shared by a cluster).")
      .define(METADATA_DIR, Type.STRING, "",
          null, "Directory of the embedded metadata store; empty means DATA_DIR/metadata.")
      .define(METADATA_HBASE_ZOOKEEPER_QUORUM, Type.STRING, "",
          null, "metadata.store=hbase: the HBase cluster's ZooKeeper quorum, host[:port] comma-separated (HBase's hbase.zookeeper.quorum); required.")
      .define(METADATA_HBASE_ZNODE_PARENT, Type.STRING, "/hbase", Validator.nonEmpty(),
          "metadata.store=hbase: the HBase cluster's root znode (HBase's zookeeper.znode.parent).")
      .define(METADATA_HBASE_NAMESPACE, Type.STRING, "talos", hbaseNamespace(),
          "metadata.store=hbase: HBase namespace holding the Talos tables (meta, topic_names, topics, credentials, topic_deletions), created on first start.")
      .define(METADATA_HBASE_OPERATION_TIMEOUT_MS, Type.LONG, 30_000L, Validator.between(1000, 3_600_000),
          "metadata.store=hbase: longest one HBase operation may take, its client retries included (HBase's hbase.client.operation.timeout); beyond it the request fails with HBASE_OPERATION_FAILED.")
      .define(METADATA_CACHE_MAX_ENTRIES, Type.INT, 10_000, Validator.between(0, 10_000_000),
          "Topics and credentials each kept in memory (most recently used), so requests do not read the metadata store; 0 disables the cache.")
      .define(METADATA_CACHE_TTL_MS, Type.LONG, 1_000L, Validator.between(0, 5_000),
          "How long a cached topic or credential is used before it is read again, in ms: changes made on this node are seen at once, changes made by other nodes sharing the store within this time (so a revoked credential stops working on every node within it); 0 disables the cache.")
      .section("Topics")
      .define(TOPIC_PARTITIONS_MAX, Type.INT, 1024, Validator.between(1, 65536),
          "Largest partition count a topic may have.")
      .define(TOPIC_RETENTION_SECS_DEFAULT, Type.INT, 86_400, Validator.atLeast(1),
          "Retention of a topic created without messageRetentionSecs, in seconds.")
      .define(TOPIC_RETENTION_SECS_MIN, Type.INT, 60, Validator.atLeast(1),
          "Smallest retention a topic may be given, in seconds.")
      .section("Messages")
      .define(MESSAGE_MAX_BYTES, Type.INT, 10 * 1024 * 1024, Validator.between(1, 256 * 1024 * 1024),
          "Largest single message, in bytes (the Talos SDK allows 10 MiB).")
      .define(MESSAGE_BLOCK_VALIDATION, Type.STRING, "full", Validator.oneOf("full", "none"),
          "full: decompress and check every put block's message framing and sizes before storing it; none: store blocks unchecked.")
      .define(MESSAGE_BLOCK_UNCOMPRESSED_MAX_BYTES, Type.LONG, 2L * 10 * 1024 * 1024 + 1024 * 1024,
          Validator.between(1024, Integer.MAX_VALUE),
          "With full validation, the most bytes one put block may decompress to (SDK batches stay under 2 x message.max.bytes); larger blocks are refused.")
      .define(GET_MAX_MESSAGES, Type.INT, 10_000, Validator.atLeast(1),
          "Most messages one getMessage answers with, whatever the client asks.")
      .define(GET_MAX_BYTES, Type.INT, 8 * 1024 * 1024, Validator.atLeast(1024),
          "Most payload bytes one getMessage answers with (at least one block is always returned).")
      .define(GET_INFLIGHT_MAX_BYTES, Type.LONG, 64L * 1024 * 1024, Validator.between(1024, 1L << 40),
          "Most bytes of getMessage answers the server holds at once, over all gets, from the read until the answer is written to the connection. A get reserves what it may read (its maxGetMessageBytes, at most message.get.max.bytes) and then holds what its answer takes; one that finds less room reads only what is free (at least one block), one block only while the room is taken by gets still reading, and is answered EXCESSIVE_PENDING_MESSAGE (retriable) when answers already read fill it. Bounds the heap that concurrent large fetches take; keep it well under the heap.")
      .define(GET_READ_BUFFER_BYTES, Type.LONG, 64L * 1024 * 1024, Validator.between(0, 1L << 40),
          "Direct memory that getMessage reads segment records into, in pooled 64 KiB buffers: the file system reads into them and the answer is written to the connection from them, with no copy in the heap on the way; a buffer goes back to the pool once the answer that refers to it was written. When all of it is in use, reads use heap arrays (slower, never refused). Counts against the JVM's direct memory limit (-XX:MaxDirectMemorySize, by default the heap size). 0: reads always use heap arrays.")
      .define(GET_WAIT_MAX_MS, Type.LONG, 30_000L, Validator.between(0, 600_000),
          "Long poll: longest a getMessage that asks to wait (maxWaitMs, a Talos extension) is held when it finds nothing new, in ms; it is answered as soon as a message arrives. A wait that ends without one ends late by up to 1 ms or 1/16 of the wait, whichever is more, and at most 16 ms; never early. The wait also ends before the request's deadline. Parked gets hold no thread. 0 turns long poll off (gets are answered at once).")
      .define(GET_WAITERS_MAX, Type.INT, 10_000, Validator.between(0, 10_000_000),
          "Long poll: most getMessage calls parked at once on this server (a few hundred bytes each, and an open connection); a get over the limit is answered at once, as without long poll.")
      .section("Request scheduling")
      .define(SCHEDULING_WORKERS, Type.INT, 8, Validator.between(1, 1024),
          "Task-pool workers serving puts and gets (Jetty threads only parse and authenticate).")
      .define(SCHEDULING_INLINE_IDLE, Type.BOOLEAN, true, null,
          "A put or get of a partition with nothing waiting or running, whose worker is idle, is served on the HTTP thread that received it (the worker lent to it) instead of waking the worker: one thread hand-off less for a lone request. Only where the storage part runs on the worker (storage.io.threads resolving to 0, the default on a local file system). false: always handed to a worker.")
      .define(SCHEDULING_INLINE_RUNS_MAX, Type.INT, PoolConfig.DEFAULT_MAX_LENT_RUNS, Validator.between(1, PoolConfig.MAX_LENT_RUNS),
          "With scheduling.inline.idle: the most runs (a put or get, or a batch of puts) the HTTP thread serves on the worker lent to it: its own request, then what was queued for that worker meanwhile, such as the long-polling gets its put woke, answered after the put. The worker's own thread takes over after that. Each run served so saves waking the worker; the HTTP thread is kept that much longer, and the next request on its connection may wait for it. 1: its own request only.")
      .define(SCHEDULING_THREAD_SLICE_US, Type.INT, 100, threadSlice(),
          "Scheduler time slice, in microseconds, that the threads a put or get waits for (HTTP threads, task-pool workers, storage threads) ask the Linux kernel for (sched_setattr; Linux 6.12 or later, no privilege needed), when scheduling.thread.slice.when says. When every core is busy, a thread with a shorter slice than the running one preempts it as soon as it wakes, instead of waiting for that slice to end (1.4 ms by default); it gets no more CPU in all than its fair share. On a machine shared with other work it shortens the tail of puts (loaded P99 0.72-0.97x): see docs/benchmarks.md. 0: the kernel's default slice, always. Elsewhere (another system, an older kernel) the threads keep the default and the server logs it once.")
      .define(SCHEDULING_THREAD_SLICE_WHEN, Type.STRING, "contended", Validator.oneOf("contended", "always"),
          "When the threads run with scheduling.thread.slice.us. contended: only while the machine is at least scheduling.thread.slice.machine.busy.min.percent busy and this server uses at most scheduling.thread.slice.process.cpu.max.percent of it (other work holds the cores), checked every scheduling.thread.slice.check.interval.ms; otherwise the default slice, because when the server's own work fills the machine the short slice costs throughput (100-byte produce 0.70-0.79x with the clients on the same cores). always: from each thread's first request on.")
      .define(SCHEDULING_THREAD_SLICE_MACHINE_BUSY_MIN_PERCENT, Type.INT, 90, Validator.between(0, 100),
          "With scheduling.thread.slice.when=contended: the machine's CPU time in use (every process, all cores, over the last check interval), in percent, from which the short slice is taken.")
      .define(SCHEDULING_THREAD_SLICE_PROCESS_CPU_MAX_PERCENT, Type.INT, 35, Validator.between(0, 100),
          "With scheduling.thread.slice.when=contended: the most of the machine's CPU time (all cores, over the last check interval), in percent, that this server may use for the short slice to be taken; above it the server's own work is what fills the machine.")
      .define(SCHEDULING_THREAD_SLICE_CHECK_INTERVAL_MS, Type.LONG, 1000L, Validator.between(100, 60_000),
          "With scheduling.thread.slice.when=contended: how often the machine's and the server's CPU use are sampled and the slice decided; a change reaches each thread at its next request.")
      .define(SCHEDULING_SELECTOR, Type.STRING, "least-loaded", Validator.oneOf("least-loaded", "hashed"),
          "least-loaded: a partition's tasks go to the worker already serving it, else the worker with the fewest waiting tasks (ties: lowest id); hashed: each partition to a fixed worker (the old model).")
      .define(SCHEDULING_MAX_WAITING_TASKS, Type.INT, 10_000, Validator.between(1, 10_000_000),
          "Most put/get tasks waiting in the whole server; beyond it requests are refused at once with EXCESSIVE_PENDING_MESSAGE (retriable).")
      .define(SCHEDULING_MAX_WAITING_BYTES, Type.LONG, 128L * 1024 * 1024, Validator.between(1024 * 1024, 1L << 40),
          "Most request-body bytes held by waiting and running put/get tasks; beyond it requests are refused at once with EXCESSIVE_PENDING_MESSAGE (retriable). Keep it well under the heap.")
      .define(SCHEDULING_PRIORITY_CLASSES, Type.STRING, "put,get", priorityClasses(),
          "Priority classes of pool tasks (puts and gets), FIFO within a class: a worker whose queues were empty serves the first class first; while several classes have tasks waiting they take turns (one task or one put batch each), so none waits behind a steady stream of the others; must name put and get.")
      .define(SCHEDULING_BATCH_MAX_COUNT, Type.INT, 64, Validator.between(1, 100_000),
          "Group commit: most waiting puts of one partition appended with one write and one flush.")
      .define(SCHEDULING_BATCH_MAX_BYTES, Type.LONG, 4L * 1024 * 1024, Validator.between(1, 1L << 31),
          "Group commit: most payload bytes in one batched append (a single larger put still goes alone).")
      .define(SCHEDULING_DEADLINE_DEFAULT_MS, Type.LONG, 10_000L, Validator.atLeast(1),
          "Deadline of a put/get that carries no timeoutTimestamp; a task dequeued after its deadline is answered REQUEST_PROCESS_TIMEOUT without touching storage.")
      .section("Consumer groups")
      .define(CONSUMER_LOCK_TTL_MS, Type.LONG, 30_000L, Validator.atLeast(100),
          "A consumer worker's registration and partition locks expire this long after its last renewal, in ms.")
      .section("Health")
      .define(OPS_HEALTH_PROBE_TIMEOUT_MS, Type.LONG, 2_000L, Validator.between(10, 600_000),
          "Longest /ops/health waits for one probe (metadata store read, storage root status); a probe that does not answer in time fails its check.")
      .define(OPS_HEALTH_FD_USED_MAX_PERCENT, Type.INT, 90, Validator.between(1, 100),
          "/ops/health fails its file-descriptors check (HTTP 503) when this percentage of the process's file-descriptor limit is open.")
      .section("Operations API and metrics")
      .define(OPS_LIST_MAX_ENTRIES, Type.INT, 1000, Validator.between(1, 1_000_000),
          "Most topics, groups or topics of a group one ops API answer lists (/ops/topics, /ops/groups, /ops/groups/{name}); longer lists are cut and say \"truncated\":true.")
      .define(OPS_METRICS_LABELS_MAX, Type.INT, 1000, Validator.between(0, 1_000_000),
          "Cardinality cap of the labeled metrics: most partitions with their own put/get meters (traffic of further partitions is counted under topic=\"_other\"), and most label sets of each per-partition or per-group family on /metrics (talos_metrics_labels_dropped counts the rest); 0 names no topic or group on /metrics.")
      .define(STORAGE_FAILURE_LOG_INTERVAL_MS, Type.LONG, 60_000L, Validator.between(0, 86_400_000),
          "A storage failure of a put, get or partition open is logged on the server (WARN, with topic, partition and cause) at most once per partition per this many ms; the next line counts the failures not logged (suppressed=N). 0 logs every failure.")
      .section("Cluster")
      .define(CLUSTER_ENABLED, Type.BOOLEAN, false, null,
          "Run as one node of a cluster sharing HDFS and HBase: membership in ZooKeeper, partitions assigned by consistent hashing and owned by one node at a time (docs/cluster.md). Requires metadata.store=hbase, an hdfs:// storage.root.uri and a ZooKeeper quorum.")
      .define(CLUSTER_NODE_ID, Type.STRING, "",
          null, "cluster.enabled: this node's id, unique and stable across restarts (letters, digits, '.', '_', '-'); empty means host_port of the API endpoint.")
      .define(CLUSTER_NODE_CAPACITY, Type.INT, 1, Validator.between(1, 1000),
          "cluster.enabled: relative weight of this node in the assignment; its virtual nodes, and so its share of partitions, scale with it.")
      .define(CLUSTER_ADVERTISED_URL, Type.STRING, "",
          null, "cluster.enabled: the API base URL other nodes and clients reach this node at (http://host:port); empty means the bound endpoint.")
      .define(CLUSTER_ZOOKEEPER_QUORUM, Type.STRING, "",
          null, "cluster.enabled: ZooKeeper quorum of the membership, host[:port] comma-separated; empty means metadata.hbase.zookeeper.quorum.")
      .define(CLUSTER_ZOOKEEPER_ROOT, Type.STRING, "/talos", Validator.nonEmpty(),
          "cluster.enabled: znode under which the cluster keeps its membership (nodes/), drain requests (drain/) and the topic version (topics-version); one per cluster.")
      .define(CLUSTER_ZOOKEEPER_SESSION_TIMEOUT_MS, Type.LONG, 4_000L, Validator.between(1_000, 600_000),
          "cluster.enabled: ZooKeeper session timeout, in ms. A node that loses its connection stops serving its partitions at once (well before the session can expire); a dead node's membership ends after this (the server may round it to its limits).")
      .define(CLUSTER_REASSIGN_DELAY_MS, Type.LONG, 2_000L, Validator.between(0, 3_600_000),
          "cluster.enabled: how long after a node's membership ends its partitions are reassigned, in ms (a node back within it keeps them). With the session timeout, the time a killed owner's partitions are unserved (plus HDFS lease recovery); a drained node's partitions move at once.")
      .define(CLUSTER_ASSIGNMENT_VNODES_PER_CAPACITY, Type.INT, 256, Validator.between(1, 4096),
          "cluster.enabled: virtual nodes on the hash ring per unit of cluster.node.capacity; more spread partitions more evenly. Must be the same on every node.")
      .define(CLUSTER_DRAIN_TIMEOUT_MS, Type.LONG, 30_000L, Validator.between(0, 3_600_000),
          "cluster.enabled: a clean shutdown (or bin/talos cluster drain) refuses new puts and gets (PARTITION_NOT_SERVING, retriable), marks the node DRAINING, waits at most this long for the requests it already accepted (queued, running, or forwarded to their partition's owner) to be answered on their connections, then gives its partitions up and closes, in ms. A put still unanswered then is abandoned: forwarded, it is answered REQUEST_PROCESS_TIMEOUT (it may still be stored); queued, 'shutting down, retry' (not run).")
      .define(CLUSTER_ASSIGNMENT_LOAD_SHEDDING_ENABLED, Type.BOOLEAN, false, null,
          "cluster.enabled: shed partitions by measured load: a node whose load per unit of capacity is above the cluster's mean gets fewer virtual nodes (mean/load, see cluster.assignment.load.factor.*), so some of its partitions move to the others. Applies only while every ACTIVE node has it on (one node with it off keeps the capacity-only map for all). Off by default: every move leaves the moved partitions briefly unserved (PARTITION_NOT_SERVING, retriable) while they change owner (docs/cluster.md).")
      .define(CLUSTER_ASSIGNMENT_LOAD_FACTOR_MIN_PERCENT, Type.INT, 25, Validator.between(1, 100),
          "cluster.enabled: the smallest traffic factor shedding gives a node, in percent of its full weight (its virtual nodes never go below this share). Must be the same on every node.")
      .define(CLUSTER_ASSIGNMENT_LOAD_FACTOR_STEPS, Type.INT, 4, Validator.between(1, 100),
          "cluster.enabled: traffic factors are rounded to the nearest multiple of 1/this (4: 0.25, 0.5, 0.75, 1), so small load changes move nothing. Must be the same on every node.")
      .define(CLUSTER_ASSIGNMENT_LOAD_FLOOR_PER_SEC, Type.LONG, 100L, Validator.between(0, 1_000_000_000),
          "cluster.enabled: loads below this many partition requests/s per unit of capacity count as this, so a lightly used cluster never sheds; changes below it are not published. Must be the same on every node.")
      .define(CLUSTER_LOAD_WINDOW_MS, Type.LONG, 60_000L, Validator.between(1_000, 3_600_000),
          "cluster.enabled: time constant of the moving average of this node's load (partition requests/s it serves), in ms; a longer one reacts more slowly to bursts.")
      .define(CLUSTER_LOAD_PUBLISH_INTERVAL_MS, Type.LONG, 10_000L, Validator.between(1_000, 3_600_000),
          "cluster.enabled: this node rewrites its load in its ZooKeeper membership entry at most once per this many ms (each rewrite makes every node re-read the membership).")
      .define(CLUSTER_LOAD_CHANGE_THRESHOLD_PERCENT, Type.INT, 20, Validator.between(1, 1000),
          "cluster.enabled: this node rewrites its load only when it changed by more than this percent of the last published value (or of cluster.assignment.load.floor.per.sec x capacity, if larger).")
      .section("Cluster peer port (forwarding between nodes)")
      .define(CLUSTER_PEER_HOST, Type.STRING, "0.0.0.0", Validator.nonEmpty(),
          "Interface the peer port listens on; other nodes forward requests for partitions this node owns to it.")
      .define(CLUSTER_PEER_PORT, Type.INT, 9092, Validator.between(0, 65535),
          "Peer port (0: any free port). Opened only in cluster mode; it accepts only nodes that prove the cluster secret.")
      .define(CLUSTER_PEER_SECRET, Type.STRING, "",
          null, "Cluster secret shared by every node (at least 16 characters); prefer cluster.peer.secret.file. Required in cluster mode.")
      .define(CLUSTER_PEER_SECRET_FILE, Type.STRING, "",
          null, "File holding the cluster secret (first line, at least 16 characters); wins over cluster.peer.secret.")
      .define(CLUSTER_PEER_SERVER_THREADS, Type.INT, 2, Validator.between(1, 256),
          "Netty I/O threads of the peer port (decode, hand to the task pool, write replies).")
      .define(CLUSTER_PEER_CLIENT_THREADS, Type.INT, 1, Validator.between(1, 64),
          "I/O threads of the client pool of each peer: every peer has its own, so a slow peer cannot hold up the others.")
      .define(CLUSTER_PEER_CLIENT_CONNECTIONS, Type.INT, 2, Validator.between(1, 64),
          "Connections to each peer.")
      .define(CLUSTER_PEER_CLIENT_PENDING_MAX, Type.INT, 10_000, Validator.between(1, 10_000_000),
          "Most forwarded requests waiting for one peer (queued or sent, not answered); past it a forward is refused at once with a retriable error.")
      .define(CLUSTER_PEER_CLIENT_MERGE, Type.BOOLEAN, true, null,
          "Merged send: one send thread per peer packs every request pending for that peer into one frame; false sends one frame per request.")
      .define(CLUSTER_PEER_CONNECT_TIMEOUT_MS, Type.LONG, 1_000L, Validator.between(10, 60_000),
          "Longest a connection to a peer (TCP connect and handshake) may take; a peer that does not answer in time gets a retriable error.")
      .define(CLUSTER_PEER_HANDSHAKE_TIMEOUT_MS, Type.LONG, 2_000L, Validator.between(10, 60_000),
          "The peer port closes a connection that has not proved the cluster secret within this time.")
      .define(CLUSTER_PEER_REQUEST_TIMEOUT_MS, Type.LONG, 10_000L, Validator.between(10, 600_000),
          "Longest a forwarded request waits for the owner's answer (capped by the request's own deadline); then it is answered REQUEST_PROCESS_TIMEOUT (retriable).")
      .define(CLUSTER_PEER_MAX_FRAME_BYTES, Type.INT, 64 * 1024 * 1024, Validator.between(64 * 1024, 1 << 30),
          "Largest peer frame; its length prefix is checked before anything is allocated, a longer frame closes the connection. Must be at least server.request.max.bytes plus 64 KiB.")
      .section("Server log file")
      .define(LOG_FILE_MAX_BYTES, Type.LONG, 100L * 1024 * 1024, Validator.between(1024, 1L << 40),
          "With --log-file (and so with --daemon): the server log is rolled when it reaches this size in bytes (FILE becomes FILE.1, FILE.1 becomes FILE.2, ...).")
      .define(LOG_FILE_BACKUPS, Type.INT, 10, Validator.between(0, 1000),
          "With --log-file: how many rolled server log files (FILE.1 ... FILE.N) are kept; the oldest is deleted. 0 keeps none (the log is truncated when it rolls).")
      .definePrefix(HADOOP_PREFIX,
          "hadoop.<key>=<value> is passed to the Hadoop Configuration as <key> (e.g. hadoop.dfs.replication=3).")
      .definePrefix(HBASE_PREFIX,
          "hbase.<key>=<value> is passed unchanged to the HBase client Configuration of metadata.store=hbase (e.g. hbase.client.retries.number=5); it overrides the metadata.hbase.* keys.");

  private static Validator hbaseNamespace() {
    return v -> v.toString().matches("[A-Za-z0-9_]+") ? null
        : "must be a valid HBase namespace: letters, digits and _ only";
  }

  private static Validator priorityClasses() {
    return v -> {
      java.util.List<String> classes = java.util.Arrays.asList(v.toString().split(","));
      return classes.contains("put") && classes.contains("get") && new java.util.HashSet<>(classes).size() == classes.size()
          ? null : "must be distinct comma-separated names including put and get";
    };
  }

  private static Validator threadSlice() {
    return v -> ThreadSlice.isAllowed(((Number) v).intValue()) ? null
        : "must be 0 (the kernel's default) or between " + ThreadSlice.MIN_US + " and " + ThreadSlice.MAX_US;
  }

  private static Validator fraction() {
    return v -> {
      try {
        double d = Double.parseDouble(v.toString());
        return d > 0 && d <= 1 ? null : "must be a number in (0, 1]";
      } catch (NumberFormatException e) {
        return "must be a number in (0, 1]";
      }
    };
  }

  public ServerConfig(Properties props) {
    super(DEF, props);
  }

  /**
   * Keys naming a local file or directory. In a configuration file a relative value is taken
   * relative to that file's directory (so a configuration works wherever the server is started
   * from); on the command line ({@code -D}, {@code --data-dir}) relative to the working directory.
   */
  public static final java.util.List<String> PATH_KEYS = java.util.List.of(DATA_DIR, METADATA_DIR, ADMIN_CREDENTIAL_FILE,
      TLS_KEYSTORE_PATH, TLS_TRUSTSTORE_PATH, CLUSTER_PEER_SECRET_FILE);

  /**
   * Reads {@code file} (if not null), resolves its relative paths against its directory (see
   * {@link #PATH_KEYS}; {@code storage.root.uri} too when it is a {@code file:} URI with a relative
   * path), then applies {@code overrides}.
   *
   * @throws io.talos.common.config.ConfigException when the file is missing or unreadable (the message names it)
   */
  /**
   * The tail cache's size for storage at {@code storage}: {@code configured}, or for {@link
   * #TAIL_CACHE_AUTO} none on the local file system (scheme {@code file}) and {@link
   * #TAIL_CACHE_HDFS_BYTES} elsewhere.
   */
  public static long tailCacheBytes(long configured, java.net.URI storage) {
    if (configured != TAIL_CACHE_AUTO) return configured;
    return "file".equals(storage.getScheme()) ? 0 : TAIL_CACHE_HDFS_BYTES;
  }

  public static ServerConfig load(Path file, Properties overrides) throws IOException {
    Properties props = new Properties();
    if (file != null) {
      if (!Files.exists(file)) {
        throw new io.talos.common.config.ConfigException("configuration file " + file + " (--conf) does not exist");
      }
      if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
        throw new io.talos.common.config.ConfigException("configuration file " + file + " (--conf) is not a readable file");
      }
      try (InputStream in = Files.newInputStream(file)) {
        props.load(in);
      }
      resolveRelativePaths(props, file.toAbsolutePath().normalize().getParent());
    }
    props.putAll(overrides);
    return new ServerConfig(props);
  }

  static void resolveRelativePaths(Properties props, Path base) {
    for (String key : PATH_KEYS) {
      String v = props.getProperty(key);
      if (v == null || v.trim().isEmpty()) continue;
      Path p = Path.of(v.trim());
      if (!p.isAbsolute()) props.setProperty(key, base.resolve(p).normalize().toString());
    }
    String root = props.getProperty(STORAGE_ROOT_URI);
    if (root != null && root.trim().startsWith("file:")) {
      // file:relative/dir or file:./dir (a URI with no authority and a relative path)
      String path = root.trim().substring("file:".length());
      if (!path.startsWith("/")) props.setProperty(STORAGE_ROOT_URI, base.resolve(path).normalize().toUri().toString());
    }
  }

  public Path dataDir() {
    return Path.of(getString(DATA_DIR)).toAbsolutePath().normalize();
  }

  public String storageRootUri() {
    String uri = getString(STORAGE_ROOT_URI);
    return uri == null || uri.isEmpty() ? dataDir().resolve("log").toUri().toString() : uri;
  }

  /** {@value #STORAGE_IO_THREADS} with -1 resolved: 0 on a local file system, else 32. */
  public int storageIoThreads() {
    int threads = getInt(STORAGE_IO_THREADS);
    if (threads >= 0) return threads;
    return "file".equalsIgnoreCase(java.net.URI.create(storageRootUri()).getScheme()) ? 0 : 32;
  }

  public Path metadataDir() {
    String dir = getString(METADATA_DIR);
    return dir == null || dir.isEmpty() ? dataDir().resolve("metadata") : Path.of(dir).toAbsolutePath();
  }

  /** Undeclared {@code hbase.*} keys, whole (HBase's own keys start with {@code hbase.}). */
  public java.util.Map<String, String> hbasePassThrough() {
    java.util.Map<String, String> out = new java.util.LinkedHashMap<>();
    withPrefix(HBASE_PREFIX).forEach((k, v) -> out.put(HBASE_PREFIX + k, v));
    return out;
  }

  public Path adminCredentialFile() {
    String f = getString(ADMIN_CREDENTIAL_FILE);
    return f == null || f.isEmpty() ? dataDir().resolve("admin-credential.properties") : Path.of(f).toAbsolutePath();
  }
}
