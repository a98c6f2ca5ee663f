package io.talos.server.metadata;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Durable cluster metadata: topics, consumer-group workers, partition locks, committed offsets
 * and credentials. Storage-neutral: an embedded implementation serves one machine, an HBase one
 * a cluster; both pass the same contract test suite.
 *
 * <p>Contract for every implementation:
 * <ul>
 *   <li>Every method is atomic and linearizable with respect to all callers of the same store,
 *   including other store instances on the same backing storage. Conditional writes
 *   (create-if-absent, compare-and-set, lock-if-free) are single atomic operations, never
 *   read-then-write.
 *   <li>A method that returned has made its change durable (survives a crash of the process).
 *   <li>Expiry decisions take the caller's {@code nowMs} and {@code ttlMs} (tests step time that
 *   way). In a server, {@code nowMs} is always {@link #timeMs()}, the store's own time, never a
 *   node's clock: nodes whose clocks disagree still judge every registration and lock alike.
 *   <li>Consumer state is keyed by the topic's resource name (ownerId#name#suffix), so a deleted
 *   and re-created topic of the same name starts with no workers, locks or offsets.
 *   <li>Failures of the backing store surface as {@link MetadataException}; a failed call leaves
 *   no partial change.
 * </ul>
 * Thread-safe.
 */
public interface MetadataStore extends AutoCloseable {

  // ---- topics -------------------------------------------------------------------------------

  /** Creates the topic iff no topic of that name exists. @return false if one exists */
  boolean createTopic(TopicRecord topic);

  Optional<TopicRecord> topic(String name);

  /** All topics, sorted by name (see the class comment on consistency across topics). */
  List<TopicRecord> topics();

  /**
   * Replaces {@code expected} by {@code updated} iff the stored record of that name still has
   * {@code expected.version()}; the stored version becomes {@code expected.version() + 1}
   * whatever {@code updated.version()} says.
   *
   * @return false if the topic is gone or changed since {@code expected} was read (a deleted and
   *     re-created topic counts as gone, whatever its version)
   * @throws IllegalArgumentException if {@code updated} has another name or resource name than
   *     {@code expected}: a topic's identity never changes
   */
  boolean replaceTopic(TopicRecord expected, TopicRecord updated);

  /**
   * Deletes the topic iff its resource name is {@code resourceName}, with all consumer state
   * (workers, locks, offsets) keyed by that resource name.
   *
   * @return false if no such topic
   */
  boolean deleteTopic(String name, String resourceName);

  // ---- consumer groups ----------------------------------------------------------------------

  /**
   * The store's own time, in ms: the one time base of consumer-group expiry (worker
   * registrations, partition locks) for every node sharing the store, so no two nodes' clocks are
   * ever compared. Never goes backwards. It may cost a round trip to the store (HBase: one
   * increment, whose cell timestamp the region server assigns).
   */
  long timeMs();

  /** Registers the worker or refreshes its registration to {@code nowMs}. */
  void registerWorker(String group, String topicResourceName, String workerId, long nowMs);

  /** Removes the worker's registration. @return false if it was not registered */
  boolean removeWorker(String group, String topicResourceName, String workerId);

  /** Registered workers → last registration/renewal time (ms), expired ones included. */
  Map<String, Long> workers(String group, String topicResourceName);

  /**
   * Takes or refreshes the lock of one partition for {@code workerId} iff the lock is free, held
   * by the same worker, or expired ({@code lastRenewMs + ttlMs <= nowMs}). On success the lock's
   * renewal time becomes {@code nowMs}. A worker that did not hold the lock (it was free, expired
   * under another worker, or released) gets a new fencing token, greater than every token issued
   * for this partition lock before (releases included); a refresh by the holder keeps its token.
   *
   * @return true if {@code workerId} holds the lock afterwards
   */
  boolean lockPartition(String group, String topicResourceName, int partitionId, String workerId,
      long nowMs, long ttlMs);

  /** Releases the lock iff held by {@code workerId}. @return false if it was not theirs */
  boolean unlockPartition(String group, String topicResourceName, int partitionId, String workerId);

  /** Current locks by partition id, expired ones included. */
  Map<Integer, PartitionLock> partitionLocks(String group, String topicResourceName);

  /**
   * Commits {@code offset} iff {@code workerId} holds a live (unexpired at {@code nowMs}) lock on
   * the partition under fencing token {@code fencingToken}, atomically with that check: a
   * commit of a worker whose lock was taken over in between, even if that worker holds the lock
   * again under a newer token, is refused.
   *
   * @return false if the worker does not hold the lock under that token
   */
  boolean commitOffset(String group, String topicResourceName, int partitionId, String workerId,
      long fencingToken, long offset, long nowMs, long ttlMs);

  /** Commits {@code offset} unconditionally (administrative reset). */
  void setOffset(String group, String topicResourceName, int partitionId, long offset);

  OptionalLong committedOffset(String group, String topicResourceName, int partitionId);

  /**
   * The consumer groups of the topic incarnation: every group with a registered worker, a
   * partition lock or a committed offset (expired ones included), sorted.
   */
  java.util.SortedSet<String> consumerGroups(String topicResourceName);

  // ---- partition log next offsets (storage) ---------------------------------------------------

  /**
   * Raises the recorded next offset of one partition's log to {@code nextOffset}, atomically
   * (compare-and-set, never read-then-write); a value at or below the recorded one leaves it
   * unchanged, so it never goes backwards. The partition logs raise it when they open, roll a
   * segment and close, and refuse to open below it: a log whose files are gone is noticed
   * instead of restarting at offset 0. Keyed by the topic's resource name like consumer state:
   * {@link #deleteTopic} removes it.
   *
   * @throws IllegalArgumentException if {@code partitionId} or {@code nextOffset} is negative
   */
  void raisePartitionNextOffset(String topicResourceName, int partitionId, long nextOffset);

  /** The recorded next offset of the partition's log, or empty if none was recorded. */
  OptionalLong partitionNextOffset(String topicResourceName, int partitionId);

  // ---- credentials --------------------------------------------------------------------------

  /** @return false if a credential with that key id exists (it is left unchanged) */
  boolean putCredentialIfAbsent(Credential credential);

  Optional<Credential> credential(String secretKeyId);

  /** Every credential, revoked ones included, sorted by key id. */
  List<Credential> credentials();

  /**
   * Replaces {@code expected} by {@code updated} iff the stored credential of that key id still
   * equals {@code expected} in every field (compare-and-set: a rotation or revocation racing
   * another one on any node loses and is retried by the caller on fresh data).
   *
   * @return false if the credential is gone or changed since {@code expected} was read
   * @throws IllegalArgumentException if {@code updated} has another key id or owner than
   *     {@code expected}: a credential's identity never changes
   */
  boolean replaceCredential(Credential expected, Credential updated);

  // ---- topic deletion tombstones and health ------------------------------------------------
  // (one block for deletion safety; keep other additions in their own block)

  /**
   * Records that the data of the topic incarnation {@code topicResourceName} is to be deleted.
   * Written before the topic's metadata is removed, so a deletion interrupted at any point is
   * found and finished later, and a data directory with neither a topic nor a tombstone is never
   * mistaken for one to delete. Idempotent: if a tombstone exists it is kept with its first
   * time.
   *
   * @param nowMs when the deletion was requested (the caller's clock)
   */
  void putTopicTombstone(String topicResourceName, long nowMs);

  /** Pending tombstones: resource name → when the deletion was requested (ms), sorted by name. */
  Map<String, Long> topicTombstones();

  /** Removes the tombstone once the data is gone. @return false if there was none */
  boolean removeTopicTombstone(String topicResourceName);

  /**
   * A cheap health probe for the ops endpoint: empty while the store can serve calls, else why
   * it cannot (for example: failed and not yet reopened, or closed). Does no remote I/O and may
   * try a local recovery; never throws.
   */
  Optional<String> probe();

  // ---- end of topic deletion tombstones and health -----------------------------------------

  // ---- user quotas (own block) ----------------------------------------------------------------

  /** The quota set for an account, or empty when none is (the node's defaults apply). */
  Optional<RateQuota> userQuota(String accountId);

  /** Every account with a quota, sorted by account id. */
  Map<String, RateQuota> userQuotas();

  /** Sets (or replaces) the account's quota. */
  void putUserQuota(String accountId, RateQuota quota);

  /** @return false if the account had no quota */
  boolean deleteUserQuota(String accountId);

  // ---- end of user quotas ---------------------------------------------------------------------

  @Override
  void close();
}
