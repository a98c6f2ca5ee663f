package io.talos.server.metadata;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The {@link MetadataStore} contract, run against every implementation: a subclass supplies a
 * fresh empty store and, if its storage outlives a store instance, a way to reopen it. Nothing
 * here knows the backing storage.
 *
 * <p>Time is always explicit ({@code nowMs}, {@code ttlMs}); no test sleeps or reads a clock.
 * Concurrency tests start {@value #THREADS} threads on one latch and check that exactly the
 * outcomes the contract allows happened.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class MetadataStoreContractTest {
  protected static final int THREADS = 8;
  protected static final String GROUP = "group-1";
  protected static final long TTL_MS = 1_000;

  /** The store under test; {@link #reopenStore()} replaces it. Closed after each test. */
  protected MetadataStore store;

  /** @return a new, empty store on its own storage */
  protected abstract MetadataStore newStore();

  /**
   * Closes {@code old} and opens a new store on the same storage. The default skips the tests
   * that need it.
   */
  protected MetadataStore reopen(MetadataStore old) {
    Assumptions.abort(getClass().getSimpleName() + " does not support reopening its storage");
    return old;
  }

  @BeforeEach
  void createStore() {
    store = newStore();
  }

  @AfterEach
  void closeStore() {
    if (store != null) {
      store.close();
    }
  }

  protected void reopenStore() {
    store = reopen(store);
  }

  protected static TopicRecord topic(String name, String suffix) {
    return new TopicRecord(name, "alice#" + name + "#" + suffix, "alice", 4, 86_400,
        Map.of("description", "a topic", "k2", "v2"), 1_700_000_000_000L, 0);
  }

  // ---- topics -------------------------------------------------------------------------------

  @Test
  void createTopicStoresTheRecordIfTheNameIsFree() {
    TopicRecord t = topic("orders", "s1");
    assertTrue(store.createTopic(t));
    assertEquals(Optional.of(t), store.topic("orders"));
  }

  @Test
  void createTopicReturnsFalseAndKeepsTheOriginalIfTheNameExists() {
    TopicRecord original = topic("orders", "s1");
    assertTrue(store.createTopic(original));
    TopicRecord other = new TopicRecord("orders", "bob#orders#s2", "bob", 16, 60, Map.of(), 5L, 0);
    assertFalse(store.createTopic(other));
    assertEquals(Optional.of(original), store.topic("orders"));
  }

  @Test
  void topicRecordRoundTripsEveryField() {
    TopicRecord t = new TopicRecord("t-1", "owner-9#t-1#x", "owner-9", Integer.MAX_VALUE,
        Integer.MAX_VALUE, Map.of("a", "", "unicode", "\u00e9\u4e2d\ud83d\ude00", "quote", "\"/%#"),
        Long.MAX_VALUE, 0);
    TopicRecord empty = new TopicRecord("t-2", "owner-9#t-2#y", "owner-9", 1, 0, Map.of(), 0L, 0);
    assertTrue(store.createTopic(t));
    assertTrue(store.createTopic(empty));
    assertEquals(Optional.of(t), store.topic("t-1"));
    assertEquals(Optional.of(empty), store.topic("t-2"));
  }

  @Test
  void topicOfUnknownNameIsEmpty() {
    assertEquals(Optional.empty(), store.topic("nope"));
    assertEquals(List.of(), store.topics());
  }

  @Test
  void topicsAreSortedByName() {
    List<String> names = List.of("t2", "t_1", "T3", "t10", "t-2", "a");
    for (String name : names) {
      assertTrue(store.createTopic(topic(name, "s")));
    }
    List<String> listed = store.topics().stream().map(TopicRecord::name).toList();
    assertEquals(names.stream().sorted().toList(), listed);
  }

  @Test
  void aclAndQuotaOfATopicAreStoredByCreateAndReplaceAndAStaleGrantLoses() {
    RateQuota quota = new RateQuota(-1, 10, -1, 1_048_576, 2_097_152, -1);
    TopicRecord v0 = topic("acl", "s1").withAcl(Map.of("bob", 6)).withQuota(quota);
    assertTrue(store.createTopic(v0));
    TopicRecord stored = store.topic("acl").orElseThrow();
    assertEquals(Map.of("bob", 6), stored.acl());
    assertEquals(quota, stored.quota());

    // A grant and a quota removal by compare-and-set; a stale writer loses and changes nothing.
    assertTrue(store.replaceTopic(stored, stored.withAcl(Map.of("bob", 6, "carol", 1)).withQuota(RateQuota.UNLIMITED)));
    assertFalse(store.replaceTopic(stored, stored.withAcl(Map.of())));
    TopicRecord v1 = store.topic("acl").orElseThrow();
    assertEquals(Map.of("bob", 6, "carol", 1), v1.acl());
    assertTrue(v1.quota().unlimited());
    // Other changes keep the grants.
    assertTrue(store.replaceTopic(v1, v1.withPartitionCount(4)));
    assertEquals(Map.of("bob", 6, "carol", 1), store.topic("acl").orElseThrow().acl());
    assertEquals(Map.of("bob", 6, "carol", 1), store.topics().get(0).acl());
  }

  @Test
  void userQuotasArePutListedReplacedAndDeleted() {
    RateQuota a = new RateQuota(-1, -1, -1, 1000, -1, 5);
    RateQuota b = new RateQuota(100, 1, 2, 3, 4, -1);
    assertTrue(store.userQuota("alice").isEmpty());
    store.putUserQuota("alice", a);
    store.putUserQuota("bob", b);
    assertEquals(a, store.userQuota("alice").orElseThrow());
    assertEquals(Map.of("alice", a, "bob", b), store.userQuotas());
    store.putUserQuota("alice", b);
    assertEquals(b, store.userQuota("alice").orElseThrow());
    assertTrue(store.deleteUserQuota("alice"));
    assertFalse(store.deleteUserQuota("alice"));
    assertEquals(Map.of("bob", b), store.userQuotas());
    // Quotas are not credentials.
    assertTrue(store.credentials().isEmpty());
  }

  @Test
  void replaceTopicSucceedsOnTheStoredVersionAndIncrementsIt() {
    TopicRecord v0 = topic("orders", "s1");
    assertTrue(store.createTopic(v0));

    assertTrue(store.replaceTopic(v0, v0.withPartitionCount(8)));
    TopicRecord v1 = store.topic("orders").orElseThrow();
    assertEquals(1, v1.version());
    assertEquals(8, v1.partitionCount());
    assertEquals(v0.withPartitionCount(8), new TopicRecord(v1.name(), v1.resourceName(),
        v1.ownerId(), v1.partitionCount(), v1.retentionSecs(), v1.attributes(),
        v1.createTimestampMs(), 0));

    // The stored version is expected + 1 whatever updated.version() says.
    TopicRecord claimsVersion99 = new TopicRecord("orders", v1.resourceName(), v1.ownerId(), 8,
        60, Map.of("x", "y"), v1.createTimestampMs(), 99);
    assertTrue(store.replaceTopic(v1, claimsVersion99));
    TopicRecord v2 = store.topic("orders").orElseThrow();
    assertEquals(2, v2.version());
    assertEquals(60, v2.retentionSecs());
    assertEquals(Map.of("x", "y"), v2.attributes());
  }

  @Test
  void replaceTopicFailsOnAStaleVersionAndChangesNothing() {
    TopicRecord v0 = topic("orders", "s1");
    assertTrue(store.createTopic(v0));
    assertTrue(store.replaceTopic(v0, v0.withRetentionSecs(10)));
    TopicRecord v1 = store.topic("orders").orElseThrow();

    assertFalse(store.replaceTopic(v0, v0.withPartitionCount(99)));
    assertEquals(Optional.of(v1), store.topic("orders"));
  }

  @Test
  void replaceTopicFailsWhenTheTopicIsGoneOrWasRecreated() {
    TopicRecord old = topic("orders", "s1");
    assertFalse(store.replaceTopic(old, old.withPartitionCount(8)));

    assertTrue(store.createTopic(old));
    assertTrue(store.deleteTopic("orders", old.resourceName()));
    TopicRecord recreated = topic("orders", "s2"); // same name and version 0, new resource
    assertTrue(store.createTopic(recreated));
    assertFalse(store.replaceTopic(old, old.withPartitionCount(8)));
    assertEquals(Optional.of(recreated), store.topic("orders"));
  }

  @Test
  void replaceTopicRejectsAChangeOfIdentity() {
    TopicRecord t = topic("orders", "s1");
    assertTrue(store.createTopic(t));
    assertThrows(IllegalArgumentException.class,
        () -> store.replaceTopic(t, topic("orders", "s2")));
    assertThrows(IllegalArgumentException.class,
        () -> store.replaceTopic(t, topic("other", "s1")));
    assertEquals(Optional.of(t), store.topic("orders"));
  }

  @Test
  void deleteTopicRequiresTheMatchingResourceName() {
    TopicRecord t = topic("orders", "s1");
    assertFalse(store.deleteTopic("orders", t.resourceName()));
    assertTrue(store.createTopic(t));

    assertFalse(store.deleteTopic("orders", "alice#orders#other"));
    assertEquals(Optional.of(t), store.topic("orders"));

    assertTrue(store.deleteTopic("orders", t.resourceName()));
    assertEquals(Optional.empty(), store.topic("orders"));
    assertFalse(store.deleteTopic("orders", t.resourceName()));
  }

  @Test
  void deleteTopicRemovesItsConsumerStateInEveryGroupAndNothingElse() {
    // "...#1" is a string prefix of "...#10": state of the one must not leak into the other.
    TopicRecord doomed = new TopicRecord("t", "alice#t#1", "alice", 2, 60, Map.of(), 0L, 0);
    TopicRecord kept = new TopicRecord("t1", "alice#t#10", "alice", 2, 60, Map.of(), 0L, 0);
    assertTrue(store.createTopic(doomed));
    assertTrue(store.createTopic(kept));
    for (String res : List.of(doomed.resourceName(), kept.resourceName())) {
      for (String group : List.of("g1", "g2")) {
        store.registerWorker(group, res, "w1", 100);
        assertTrue(store.lockPartition(group, res, 0, "w1", 100, TTL_MS));
        store.setOffset(group, res, 0, 7);
      }
    }
    TopicRecord doomedStale = topic("t", "other");
    assertFalse(store.deleteTopic("t", doomedStale.resourceName()));
    assertEquals(Map.of("w1", 100L), store.workers("g1", doomed.resourceName()));

    assertTrue(store.deleteTopic("t", doomed.resourceName()));

    for (String group : List.of("g1", "g2")) {
      assertEquals(Map.of(), store.workers(group, doomed.resourceName()));
      assertEquals(Map.of(), store.partitionLocks(group, doomed.resourceName()));
      assertEquals(OptionalLong.empty(), store.committedOffset(group, doomed.resourceName(), 0));

      assertEquals(Map.of("w1", 100L), store.workers(group, kept.resourceName()));
      assertEquals(Map.of(0, new PartitionLock(0, "w1", 100, 1)),
          store.partitionLocks(group, kept.resourceName()));
      assertEquals(OptionalLong.of(7), store.committedOffset(group, kept.resourceName(), 0));
    }
    assertEquals(Optional.of(kept), store.topic("t1"));
  }

  @Test
  void recreatedTopicStartsWithNoConsumerState() {
    TopicRecord first = topic("orders", "s1");
    assertTrue(store.createTopic(first));
    store.registerWorker(GROUP, first.resourceName(), "w1", 100);
    assertTrue(store.lockPartition(GROUP, first.resourceName(), 1, "w1", 100, TTL_MS));
    assertTrue(store.commitOffset(GROUP, first.resourceName(), 1, "w1", 1, 55, 200, TTL_MS));
    assertTrue(store.deleteTopic("orders", first.resourceName()));

    TopicRecord second = topic("orders", "s2");
    assertTrue(store.createTopic(second));
    assertEquals(Map.of(), store.workers(GROUP, second.resourceName()));
    assertEquals(Map.of(), store.partitionLocks(GROUP, second.resourceName()));
    assertEquals(OptionalLong.empty(), store.committedOffset(GROUP, second.resourceName(), 1));
    // The new topic's partition 1 is free for anyone.
    assertTrue(store.lockPartition(GROUP, second.resourceName(), 1, "w2", 300, TTL_MS));
  }

  // ---- workers ------------------------------------------------------------------------------

  @Test
  void registerWorkerAddsAndRefreshesRegistrations() {
    String res = topic("orders", "s1").resourceName();
    assertEquals(Map.of(), store.workers(GROUP, res));
    store.registerWorker(GROUP, res, "w1", 100);
    store.registerWorker(GROUP, res, "w2", 150);
    assertEquals(Map.of("w1", 100L, "w2", 150L), store.workers(GROUP, res));

    store.registerWorker(GROUP, res, "w1", 5_000);
    assertEquals(Map.of("w1", 5_000L, "w2", 150L), store.workers(GROUP, res));
  }

  @Test
  void consumerGroupsListsEveryGroupWithStateOfThatTopicOnly() {
    String res = topic("orders", "s1").resourceName();
    String other = topic("other", "s2").resourceName();
    assertEquals(java.util.Set.of(), store.consumerGroups(res));
    store.registerWorker("by-worker", res, "w1", 100);
    assertTrue(store.lockPartition("by-lock/x", res, 3, "w1", 100, TTL_MS));
    store.setOffset("by-offset%2F", res, 0, 7);
    store.registerWorker("elsewhere", other, "w1", 100);
    assertEquals(List.of("by-lock/x", "by-offset%2F", "by-worker"), List.copyOf(store.consumerGroups(res)));
    assertEquals(List.of("elsewhere"), List.copyOf(store.consumerGroups(other)));
    assertTrue(store.removeWorker("by-worker", res, "w1"));
    assertTrue(store.unlockPartition("by-lock/x", res, 3, "w1"));
    assertEquals(List.of("by-offset%2F"), List.copyOf(store.consumerGroups(res)));
  }

  @Test
  void removeWorkerRemovesOnlyThatWorker() {
    String res = topic("orders", "s1").resourceName();
    store.registerWorker(GROUP, res, "w1", 100);
    store.registerWorker(GROUP, res, "w2", 100);
    assertTrue(store.removeWorker(GROUP, res, "w1"));
    assertEquals(Map.of("w2", 100L), store.workers(GROUP, res));
    assertFalse(store.removeWorker(GROUP, res, "w1"));
    assertFalse(store.removeWorker("other-group", res, "w2"));
    assertEquals(Map.of("w2", 100L), store.workers(GROUP, res));
  }

  @Test
  void consumerStateIsSeparatedByGroupAndTopicWhateverCharactersNamesUse() {
    // Names built from separator-like characters must never share or leak state.
    List<String> groups = List.of("g", "g/x", "g%2Fx", "g%", "g/", "g#x", "");
    List<String> resources = List.of("a#t#1", "a#t#1/g", "a#t#1%", "a/t/1");
    int n = 0;
    for (String res : resources) {
      for (String group : groups) {
        n++;
        store.registerWorker(group, res, "w/" + n, n);
        store.registerWorker(group, res, "w%2F" + n, n);
        assertTrue(store.lockPartition(group, res, n, "w/" + n, n, TTL_MS));
        store.setOffset(group, res, n, n);
      }
    }
    n = 0;
    for (String res : resources) {
      for (String group : groups) {
        n++;
        String where = "group '" + group + "' topic '" + res + "'";
        assertEquals(Map.of("w/" + n, (long) n, "w%2F" + n, (long) n), store.workers(group, res),
            where);
        assertEquals(Map.of(n, new PartitionLock(n, "w/" + n, n, 1)),
            store.partitionLocks(group, res), where);
        assertEquals(OptionalLong.of(n), store.committedOffset(group, res, n), where);
      }
    }
  }

  // ---- partition locks ----------------------------------------------------------------------

  @Test
  void lockPartitionTakesAFreePartition() {
    String res = topic("orders", "s1").resourceName();
    assertTrue(store.lockPartition(GROUP, res, 0, "w1", 100, TTL_MS));
    assertEquals(Map.of(0, new PartitionLock(0, "w1", 100, 1)), store.partitionLocks(GROUP, res));
  }

  @Test
  void lockPartitionBySameWorkerRefreshesTheLock() {
    String res = topic("orders", "s1").resourceName();
    assertTrue(store.lockPartition(GROUP, res, 0, "w1", 100, TTL_MS));
    assertTrue(store.lockPartition(GROUP, res, 0, "w1", 900, TTL_MS));
    assertEquals(Map.of(0, new PartitionLock(0, "w1", 900, 1)), store.partitionLocks(GROUP, res));
    // Even after expiry the holder may refresh it.
    assertTrue(store.lockPartition(GROUP, res, 0, "w1", 10_000, TTL_MS));
    assertEquals(Map.of(0, new PartitionLock(0, "w1", 10_000, 1)), store.partitionLocks(GROUP, res));
  }

  @Test
  void lockPartitionHeldLiveByAnotherWorkerFails() {
    String res = topic("orders", "s1").resourceName();
    assertTrue(store.lockPartition(GROUP, res, 0, "w1", 100, TTL_MS));
    assertFalse(store.lockPartition(GROUP, res, 0, "w2", 100, TTL_MS));
    assertFalse(store.lockPartition(GROUP, res, 0, "w2", 100 + TTL_MS - 1, TTL_MS));
    assertEquals(Map.of(0, new PartitionLock(0, "w1", 100, 1)), store.partitionLocks(GROUP, res));
  }

  @Test
  void lockPartitionTakesOverAnExpiredLock() {
    String res = topic("orders", "s1").resourceName();
    assertTrue(store.lockPartition(GROUP, res, 0, "w1", 100, TTL_MS));
    // Expired means lastRenewMs + ttlMs <= nowMs: exactly at the boundary counts.
    assertTrue(store.lockPartition(GROUP, res, 0, "w2", 100 + TTL_MS, TTL_MS));
    assertEquals(Map.of(0, new PartitionLock(0, "w2", 100 + TTL_MS, 2)),
        store.partitionLocks(GROUP, res));
    assertFalse(store.lockPartition(GROUP, res, 0, "w1", 100 + TTL_MS + 1, TTL_MS));
  }

  @Test
  void locksArePerPartitionAndListedWithExpiredOnes() {
    String res = topic("orders", "s1").resourceName();
    assertTrue(store.lockPartition(GROUP, res, 12, "w1", 100, TTL_MS));
    assertTrue(store.lockPartition(GROUP, res, 3, "w2", 5_000, TTL_MS));
    assertTrue(store.lockPartition(GROUP, res, 0, "w2", 5_000, TTL_MS));
    assertEquals(Map.of(0, new PartitionLock(0, "w2", 5_000, 1), 3, new PartitionLock(3, "w2", 5_000, 1),
        12, new PartitionLock(12, "w1", 100, 1)), store.partitionLocks(GROUP, res));
    assertEquals(Map.of(), store.partitionLocks("other-group", res));
  }

  @Test
  void unlockPartitionReleasesOnlyTheHoldersLock() {
    String res = topic("orders", "s1").resourceName();
    assertFalse(store.unlockPartition(GROUP, res, 0, "w1"));
    assertTrue(store.lockPartition(GROUP, res, 0, "w1", 100, TTL_MS));

    assertFalse(store.unlockPartition(GROUP, res, 0, "w2"));
    assertEquals(Map.of(0, new PartitionLock(0, "w1", 100, 1)), store.partitionLocks(GROUP, res));

    assertTrue(store.unlockPartition(GROUP, res, 0, "w1"));
    assertEquals(Map.of(), store.partitionLocks(GROUP, res));
    assertFalse(store.unlockPartition(GROUP, res, 0, "w1"));
    // Released, the partition is free for another worker at once.
    assertTrue(store.lockPartition(GROUP, res, 0, "w2", 101, TTL_MS));
  }

  // ---- offsets ------------------------------------------------------------------------------

  @Test
  void committedOffsetIsEmptyWhenNoneWasCommitted() {
    String res = topic("orders", "s1").resourceName();
    assertEquals(OptionalLong.empty(), store.committedOffset(GROUP, res, 0));
    assertTrue(store.lockPartition(GROUP, res, 0, "w1", 100, TTL_MS));
    assertEquals(OptionalLong.empty(), store.committedOffset(GROUP, res, 0));
  }

  @Test
  void commitOffsetSucceedsForTheLiveHolder() {
    String res = topic("orders", "s1").resourceName();
    assertTrue(store.lockPartition(GROUP, res, 2, "w1", 100, TTL_MS));
    assertTrue(store.commitOffset(GROUP, res, 2, "w1", 1, 42, 100 + TTL_MS - 1, TTL_MS));
    assertEquals(OptionalLong.of(42), store.committedOffset(GROUP, res, 2));
    assertTrue(store.commitOffset(GROUP, res, 2, "w1", 1, 43, 500, TTL_MS));
    assertEquals(OptionalLong.of(43), store.committedOffset(GROUP, res, 2));
    assertEquals(OptionalLong.empty(), store.committedOffset(GROUP, res, 1));
    assertEquals(OptionalLong.empty(), store.committedOffset("other-group", res, 2));
  }

  @Test
  void commitOffsetFailsWithoutTheLock() {
    String res = topic("orders", "s1").resourceName();
    assertFalse(store.commitOffset(GROUP, res, 0, "w1", 1, 42, 100, TTL_MS));
    assertTrue(store.lockPartition(GROUP, res, 0, "w1", 100, TTL_MS));
    assertFalse(store.commitOffset(GROUP, res, 0, "w2", 1, 42, 100, TTL_MS));
    assertFalse(store.commitOffset(GROUP, res, 1, "w1", 1, 42, 100, TTL_MS));
    assertEquals(OptionalLong.empty(), store.committedOffset(GROUP, res, 0));
    assertEquals(OptionalLong.empty(), store.committedOffset(GROUP, res, 1));
  }

  @Test
  void commitOffsetFailsForAnExpiredHolder() {
    String res = topic("orders", "s1").resourceName();
    assertTrue(store.lockPartition(GROUP, res, 0, "w1", 100, TTL_MS));
    assertTrue(store.commitOffset(GROUP, res, 0, "w1", 1, 10, 200, TTL_MS));
    assertFalse(store.commitOffset(GROUP, res, 0, "w1", 1, 11, 100 + TTL_MS, TTL_MS));
    assertEquals(OptionalLong.of(10), store.committedOffset(GROUP, res, 0));
  }

  @Test
  void commitOffsetFailsForTheOldHolderAfterAnotherWorkerTookTheExpiredLock() {
    String res = topic("orders", "s1").resourceName();
    assertTrue(store.lockPartition(GROUP, res, 0, "w1", 100, TTL_MS));
    assertTrue(store.lockPartition(GROUP, res, 0, "w2", 100 + TTL_MS, TTL_MS));
    // Even judged with a ttl under which w1's old lock would still be live.
    assertFalse(store.commitOffset(GROUP, res, 0, "w1", 1, 5, 100 + TTL_MS + 1, 100 * TTL_MS));
    assertEquals(OptionalLong.empty(), store.committedOffset(GROUP, res, 0));
    assertTrue(store.commitOffset(GROUP, res, 0, "w2", 2, 6, 100 + TTL_MS + 1, TTL_MS));
    assertEquals(OptionalLong.of(6), store.committedOffset(GROUP, res, 0));
  }

  @Test
  void fencingTokensGrowWithEveryNewHolderAndStayWhileTheHolderRenews() {
    String res = topic("orders", "s1").resourceName();
    assertTrue(store.lockPartition(GROUP, res, 0, "w1", 100, TTL_MS));
    assertEquals(1, store.partitionLocks(GROUP, res).get(0).fencingToken());
    assertTrue(store.lockPartition(GROUP, res, 0, "w1", 150, TTL_MS));
    assertEquals(new PartitionLock(0, "w1", 150, 1), store.partitionLocks(GROUP, res).get(0));
    // Taken over after expiry: a new token.
    assertTrue(store.lockPartition(GROUP, res, 0, "w2", 150 + TTL_MS, TTL_MS));
    assertEquals(2, store.partitionLocks(GROUP, res).get(0).fencingToken());
    // Released and taken again (even by the same worker): tokens are never reused.
    assertTrue(store.unlockPartition(GROUP, res, 0, "w2"));
    assertTrue(store.lockPartition(GROUP, res, 0, "w2", 200 + TTL_MS, TTL_MS));
    assertEquals(3, store.partitionLocks(GROUP, res).get(0).fencingToken());
    // Tokens are per partition lock and per group.
    assertTrue(store.lockPartition(GROUP, res, 1, "w1", 100, TTL_MS));
    assertTrue(store.lockPartition("other-group", res, 0, "w1", 100, TTL_MS));
    assertEquals(1, store.partitionLocks(GROUP, res).get(1).fencingToken());
    assertEquals(1, store.partitionLocks("other-group", res).get(0).fencingToken());
  }

  @Test
  void commitOffsetUnderASupersededTokenIsRefusedEvenWhenTheWorkerHoldsTheLockAgain() {
    String res = topic("orders", "s1").resourceName();
    assertTrue(store.lockPartition(GROUP, res, 0, "w1", 100, TTL_MS));
    assertTrue(store.commitOffset(GROUP, res, 0, "w1", 1, 10, 110, TTL_MS));
    assertTrue(store.lockPartition(GROUP, res, 0, "w2", 100 + TTL_MS, TTL_MS));
    assertTrue(store.commitOffset(GROUP, res, 0, "w2", 2, 20, 100 + TTL_MS, TTL_MS));
    assertTrue(store.unlockPartition(GROUP, res, 0, "w2"));
    assertTrue(store.lockPartition(GROUP, res, 0, "w1", 101 + TTL_MS, TTL_MS));
    // A late commit of w1's first holding (token 1) is refused; its current one (token 3) lands.
    assertFalse(store.commitOffset(GROUP, res, 0, "w1", 1, 11, 102 + TTL_MS, TTL_MS));
    assertEquals(OptionalLong.of(20), store.committedOffset(GROUP, res, 0));
    assertTrue(store.commitOffset(GROUP, res, 0, "w1", 3, 30, 102 + TTL_MS, TTL_MS));
    assertEquals(OptionalLong.of(30), store.committedOffset(GROUP, res, 0));
  }

  @Test
  void fencingTokensSurviveReopeningAndStartOverForARecreatedTopic() {
    String res = topic("orders", "s1").resourceName();
    assertTrue(store.lockPartition(GROUP, res, 0, "w1", 100, TTL_MS));
    assertTrue(store.unlockPartition(GROUP, res, 0, "w1"));
    reopenStore();
    assertTrue(store.lockPartition(GROUP, res, 0, "w1", 100, TTL_MS));
    assertEquals(2, store.partitionLocks(GROUP, res).get(0).fencingToken());
  }

  @Test
  void storeTimeNeverGoesBackwards() {
    long previous = store.timeMs();
    for (int i = 0; i < 20; i++) {
      long now = store.timeMs();
      assertTrue(now >= previous, now + " after " + previous);
      previous = now;
    }
    assertTrue(Math.abs(previous - System.currentTimeMillis()) < 60_000, "store time " + previous);
  }

  @Test
  void setOffsetIsUnconditional() {
    String res = topic("orders", "s1").resourceName();
    store.setOffset(GROUP, res, 0, 100);
    assertEquals(OptionalLong.of(100), store.committedOffset(GROUP, res, 0));
    // Also while another worker holds the lock, and backwards (an administrative reset).
    assertTrue(store.lockPartition(GROUP, res, 0, "w1", 100, TTL_MS));
    store.setOffset(GROUP, res, 0, 3);
    assertEquals(OptionalLong.of(3), store.committedOffset(GROUP, res, 0));
    assertEquals(Map.of(0, new PartitionLock(0, "w1", 100, 1)), store.partitionLocks(GROUP, res));
  }

  // ---- partition next offsets (storage) -------------------------------------------------------

  @Test
  void partitionNextOffsetOnlyRises() {
    String res = topic("orders", "s1").resourceName();
    String other = topic("orders", "s2").resourceName();
    assertEquals(OptionalLong.empty(), store.partitionNextOffset(res, 0));
    store.raisePartitionNextOffset(res, 0, 100);
    store.raisePartitionNextOffset(res, 0, 40);
    store.raisePartitionNextOffset(res, 2, 7);
    assertEquals(OptionalLong.of(100), store.partitionNextOffset(res, 0), "a lower value leaves it unchanged");
    assertEquals(OptionalLong.of(7), store.partitionNextOffset(res, 2));
    assertEquals(OptionalLong.empty(), store.partitionNextOffset(res, 1));
    assertEquals(OptionalLong.empty(), store.partitionNextOffset(other, 0));
    store.raisePartitionNextOffset(res, 0, 101);
    assertEquals(OptionalLong.of(101), store.partitionNextOffset(res, 0));
    assertThrows(IllegalArgumentException.class, () -> store.raisePartitionNextOffset(res, -1, 1));
    assertThrows(IllegalArgumentException.class, () -> store.raisePartitionNextOffset(res, 0, -1));
    // not consumer state of any group
    assertEquals(OptionalLong.empty(), store.committedOffset(GROUP, res, 0));
  }

  @Test
  void deleteTopicRemovesItsPartitionNextOffsets() {
    TopicRecord first = topic("orders", "s1");
    TopicRecord kept = topic("orders-kept", "s1");
    assertTrue(store.createTopic(first));
    assertTrue(store.createTopic(kept));
    store.raisePartitionNextOffset(first.resourceName(), 0, 10);
    store.raisePartitionNextOffset(kept.resourceName(), 0, 20);
    assertTrue(store.deleteTopic("orders", first.resourceName()));
    assertEquals(OptionalLong.empty(), store.partitionNextOffset(first.resourceName(), 0));
    assertEquals(OptionalLong.of(20), store.partitionNextOffset(kept.resourceName(), 0));
  }

  @Test
  void partitionNextOffsetsSurviveReopening() {
    String res = topic("orders", "s1").resourceName();
    store.raisePartitionNextOffset(res, 3, 42);
    reopenStore();
    assertEquals(OptionalLong.of(42), store.partitionNextOffset(res, 3));
  }

  @Test
  void racingRaisesKeepTheHighest() throws Exception {
    String res = topic("orders", "s1").resourceName();
    race(THREADS, i -> {
      for (int k = 0; k < 5; k++) store.raisePartitionNextOffset(res, 0, i * 10L + k);
      return null;
    });
    assertEquals(OptionalLong.of((THREADS - 1) * 10L + 4), store.partitionNextOffset(res, 0));
  }

  // ---- credentials --------------------------------------------------------------------------

  @Test
  void putCredentialIfAbsentKeepsTheFirst() {
    Credential first = new Credential("AK1", "secret-1", "alice", false);
    Credential admin = new Credential("AK2", "secret-2", "root", true);
    assertEquals(Optional.empty(), store.credential("AK1"));
    assertTrue(store.putCredentialIfAbsent(first));
    assertTrue(store.putCredentialIfAbsent(admin));
    assertFalse(store.putCredentialIfAbsent(new Credential("AK1", "other", "bob", true)));
    assertEquals(Optional.of(first), store.credential("AK1"));
    assertEquals(Optional.of(admin), store.credential("AK2"));
    assertEquals(Optional.empty(), store.credential("AK3"));
  }

  @Test
  void credentialsAreListedSortedByKeyIdWithEveryField() {
    Credential b = new Credential("TKB", "secret-b", "bob", false, null, 0, 1_000, 0, 0);
    Credential a = new Credential("TKA", "secret-a", "alice", false, "old-a", 9_000, 1_000, 2_000, 0);
    Credential c = new Credential("TKC", "secret-c", "carol", false, null, 0, 1_000, 0, 3_000);
    assertTrue(store.putCredentialIfAbsent(b));
    assertTrue(store.putCredentialIfAbsent(a));
    assertTrue(store.putCredentialIfAbsent(c));
    assertEquals(List.of(a, b, c), store.credentials());
    assertEquals(Optional.of(a), store.credential("TKA"), "rotation fields survive the store");
    assertTrue(store.credential("TKC").orElseThrow().revoked());
  }

  @Test
  void replaceCredentialIsACompareAndSetOnTheWholeCredential() {
    Credential v1 = new Credential("TK1", "secret-1", "alice", false, null, 0, 1_000, 0, 0);
    assertTrue(store.putCredentialIfAbsent(v1));
    Credential v2 = v1.rotated("secret-2", 2_000, 62_000);
    assertEquals(List.of("secret-2", "secret-1"), v2.validSecrets(61_999));
    assertEquals(List.of("secret-2"), v2.validSecrets(62_000));
    assertTrue(store.replaceCredential(v1, v2));
    assertEquals(Optional.of(v2), store.credential("TK1"));
    // A racing change that read v1 loses.
    assertFalse(store.replaceCredential(v1, v1.revokedAt(3_000)));
    assertEquals(Optional.of(v2), store.credential("TK1"));
    Credential revoked = v2.revokedAt(3_000);
    assertTrue(store.replaceCredential(v2, revoked));
    assertEquals(List.of(), store.credential("TK1").orElseThrow().validSecrets(2_500));
    // Gone or another identity: refused.
    Credential absent = new Credential("TKX", "s", "x", false);
    assertFalse(store.replaceCredential(absent, absent.revokedAt(1)));
    assertEquals(Optional.empty(), store.credential("TKX"));
    assertThrows(IllegalArgumentException.class,
        () -> store.replaceCredential(revoked, new Credential("TK1", "s", "mallory", false)));
  }

  // ---- concurrency --------------------------------------------------------------------------

  @Test
  void racingCreateTopicOfOneNameHasExactlyOneWinner() throws Exception {
    List<Boolean> created = race(THREADS, i -> store.createTopic(topic("orders", "s" + i)));
    assertEquals(1, created.stream().filter(b -> b).count(), created.toString());
    int winner = created.indexOf(true);
    assertEquals(Optional.of(topic("orders", "s" + winner)), store.topic("orders"));
  }

  @Test
  void racingReplaceTopicFromOneVersionHasExactlyOneWinner() throws Exception {
    TopicRecord v0 = topic("orders", "s1");
    assertTrue(store.createTopic(v0));
    List<Boolean> replaced = race(THREADS,
        i -> store.replaceTopic(v0, v0.withPartitionCount(10 + i)));
    assertEquals(1, replaced.stream().filter(b -> b).count(), replaced.toString());
    TopicRecord stored = store.topic("orders").orElseThrow();
    assertEquals(1, stored.version());
    assertEquals(10 + replaced.indexOf(true), stored.partitionCount());
  }

  @Test
  void racingLockPartitionOfAFreePartitionHasExactlyOneHolder() throws Exception {
    String res = topic("orders", "s1").resourceName();
    List<Boolean> locked = race(THREADS,
        i -> store.lockPartition(GROUP, res, 0, "w" + i, 100, TTL_MS));
    assertEquals(1, locked.stream().filter(b -> b).count(), locked.toString());
    assertEquals(Map.of(0, new PartitionLock(0, "w" + locked.indexOf(true), 100, 1)),
        store.partitionLocks(GROUP, res));
  }

  @Test
  void racingTakeoverOfAnExpiredLockHasExactlyOneHolder() throws Exception {
    String res = topic("orders", "s1").resourceName();
    assertTrue(store.lockPartition(GROUP, res, 0, "old", 100, TTL_MS));
    List<Boolean> locked = race(THREADS,
        i -> store.lockPartition(GROUP, res, 0, "w" + i, 100 + TTL_MS, TTL_MS));
    assertEquals(1, locked.stream().filter(b -> b).count(), locked.toString());
    assertEquals("w" + locked.indexOf(true), store.partitionLocks(GROUP, res).get(0).workerId());
  }

  @Test
  void racingCommitsSucceedExactlyForTheHolder() throws Exception {
    String res = topic("orders", "s1").resourceName();
    assertTrue(store.lockPartition(GROUP, res, 0, "holder", 100, TTL_MS));
    int commitsPerThread = 10;
    // Even threads commit as the holder, each its own increasing offsets; odd ones as others.
    List<List<Boolean>> results = race(THREADS, i -> {
      List<Boolean> outcomes = new ArrayList<>();
      for (int k = 1; k <= commitsPerThread; k++) {
        String worker = i % 2 == 0 ? "holder" : "w" + i;
        outcomes.add(store.commitOffset(GROUP, res, 0, worker, 1, i * 1_000L + k, 200, TTL_MS));
      }
      return outcomes;
    });
    Set<Long> lastHolderOffsets = new HashSet<>();
    for (int i = 0; i < THREADS; i++) {
      boolean holder = i % 2 == 0;
      for (boolean ok : results.get(i)) {
        assertEquals(holder, ok, "thread " + i);
      }
      if (holder) {
        lastHolderOffsets.add(i * 1_000L + commitsPerThread);
      }
    }
    // The last commit to land is some holder thread's last one.
    long committed = store.committedOffset(GROUP, res, 0).orElseThrow();
    assertTrue(lastHolderOffsets.contains(committed), "committed " + committed);
  }

  @Test
  void racingWritersOfDifferentKeysAllLand() throws Exception {
    String res = topic("orders", "s1").resourceName();
    race(THREADS, i -> {
      store.registerWorker(GROUP, res, "w" + i, i);
      assertTrue(store.lockPartition(GROUP, res, i, "w" + i, 100, TTL_MS));
      assertTrue(store.commitOffset(GROUP, res, i, "w" + i, 1, i, 100, TTL_MS));
      return null;
    });
    assertEquals(THREADS, store.workers(GROUP, res).size());
    assertEquals(THREADS, store.partitionLocks(GROUP, res).size());
    for (int i = 0; i < THREADS; i++) {
      assertEquals(OptionalLong.of(i), store.committedOffset(GROUP, res, i));
    }
  }

  // ---- durability ---------------------------------------------------------------------------

  @Test
  void everythingSurvivesReopening() {
    Snapshot before = populate(store);
    reopenStore();
    before.assertMatches(store);
    // Conditions hold across the reopen, too.
    assertFalse(store.createTopic(topic("alpha", "other")));
    assertFalse(store.lockPartition(GROUP, before.alpha.resourceName(), 0, "w9", 150, TTL_MS));
    assertFalse(store.putCredentialIfAbsent(new Credential("AK1", "x", "y", true)));
  }

  /** What {@link #populate} stored: topics, consumer state and credentials. */
  protected record Snapshot(TopicRecord alpha, List<TopicRecord> topics) {
    public void assertMatches(MetadataStore s) {
      assertEquals(topics, s.topics());
      String res = alpha.resourceName();
      assertEquals(Map.of("w1", 120L, "w2", 130L), s.workers(GROUP, res));
      assertEquals(Map.of(0, new PartitionLock(0, "w1", 140, 1), 1, new PartitionLock(1, "w2", 130, 1)),
          s.partitionLocks(GROUP, res));
      assertEquals(OptionalLong.of(77), s.committedOffset(GROUP, res, 0));
      assertEquals(OptionalLong.of(5), s.committedOffset(GROUP, res, 1));
      assertEquals(OptionalLong.of(9), s.committedOffset("admin-group", res, 3));
      assertEquals(Map.of(), s.workers(GROUP, "alice#gone#s1"));
      assertEquals(OptionalLong.empty(), s.committedOffset(GROUP, "alice#gone#s1", 0));
      assertEquals(Optional.of(new Credential("AK1", "secret-1", "alice", false)),
          s.credential("AK1"));
      assertEquals(Optional.of(new Credential("AK2", "secret-2", "root", true)),
          s.credential("AK2"));
    }
  }

  /**
   * Stores one of everything, including state only a correct delete removes, replaced topics and
   * failed conditional writes, and returns what must be there afterwards.
   */
  protected static Snapshot populate(MetadataStore s) {
    TopicRecord alpha = topic("alpha", "s1");
    TopicRecord beta = topic("beta", "s1");
    TopicRecord gone = topic("gone", "s1");
    assertTrue(s.createTopic(beta));
    assertTrue(s.createTopic(alpha));
    assertTrue(s.createTopic(gone));
    assertTrue(s.replaceTopic(beta, beta.withPartitionCount(32)));
    assertFalse(s.replaceTopic(beta, beta.withPartitionCount(64)));

    String res = alpha.resourceName();
    s.registerWorker(GROUP, res, "w1", 100);
    s.registerWorker(GROUP, res, "w2", 130);
    s.registerWorker(GROUP, res, "w3", 100);
    s.registerWorker(GROUP, res, "w1", 120);
    assertTrue(s.removeWorker(GROUP, res, "w3"));
    assertTrue(s.lockPartition(GROUP, res, 0, "w1", 100, TTL_MS));
    assertTrue(s.lockPartition(GROUP, res, 0, "w1", 140, TTL_MS));
    assertTrue(s.lockPartition(GROUP, res, 1, "w2", 130, TTL_MS));
    assertTrue(s.lockPartition(GROUP, res, 2, "w2", 130, TTL_MS));
    assertTrue(s.unlockPartition(GROUP, res, 2, "w2"));
    assertTrue(s.commitOffset(GROUP, res, 0, "w1", 1, 76, 140, TTL_MS));
    assertTrue(s.commitOffset(GROUP, res, 0, "w1", 1, 77, 141, TTL_MS));
    assertFalse(s.commitOffset(GROUP, res, 0, "w2", 1, 1_000, 141, TTL_MS));
    assertTrue(s.commitOffset(GROUP, res, 1, "w2", 1, 5, 140, TTL_MS));
    s.setOffset("admin-group", res, 3, 9);

    s.registerWorker(GROUP, gone.resourceName(), "w1", 100);
    s.setOffset(GROUP, gone.resourceName(), 0, 1);
    assertTrue(s.deleteTopic("gone", gone.resourceName()));

    assertTrue(s.putCredentialIfAbsent(new Credential("AK1", "secret-1", "alice", false)));
    assertTrue(s.putCredentialIfAbsent(new Credential("AK2", "secret-2", "root", true)));

    TopicRecord beta1 = new TopicRecord("beta", beta.resourceName(), beta.ownerId(), 32,
        beta.retentionSecs(), beta.attributes(), beta.createTimestampMs(), 1);
    return new Snapshot(alpha, List.of(alpha, beta1));
  }

  // ---- topic deletion tombstones and health ------------------------------------------------

  @Test
  void tombstonesAreKeptWithTheirFirstTimeUntilRemoved() {
    assertEquals(Map.of(), store.topicTombstones());
    store.putTopicTombstone("bob#b#2", 200);
    store.putTopicTombstone("alice#a#1", 100);
    store.putTopicTombstone("alice#a#1", 999); // idempotent: the first time stays
    assertEquals(List.of("alice#a#1", "bob#b#2"), List.copyOf(store.topicTombstones().keySet()));
    assertEquals(Map.of("alice#a#1", 100L, "bob#b#2", 200L), store.topicTombstones());
    assertTrue(store.removeTopicTombstone("alice#a#1"));
    assertFalse(store.removeTopicTombstone("alice#a#1"));
    assertFalse(store.removeTopicTombstone("never#n#0"));
    assertEquals(Map.of("bob#b#2", 200L), store.topicTombstones());
  }

  @Test
  void aTombstoneOutlivesTheDeletionOfItsTopicAndTopicsAreUnaffected() {
    TopicRecord t = topic("orders", "s1");
    assertTrue(store.createTopic(t));
    store.putTopicTombstone(t.resourceName(), 5);
    assertEquals(Optional.of(t), store.topic("orders"), "a tombstone does not hide its topic");
    assertTrue(store.deleteTopic("orders", t.resourceName()));
    assertEquals(Map.of(t.resourceName(), 5L), store.topicTombstones());
    TopicRecord again = topic("orders", "s2");
    assertTrue(store.createTopic(again), "a tombstone does not block the name");
    assertEquals(Map.of(t.resourceName(), 5L), store.topicTombstones());
  }

  @Test
  void tombstonesSurviveReopening() {
    store.putTopicTombstone("alice#a#1", 100);
    reopenStore();
    assertEquals(Map.of("alice#a#1", 100L), store.topicTombstones());
  }

  @Test
  void anOpenStoreProbesHealthyAndAClosedOneDoesNot() {
    assertEquals(Optional.empty(), store.probe());
    store.close();
    Optional<String> problem = store.probe();
    assertTrue(problem.isPresent() && problem.get().contains("closed"), problem.toString());
  }

  // ---- end of topic deletion tombstones and health -----------------------------------------

  // ---- helpers ------------------------------------------------------------------------------

  /**
   * Runs {@code task(0..threads-1)} on that many threads released together, and returns the
   * results by thread index; rethrows the first failure.
   */
  protected static <T> List<T> race(int threads, IntFunction<T> task) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      CountDownLatch ready = new CountDownLatch(threads);
      CountDownLatch go = new CountDownLatch(1);
      List<Future<T>> futures = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        int index = i;
        futures.add(pool.submit(() -> {
          ready.countDown();
          go.await();
          return task.apply(index);
        }));
      }
      assertTrue(ready.await(10, TimeUnit.SECONDS), "threads did not start");
      go.countDown();
      List<T> results = new ArrayList<>();
      for (Future<T> f : futures) {
        results.add(f.get(30, TimeUnit.SECONDS));
      }
      return results;
    } finally {
      pool.shutdownNow();
    }
  }
}
