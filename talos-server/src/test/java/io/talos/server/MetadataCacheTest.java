package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.server.metadata.CachingMetadataStore;
import io.talos.server.metadata.Credential;
import io.talos.server.metadata.MetadataStore;
import io.talos.server.metadata.TopicRecord;
import io.talos.thrift.ChangeTopicAttributeRequest;
import io.talos.thrift.DeleteTopicRequest;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicAttribute;
import io.talos.thrift.TopicService;
import io.talos.thrift.TopicTalosResourceName;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The metadata cache on a real server: the put path reads no metadata, and a change made on the
 * node is seen by the very next request; a change made elsewhere (another node on a shared
 * store) within the TTL. Time is a {@link ManualClock}, so nothing expires unless a test says so.
 */
class MetadataCacheTest {
  private static final long TTL_MS = 1_000;

  /** Counts the reads every request makes: topic lookups and credential lookups. */
  static final class CountingStore {
    final AtomicInteger reads = new AtomicInteger();

    MetadataStore wrap(MetadataStore real) {
      return (MetadataStore) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {MetadataStore.class},
          (proxy, method, args) -> {
            if (method.getName().equals("topic") || method.getName().equals("credential")) reads.incrementAndGet();
            try {
              return method.invoke(real, args);
            } catch (InvocationTargetException e) {
              throw e.getCause();
            }
          });
    }
  }

  private static TalosServer start(Path dir, ManualClock clock, CountingStore counting, String ttlMs) throws Exception {
    return TalosServer.start(new ServerConfig(TestServers.props(dir, ServerConfig.METADATA_CACHE_TTL_MS, ttlMs)),
        clock, counting::wrap);
  }

  /** Store reads for 200 puts to one partition, after one warm-up put. */
  private static int readsFor200Puts(Path dir, String ttlMs) throws Exception {
    CountingStore counting = new CountingStore();
    try (TalosServer server = start(dir, new ManualClock(System.currentTimeMillis()), counting, ttlMs)) {
      RawApi api = RestartTest.api(server);
      TopicTalosResourceName trn = api.createTopic("hot", 1);
      TopicAndPartition tap = new TopicAndPartition("hot", trn, 0);
      api.put(tap, List.of("warm-up"));
      counting.reads.set(0);
      for (int i = 0; i < 200; i++) api.put(tap, List.of("m" + i));
      return counting.reads.get();
    }
  }

  @Test
  void putsReadNoMetadataWithTheCacheAndTwoReadsEachWithout(@TempDir Path dir) throws Exception {
    // Without the cache each put reads its credential, and its topic twice: for the quota check
    // (the topic's quota) and in the service; the admin's permission needs no topic read.
    assertEquals(600, readsFor200Puts(dir.resolve("uncached"), "0"), "credential + 2 topic reads per put without the cache");
    assertEquals(0, readsFor200Puts(dir.resolve("cached"), Long.toString(TTL_MS)));
  }

  @Test
  void changesOnThisNodeAreSeenByTheNextRequest(@TempDir Path dir) throws Exception {
    ManualClock clock = new ManualClock(System.currentTimeMillis());
    try (TalosServer server = start(dir, clock, new CountingStore(), Long.toString(TTL_MS))) {
      RawApi api = RestartTest.api(server);
      TopicTalosResourceName trn = api.createTopic("t", 1);
      api.put(new TopicAndPartition("t", trn, 0), List.of("a"));
      GalaxyTalosException e = assertThrows(GalaxyTalosException.class,
          () -> api.put(new TopicAndPartition("t", trn, 1), List.of("b")));
      assertEquals(ErrorCode.PARTITION_NOT_EXIST, e.getErrorCode());

      // Attribute change: the new partition takes puts at once.
      TopicService.changeTopicAttribute_result changed = api.call("topic", "changeTopicAttribute",
          new TopicService.changeTopicAttribute_args(new ChangeTopicAttributeRequest(trn,
              new TopicAttribute().setPartitionNumber(2))), new TopicService.changeTopicAttribute_result());
      assertTrue(!changed.isSetE(), String.valueOf(changed.getE()));
      assertEquals(0, api.put(new TopicAndPartition("t", trn, 1), List.of("b")));

      // A credential unknown a moment ago (and cached as unknown) works once it is added.
      RawApi newcomer = new RawApi(server.endpoint(), "TKNEWCOMER", "newcomer-secret");
      IllegalStateException refused = assertThrows(IllegalStateException.class,
          () -> newcomer.put(new TopicAndPartition("t", trn, 0), List.of("c")));
      assertTrue(refused.getMessage().contains("401"), refused.getMessage());
      assertTrue(server.metadata().putCredentialIfAbsent(new Credential("TKNEWCOMER", "newcomer-secret", "admin", true)));
      assertEquals(1, newcomer.put(new TopicAndPartition("t", trn, 0), List.of("c")));

      // Deletion: the next put is refused.
      TopicService.deleteTopic_result deleted = api.call("topic", "deleteTopic",
          new TopicService.deleteTopic_args(new DeleteTopicRequest(trn)), new TopicService.deleteTopic_result());
      assertTrue(!deleted.isSetE(), String.valueOf(deleted.getE()));
      e = assertThrows(GalaxyTalosException.class, () -> api.put(new TopicAndPartition("t", trn, 0), List.of("d")));
      assertEquals(ErrorCode.TOPIC_NOT_EXIST, e.getErrorCode());
    }
  }

  @Test
  void changesMadeBehindTheCacheAreSeenAfterTheTtl(@TempDir Path dir) throws Exception {
    ManualClock clock = new ManualClock(System.currentTimeMillis());
    try (TalosServer server = start(dir, clock, new CountingStore(), Long.toString(TTL_MS))) {
      RawApi api = RestartTest.api(server);
      TopicTalosResourceName trn = api.createTopic("t", 1);
      api.put(new TopicAndPartition("t", trn, 0), List.of("a"));
      // Another node sharing the store raises the partition count.
      MetadataStore shared = ((CachingMetadataStore) server.metadata()).delegate();
      TopicRecord current = shared.topic("t").orElseThrow();
      assertTrue(shared.replaceTopic(current, current.withPartitionCount(2)));

      clock.advanceMs(TTL_MS - 1);
      GalaxyTalosException e = assertThrows(GalaxyTalosException.class,
          () -> api.put(new TopicAndPartition("t", trn, 1), List.of("b")));
      assertEquals(ErrorCode.PARTITION_NOT_EXIST, e.getErrorCode(), "still the cached record within the TTL");
      clock.advanceMs(1);
      assertEquals(0, api.put(new TopicAndPartition("t", trn, 1), List.of("b")));
    }
  }
}
