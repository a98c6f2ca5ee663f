package io.talos.server.cluster;

import io.talos.common.TopicNames;
import io.talos.server.metadata.MetadataException;
import io.talos.server.metadata.PartitionOwner;
import io.talos.server.metadata.PartitionOwnerEpochs;
import io.talos.server.storage.PartitionFencedException;
import io.talos.server.storage.PartitionLogs;
import io.talos.server.storage.PartitionWriteGate;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The partitions this node has taken over, with their owner epochs: the write side of the
 * ownership protocol (docs/cluster.md, "Ownership and fencing").
 *
 * <p>As the {@link PartitionWriteGate} of the node's {@link PartitionLogs}, it is asked before every
 * append (and before a log is opened for writing): a partition that the {@link AssignmentRouting}
 * does not route LOCAL (another owner, not connected, draining) is refused with {@link
 * NotOwnedException} (PARTITION_NOT_SERVING, retriable), so a non-owner never opens a partition
 * for writing. On the first use of a partition it owns, the node claims the next owner epoch in
 * HBase ({@link PartitionOwnerEpochs#claimPartitionOwner}, one compare-and-set), then lets the
 * open proceed: that claims the partition directory on HDFS (a newer owner marker), recovers the
 * lease of every segment still open and reads their recovered length before the first append is
 * acknowledged. A log found fenced while the assignment still says this node owns it (another
 * node claimed it under a stale view) is released and claimed again. Every claim (first or again)
 * waits for a round trip to ZooKeeper confirming this node's session is alive ({@link
 * #confirmSessionWith}): a node woken from a pause longer than its session still holds its old
 * view and believes itself connected until its ZooKeeper client reports the loss, and a claim
 * then would recover the new owner's lease under its live writes.
 *
 * <p>{@link #reconcile} (after every new view or loss of the connection) releases every partition
 * no longer served here: its log is closed (after the append under way) and sealed unless another
 * node took it over already.
 *
 * <p>Thread-safe: claims and releases of one partition are serialized by a striped lock.
 */
public final class OwnedPartitions implements PartitionWriteGate {
  private static final Logger LOG = LoggerFactory.getLogger(OwnedPartitions.class);

  private record Key(String topicResourceName, int partitionId) {}

  private final AssignmentRouting routing;
  private final PartitionOwnerEpochs epochs;
  private final PartitionLogs logs;
  private final Map<Key, PartitionOwner> owned = new ConcurrentHashMap<>();
  /** Asked before every claim (first or again): true only if this node's session is confirmed alive now. */
  private volatile BooleanSupplier sessionConfirmed = () -> true;
  private final Object[] locks = new Object[64];

  public OwnedPartitions(AssignmentRouting routing, PartitionOwnerEpochs epochs, PartitionLogs logs) {
    this.routing = routing;
    this.epochs = epochs;
    this.logs = logs;
    for (int i = 0; i < locks.length; i++) locks[i] = new Object();
  }

  /** The partition is not served by this node now; the client retries (after refreshing its routes). */
  public static final class NotOwnedException extends PartitionFencedException {
    public NotOwnedException(String message) {
      super(message);
    }
  }

  private Object lock(Key k) {
    return locks[Math.floorMod(k.hashCode(), locks.length)];
  }

  /**
   * How a claim confirms this node's session first (a ZooKeeper round trip, once per claim: the
   * claim itself costs an HBase compare-and-set and the HDFS open).
   */
  public void confirmSessionWith(BooleanSupplier sessionConfirmed) {
    this.sessionConfirmed = sessionConfirmed;
  }

  @Override
  public void checkWritable(String topicResourceName, int partitionId) throws IOException {
    Key key = new Key(topicResourceName, partitionId);
    checkRoutedHere(key);
    if (owned.containsKey(key) && !logs.isFenced(topicResourceName, partitionId)) return;
    synchronized (lock(key)) {
      PartitionOwner held = owned.get(key);
      if (held != null && !logs.isFenced(topicResourceName, partitionId)) return;
      // Before any claim (a fenced one stays in owned until then, so the next request asks again).
      if (!sessionConfirmed.getAsBoolean()) {
        throw new NotOwnedException("partition " + partitionId + " of " + topicResourceName + " is not claimed:"
            + " this node's ZooKeeper session is not confirmed alive (its view of the owners may be stale)");
      }
      if (held != null) {
        owned.remove(key);
        LOG.info("Partition {} of {} was taken over under epoch > {} while assigned here; claiming it again",
            partitionId, topicResourceName, held.epoch());
      }
      logs.release(topicResourceName, partitionId); // no stale log or fenced state from an earlier ownership
      PartitionOwner claimed;
      try {
        claimed = epochs.claimPartitionOwner(topicResourceName, partitionId, routing.localNode().id());
      } catch (MetadataException e) {
        throw new IOException("cannot claim the owner epoch of partition " + partitionId + " of " + topicResourceName
            + ": " + e.getMessage(), e);
      }
      checkRoutedHere(key); // the view may have moved while claiming
      owned.put(key, claimed);
      LOG.info("Took over partition {} of {} at owner epoch {}", partitionId, topicResourceName, claimed.epoch());
    }
  }

  private void checkRoutedHere(Key key) throws NotOwnedException {
    String name = TopicNames.topicNameOf(key.topicResourceName());
    PartitionRouting.Route route = routing.route(name == null ? key.topicResourceName() : name, key.partitionId());
    if (route.kind() == PartitionRouting.Route.Kind.LOCAL) return;
    throw new NotOwnedException("partition " + key.partitionId() + " of " + key.topicResourceName()
        + " is not served by node " + routing.localNode().id() + (route.node() != null
        ? " (assignment version " + routing.version() + " places it on node " + route.node().id() + ")"
        : routing.serving() ? " (no node is active)" : " (this node is draining or lost its ZooKeeper session)")
        + "; retry");
  }

  /** Releases every owned partition that is no longer routed here. @return how many */
  public int reconcile() {
    int released = 0;
    for (Key key : new ArrayList<>(owned.keySet())) {
      try {
        checkRoutedHere(key);
        continue;
      } catch (NotOwnedException e) {
        // released below
      }
      synchronized (lock(key)) {
        if (owned.remove(key) == null) continue;
        logs.release(key.topicResourceName(), key.partitionId());
        released++;
      }
    }
    if (released > 0) LOG.info("Released {} partitions no longer served here", released);
    return released;
  }

  /**
   * Releases (closes the logs of) every held partition of a topic incarnation not in {@code
   * liveResourceNames}: a topic deleted through another node. The assignment hashes names, so it
   * would keep such partitions here. @return how many
   */
  public int releaseDeletedTopics(java.util.Set<String> liveResourceNames) {
    int released = 0;
    for (Key key : new ArrayList<>(owned.keySet())) {
      if (liveResourceNames.contains(key.topicResourceName())) continue;
      synchronized (lock(key)) {
        if (owned.remove(key) == null) continue;
        logs.release(key.topicResourceName(), key.partitionId());
        released++;
      }
    }
    if (released > 0) LOG.info("Released {} partitions of deleted topics", released);
    return released;
  }

  /** Partitions taken over and held now. */
  public int ownedCount() {
    return owned.size();
  }

  /** The epoch this node holds the partition at, or null. */
  public PartitionOwner owned(String topicResourceName, int partitionId) {
    return owned.get(new Key(topicResourceName, partitionId));
  }
}
