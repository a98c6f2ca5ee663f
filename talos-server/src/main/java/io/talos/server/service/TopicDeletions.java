package io.talos.server.service;

import io.talos.common.TopicNames;
import io.talos.server.metadata.MetadataStore;
import io.talos.server.metadata.TopicRecord;
import io.talos.server.storage.PartitionLogs;
import java.io.IOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Topic deletion that never loses track of data and never deletes data it was not told to.
 *
 * <p>A deletion is four steps, each idempotent: (1) a tombstone for the topic's resource name in
 * the metadata store ({@link MetadataStore#putTopicTombstone}); (2) the topic's metadata is
 * removed (the commit point: no request reaches the topic afterwards); (3) its partition
 * directories are deleted; (4) the tombstone is removed. A deletion interrupted anywhere (crash,
 * storage or metadata failure) leaves its tombstone, and {@link #runOnce()} (at startup and
 * then periodically) finishes it: a tombstoned topic still present is deleted (the deletion was
 * requested; a client retrying it would do the same), then its data, then the tombstone.
 *
 * <p>Data is deleted only for a tombstone. A topic directory with neither a live topic nor a
 * tombstone (an "orphan": metadata lost or restored from an older backup, another metadata
 * store or namespace pointed at the same storage, a directory copied in by hand) is reported in
 * the log and by {@link #orphans()} (the ops endpoint's {@code GET /ops/orphans}) and left alone.
 * {@link #checkStartup} refuses to start on an empty metadata store over a storage root that
 * holds topic data.
 *
 * <p>Thread-safe: {@link #runOnce()} runs on one scheduler thread, {@link #delete} on request
 * threads; both may work on the same tombstone, and every step tolerates the other having done
 * it.
 */
public final class TopicDeletions {
  private static final Logger LOG = LoggerFactory.getLogger(TopicDeletions.class);

  /** How many names a startup refusal lists before "and N more". */
  private static final int NAMES_SHOWN = 10;

  private final MetadataStore metadata;
  private final PartitionLogs logs;
  private final Clock clock;
  /** Told the name of each topic whose metadata this node removed (per-topic state such as meters is dropped). */
  private final java.util.function.Consumer<String> topicRemoved;
  private volatile List<Orphan> orphans = List.of();
  /** Orphans already logged, so each is warned about once per process, not every pass. */
  private final Set<String> reported = Collections.synchronizedSet(new HashSet<>());

  /** A topic directory with neither a topic nor a tombstone: reported, never deleted. */
  public record Orphan(String resourceName, String path) {}

  public TopicDeletions(MetadataStore metadata, PartitionLogs logs, Clock clock) {
    this(metadata, logs, clock, name -> { });
  }

  /**
   * @param topicRemoved called with a topic's name once its metadata is removed, by
   *     {@link #delete} or by {@link #runOnce()} finishing an interrupted deletion (not when a new
   *     topic of that name exists by then); must not throw
   */
  public TopicDeletions(MetadataStore metadata, PartitionLogs logs, Clock clock,
      java.util.function.Consumer<String> topicRemoved) {
    this.metadata = metadata;
    this.logs = logs;
    this.clock = clock;
    this.topicRemoved = topicRemoved;
  }

  /**
   * Refuses to start when the metadata store has no topics and no tombstones but the storage
   * root holds topic directories: the store is probably not the one that data belongs to (lost,
   * wrong namespace, switched to HBase, another node's). Nothing is deleted either way.
   *
   * @param acceptOrphanData start anyway (the directories are then reported as orphans)
   * @throws IllegalStateException saying what was found and how to start anyway
   */
  public static void checkStartup(MetadataStore metadata, PartitionLogs logs, String storeName,
      String storageRoot, boolean acceptOrphanData, String acceptFlag) throws IOException {
    List<String> dirs = logs.topicResourceNames();
    if (dirs.isEmpty() || !metadata.topics().isEmpty() || !metadata.topicTombstones().isEmpty()) {
      return;
    }
    List<String> sorted = dirs.stream().sorted().toList();
    String shown = String.join(", ", sorted.subList(0, Math.min(NAMES_SHOWN, sorted.size())))
        + (sorted.size() > NAMES_SHOWN ? " and " + (sorted.size() - NAMES_SHOWN) + " more" : "");
    if (acceptOrphanData) {
      LOG.warn("The metadata store {} has no topics but {} holds the data of {} topic(s) ({}); starting"
          + " anyway as asked: that data is kept and reported as orphaned, nothing is deleted",
          storeName, storageRoot, sorted.size(), shown);
      return;
    }
    throw new IllegalStateException("refusing to start: the metadata store " + storeName
        + " has no topics, but the storage root " + storageRoot + " holds the data of "
        + sorted.size() + " topic(s): " + shown + ". The metadata store may be lost, new, or not the"
        + " one this data belongs to (another embedded file, HBase namespace or cluster). Nothing"
        + " was deleted. Point the server at the metadata of this data, or start with "
        + acceptFlag + " to start anyway with the data kept untouched (reported as orphaned).");
  }

  /**
   * Deletes one topic incarnation (see the class comment).
   *
   * @return false if the topic of that resource name no longer exists (nothing was removed by
   *     this call; any tombstone it wrote is finished by {@link #runOnce()})
   * @throws io.talos.server.metadata.MetadataException if the tombstone or the metadata removal
   *     failed: the topic then still exists, or its deletion is finished later
   */
  public boolean delete(TopicRecord topic) {
    metadata.putTopicTombstone(topic.resourceName(), clock.millis());
    if (!metadata.deleteTopic(topic.name(), topic.resourceName())) {
      return false;
    }
    topicRemoved.accept(topic.name());
    finish(topic.resourceName());
    return true;
  }

  /**
   * Deletes the data of a topic whose metadata is gone, then its tombstone. A failure is logged
   * and left for the next {@link #runOnce()}.
   *
   * @return whether the deletion is complete
   */
  private boolean finish(String resourceName) {
    try {
      logs.deleteTopic(resourceName);
    } catch (IOException | RuntimeException e) {
      LOG.warn("Deleting the data of deleted topic {} failed; will retry: {}", resourceName, e.toString());
      return false;
    }
    try {
      metadata.removeTopicTombstone(resourceName);
    } catch (RuntimeException e) {
      LOG.warn("Removing the tombstone of deleted topic {} failed; will retry: {}", resourceName, e.toString());
      return false;
    }
    return true;
  }

  /**
   * One pass: finishes every pending deletion, then refreshes the orphan list. Called at startup
   * and periodically; a failure is logged and retried on the next pass.
   *
   * @return how many deletions were finished
   */
  public int runOnce() {
    int finished = 0;
    Map<String, Long> tombstones;
    try {
      tombstones = metadata.topicTombstones();
    } catch (RuntimeException e) {
      LOG.warn("Cannot read topic tombstones; will retry: {}", e.toString());
      return 0;
    }
    for (String resourceName : tombstones.keySet()) {
      try {
        String name = TopicNames.topicNameOf(resourceName);
        Optional<TopicRecord> live = name == null ? Optional.empty() : metadata.topic(name);
        if (live.isPresent() && live.get().resourceName().equals(resourceName)) {
          LOG.info("Finishing the interrupted deletion of topic {} ({})", name, resourceName);
          metadata.deleteTopic(name, resourceName);
          topicRemoved.accept(name);
        }
        if (finish(resourceName)) {
          finished++;
          LOG.info("Finished deleting the data of topic {}", resourceName);
        }
      } catch (RuntimeException e) {
        LOG.warn("Finishing the deletion of topic {} failed; will retry: {}", resourceName, e.toString());
      }
    }
    refreshOrphans();
    return finished;
  }

  private void refreshOrphans() {
    try {
      // Directories first, then topics, then tombstones: a directory's topic exists before the
      // directory does, and its tombstone before its metadata is removed, so a directory listed
      // here is not missed by both reads that follow.
      List<String> dirs = logs.topicResourceNames();
      Set<String> live = metadata.topics().stream().map(TopicRecord::resourceName)
          .collect(Collectors.toSet());
      Set<String> tombstoned = metadata.topicTombstones().keySet();
      List<Orphan> found = new ArrayList<>();
      for (String resourceName : dirs.stream().sorted().toList()) {
        if (live.contains(resourceName) || tombstoned.contains(resourceName)) continue;
        org.apache.hadoop.fs.Path dir = logs.topicDir(resourceName);
        if (!logs.fileSystem().exists(dir)) continue; // deleted since it was listed
        found.add(new Orphan(resourceName, dir.toString()));
        if (reported.add(resourceName)) {
          LOG.warn("Topic directory {} belongs to no topic in the metadata store and has no deletion"
              + " pending; left untouched (listed at GET /ops/orphans). Delete it by hand if it is"
              + " not needed, or restore the metadata it belongs to.", dir);
        }
      }
      orphans = List.copyOf(found);
    } catch (IOException | RuntimeException e) {
      LOG.warn("Cannot look for orphaned topic directories; will retry: {}", e.toString());
    }
  }

  /** Topic directories with neither a topic nor a tombstone, as of the last {@link #runOnce()}. */
  public List<Orphan> orphans() {
    return orphans;
  }
}
