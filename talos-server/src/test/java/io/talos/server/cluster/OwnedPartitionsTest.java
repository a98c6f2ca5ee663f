package io.talos.server.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.server.ManualClock;
import io.talos.server.cluster.OwnedPartitions.NotOwnedException;
import io.talos.server.metadata.PartitionOwner;
import io.talos.server.metadata.PartitionOwnerEpochs;
import io.talos.server.storage.LogConfig;
import io.talos.server.storage.PartitionLogs;
import java.net.URI;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The claim of a partition by {@link OwnedPartitions}, the write gate of a cluster node: a
 * partition routed here is claimed (owner epoch, then the log's open) only once this node's
 * ZooKeeper session is confirmed alive; while it is not, the write is refused and neither the
 * epochs nor the logs are touched. Real routing and logs (local file system); the owner epochs in
 * memory, counting claims.
 */
class OwnedPartitionsTest {
  private static final String TOPIC = "o#t#1";

  private static NodeInfo node(String id) {
    return new NodeInfo(id, "http://" + id, id, 0, NodeState.ACTIVE, 1);
  }

  /** Owner epochs kept in memory, like the HBase cells: one more per claim. Thread-safe. */
  private static final class CountingEpochs implements PartitionOwnerEpochs {
    private final Map<String, PartitionOwner> stored = new HashMap<>();
    private int claims;

    @Override
    public synchronized PartitionOwner claimPartitionOwner(String topicResourceName, int partitionId, String nodeId) {
      claims++;
      PartitionOwner before = stored.get(topicResourceName + "/" + partitionId);
      PartitionOwner claimed = new PartitionOwner(before == null ? 1 : before.epoch() + 1, nodeId);
      stored.put(topicResourceName + "/" + partitionId, claimed);
      return claimed;
    }

    @Override
    public synchronized Optional<PartitionOwner> partitionOwner(String topicResourceName, int partitionId) {
      return Optional.ofNullable(stored.get(topicResourceName + "/" + partitionId));
    }

    synchronized int claims() {
      return claims;
    }
  }

  @Test
  void shouldClaimAPartitionRoutedHereOnlyOnceTheSessionIsConfirmed(@TempDir Path dir) throws Exception {
    ManualClock clock = new ManualClock(1_000);
    AssignmentRouting routing = new AssignmentRouting(node("a"), 16, 1_000, clock);
    routing.apply(new MembershipView(5, List.of(node("a"))));
    routing.connected(true);
    assertEquals(PartitionRouting.Route.Kind.LOCAL, routing.route("t", 0).kind(), "routed here and serving");
    assertEquals(PartitionRouting.Route.Kind.LOCAL, routing.route("t", 1).kind());
    CountingEpochs epochs = new CountingEpochs();
    try (FileSystem fs = PartitionLogs.fileSystemFor(URI.create("file:///"), new Configuration());
        PartitionLogs logs = new PartitionLogs(fs, new org.apache.hadoop.fs.Path(dir.resolve("data").toUri()),
            LogConfig.defaults(), clock)) {
      // A log of partition 0 open before the gate is set: a claim releases it first, so a release shows.
      logs.log(TOPIC, 0);
      assertEquals(1, logs.openedLogs());
      OwnedPartitions owned = new OwnedPartitions(routing, epochs, logs);
      logs.writeGate(owned);
      AtomicInteger asked = new AtomicInteger();
      owned.confirmSessionWith(() -> {
        asked.incrementAndGet();
        return false;
      });

      NotOwnedException refused = assertThrows(NotOwnedException.class, () -> owned.checkWritable(TOPIC, 0));
      assertTrue(refused.getMessage().contains("partition 0 of " + TOPIC + " is not claimed"), refused.getMessage());
      assertTrue(refused.getMessage().contains("ZooKeeper session is not confirmed alive"), refused.getMessage());
      assertEquals(1, asked.get(), "the session was asked once, before the claim");
      assertEquals(0, epochs.claims(), "no owner epoch claimed");
      assertEquals(Optional.empty(), epochs.partitionOwner(TOPIC, 0));
      assertNull(owned.owned(TOPIC, 0));
      assertEquals(0, owned.ownedCount());
      assertTrue(logs.isOpen(TOPIC, 0), "the log open before was not released");

      // Through the logs (what an append does): refused before any open.
      assertThrows(NotOwnedException.class, () -> logs.log(TOPIC, 1));
      assertFalse(logs.isOpen(TOPIC, 1), "no log opened");
      assertEquals(1, logs.openedLogs());
      assertEquals(2, asked.get(), "each request asks again: a refusal is not remembered");
      assertEquals(0, epochs.claims());

      owned.confirmSessionWith(() -> {
        asked.incrementAndGet();
        return true;
      });
      owned.checkWritable(TOPIC, 0);
      assertEquals(3, asked.get());
      assertEquals(1, epochs.claims(), "one owner epoch claimed");
      assertEquals(new PartitionOwner(1, "a"), owned.owned(TOPIC, 0));
      assertEquals(Optional.of(new PartitionOwner(1, "a")), epochs.partitionOwner(TOPIC, 0));
      assertFalse(logs.isOpen(TOPIC, 0), "the earlier log was released before the claim");
      logs.log(TOPIC, 0);
      assertEquals(2, logs.openedLogs(), "opened afresh under the claim");

      // Held now: later writes neither claim again nor ask ZooKeeper.
      owned.checkWritable(TOPIC, 0);
      logs.log(TOPIC, 0);
      assertEquals(1, epochs.claims());
      assertEquals(3, asked.get(), "one round trip per claim, none per write of a held partition");
      assertEquals(1, owned.ownedCount());
    }
  }
}
