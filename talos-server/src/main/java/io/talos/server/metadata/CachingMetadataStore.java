package io.talos.server.metadata;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Ticker;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Function;

/**
 * A {@link MetadataStore} that keeps the lookups every request makes, {@link #topic(String)}
 * (with the topic's ACL and quota), {@link #credential(String)} and {@link #userQuota(String)}, in bounded in-memory caches (Caffeine), so a put does no
 * metadata I/O. Everything else goes straight to the wrapped store.
 *
 * <p>Consistency: a change made through this store (create, replace or delete of a topic,
 * putting a credential) invalidates the entry after the change, and Caffeine makes an
 * invalidation wait for a load of the same key in flight, so a lookup that starts after the
 * change returns sees it: on this node, changes are seen at once. Changes made by other nodes
 * (a shared HBase store) are seen within {@code ttlMs}, when the entry expires. Absent results
 * are cached too (bounded like the rest), so an unknown key id costs one store read per TTL.
 * Failed lookups are not cached.
 *
 * <p>What this costs, for {@code ttlMs} after a change on another node: a request may still
 * see the topic's previous record (a topic deleted there still resolves here, and its writes go
 * to a partition the deletion removes; a partition count raised there is refused here), or an
 * unknown credential. Consumer state (locks, offsets) is never cached: it must be linearizable.
 *
 * <p>Thread-safe.
 */
public final class CachingMetadataStore implements MetadataStore {
  private final MetadataStore delegate;
  private final Cache<String, Optional<TopicRecord>> topics;
  private final Cache<String, Optional<Credential>> credentials;
  private final Cache<String, Optional<RateQuota>> userQuotas;

  /**
   * @param maxEntries bound of each of the caches (topics, credentials, user quotas)
   * @param ttlMs how long an entry is served after it was loaded, in ms
   * @param nanoTicker the time source of expiry, in nanoseconds (tests step it)
   */
  public CachingMetadataStore(MetadataStore delegate, long maxEntries, long ttlMs, Ticker nanoTicker) {
    if (maxEntries < 1 || ttlMs < 1) {
      throw new IllegalArgumentException("maxEntries and ttlMs must be >= 1, were " + maxEntries
          + " and " + ttlMs);
    }
    this.delegate = Objects.requireNonNull(delegate, "delegate");
    this.topics = Caffeine.newBuilder().maximumSize(maxEntries)
        .expireAfterWrite(Duration.ofMillis(ttlMs)).ticker(nanoTicker).build();
    this.credentials = Caffeine.newBuilder().maximumSize(maxEntries)
        .expireAfterWrite(Duration.ofMillis(ttlMs)).ticker(nanoTicker).build();
    this.userQuotas = Caffeine.newBuilder().maximumSize(maxEntries)
        .expireAfterWrite(Duration.ofMillis(ttlMs)).ticker(nanoTicker).build();
  }

  /**
   * Drops every cached topic: another node changed topics (the cluster's topic version moved), so
   * the next lookups read the store instead of waiting for the entries to expire.
   */
  public void invalidateTopics() {
    topics.invalidateAll();
  }

  /** The store this one caches. */
  public MetadataStore delegate() {
    return delegate;
  }

  /** Runs {@code change} on the delegate and then drops {@code key}, even if the change failed. */
  private static <K, V, R> R invalidating(Cache<K, V> cache, K key, Function<Void, R> change) {
    try {
      return change.apply(null);
    } finally {
      cache.invalidate(key); // the outcome of a failed change is unknown: reload next time
    }
  }

  // ---- cached -------------------------------------------------------------------------------

  @Override
  public Optional<TopicRecord> topic(String name) {
    Objects.requireNonNull(name, "name");
    return topics.get(name, delegate::topic);
  }

  @Override
  public Optional<Credential> credential(String secretKeyId) {
    Objects.requireNonNull(secretKeyId, "secretKeyId");
    return credentials.get(secretKeyId, delegate::credential);
  }

  @Override
  public boolean createTopic(TopicRecord topic) {
    return invalidating(topics, topic.name(), v -> delegate.createTopic(topic));
  }

  @Override
  public boolean replaceTopic(TopicRecord expected, TopicRecord updated) {
    return invalidating(topics, expected.name(), v -> delegate.replaceTopic(expected, updated));
  }

  @Override
  public boolean deleteTopic(String name, String resourceName) {
    return invalidating(topics, name, v -> delegate.deleteTopic(name, resourceName));
  }

  @Override
  public boolean putCredentialIfAbsent(Credential credential) {
    return invalidating(credentials, credential.secretKeyId(),
        v -> delegate.putCredentialIfAbsent(credential));
  }

  /**
   * Rotation and revocation: seen at once on this node, within {@code ttlMs} on the others (the
   * bound on how long a revoked credential may still authenticate somewhere).
   */
  @Override
  public boolean replaceCredential(Credential expected, Credential updated) {
    return invalidating(credentials, expected.secretKeyId(), v -> delegate.replaceCredential(expected, updated));
  }

  /** Read by every put and get (the quota check): cached like topics. */
  @Override
  public Optional<RateQuota> userQuota(String accountId) {
    Objects.requireNonNull(accountId, "accountId");
    return userQuotas.get(accountId, delegate::userQuota);
  }

  @Override
  public void putUserQuota(String accountId, RateQuota quota) {
    invalidating(userQuotas, accountId, v -> {
      delegate.putUserQuota(accountId, quota);
      return null;
    });
  }

  @Override
  public boolean deleteUserQuota(String accountId) {
    return invalidating(userQuotas, accountId, v -> delegate.deleteUserQuota(accountId));
  }

  @Override
  public Map<String, RateQuota> userQuotas() {
    return delegate.userQuotas();
  }

  // ---- passed through -----------------------------------------------------------------------

  @Override
  public List<Credential> credentials() {
    return delegate.credentials();
  }

  @Override
  public List<TopicRecord> topics() {
    return delegate.topics();
  }

  @Override
  public void registerWorker(String group, String topicResourceName, String workerId, long nowMs) {
    delegate.registerWorker(group, topicResourceName, workerId, nowMs);
  }

  @Override
  public boolean removeWorker(String group, String topicResourceName, String workerId) {
    return delegate.removeWorker(group, topicResourceName, workerId);
  }

  @Override
  public java.util.SortedSet<String> consumerGroups(String topicResourceName) {
    return delegate.consumerGroups(topicResourceName);
  }

  @Override
  public Map<String, Long> workers(String group, String topicResourceName) {
    return delegate.workers(group, topicResourceName);
  }

  @Override
  public boolean lockPartition(String group, String topicResourceName, int partitionId,
      String workerId, long nowMs, long ttlMs) {
    return delegate.lockPartition(group, topicResourceName, partitionId, workerId, nowMs, ttlMs);
  }

  @Override
  public boolean unlockPartition(String group, String topicResourceName, int partitionId,
      String workerId) {
    return delegate.unlockPartition(group, topicResourceName, partitionId, workerId);
  }

  @Override
  public Map<Integer, PartitionLock> partitionLocks(String group, String topicResourceName) {
    return delegate.partitionLocks(group, topicResourceName);
  }

  @Override
  public boolean commitOffset(String group, String topicResourceName, int partitionId,
      String workerId, long fencingToken, long offset, long nowMs, long ttlMs) {
    return delegate.commitOffset(group, topicResourceName, partitionId, workerId, fencingToken,
        offset, nowMs, ttlMs);
  }

  @Override
  public long timeMs() {
    return delegate.timeMs();
  }

  @Override
  public void setOffset(String group, String topicResourceName, int partitionId, long offset) {
    delegate.setOffset(group, topicResourceName, partitionId, offset);
  }

  @Override
  public OptionalLong committedOffset(String group, String topicResourceName, int partitionId) {
    return delegate.committedOffset(group, topicResourceName, partitionId);
  }

  // Partition next offsets are read when a log opens and raised when it rolls or closes: rare,
  // and they must be exact, so they are not cached.
  @Override
  public void raisePartitionNextOffset(String topicResourceName, int partitionId, long nextOffset) {
    delegate.raisePartitionNextOffset(topicResourceName, partitionId, nextOffset);
  }

  @Override
  public OptionalLong partitionNextOffset(String topicResourceName, int partitionId) {
    return delegate.partitionNextOffset(topicResourceName, partitionId);
  }

  @Override
  public void putTopicTombstone(String topicResourceName, long nowMs) {
    delegate.putTopicTombstone(topicResourceName, nowMs);
  }

  @Override
  public Map<String, Long> topicTombstones() {
    return delegate.topicTombstones();
  }

  @Override
  public boolean removeTopicTombstone(String topicResourceName) {
    return delegate.removeTopicTombstone(topicResourceName);
  }

  @Override
  public Optional<String> probe() {
    return delegate.probe();
  }

  @Override
  public void close() {
    topics.invalidateAll();
    credentials.invalidateAll();
    userQuotas.invalidateAll();
    delegate.close();
  }

  @Override
  public String toString() {
    return "CachingMetadataStore[" + delegate + "]";
  }
}
