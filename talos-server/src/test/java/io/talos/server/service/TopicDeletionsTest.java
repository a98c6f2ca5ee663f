package io.talos.server.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.common.TopicNames;
import io.talos.server.metadata.MetadataException;
import io.talos.server.metadata.MetadataStore;
import io.talos.server.metadata.MvStoreMetadataStore;
import io.talos.server.metadata.TopicRecord;
import io.talos.server.storage.LogConfig;
import io.talos.server.storage.PartitionLogs;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link TopicDeletions} on a real embedded store and real partition directories: the order of
 * the steps, deletions interrupted at each step and finished by a later pass, directories that
 * belong to nothing left alone, and the startup refusal.
 */
class TopicDeletionsTest {
  private static final Clock CLOCK = Clock.fixed(Instant.ofEpochMilli(1_700_000_000_000L), ZoneOffset.UTC);

  @TempDir
  Path dir;

  private MvStoreMetadataStore raw;
  /** Set to make the store's next deleteTopic fail (after which it works again). */
  private volatile boolean failNextMetadataDelete;
  private MetadataStore store;
  private FlakyLocalFileSystem fs;
  private PartitionLogs logs;
  private TopicDeletions deletions;

  /** A local file system whose deletes fail while {@link #failDeletes} is set. */
  static final class FlakyLocalFileSystem extends RawLocalFileSystem {
    volatile boolean failDeletes;

    @Override
    public boolean delete(org.apache.hadoop.fs.Path p, boolean recursive) throws IOException {
      if (failDeletes) throw new IOException("injected: cannot delete " + p);
      return super.delete(p, recursive);
    }
  }

  @BeforeEach
  void open() throws Exception {
    raw = MvStoreMetadataStore.open(dir.resolve("metadata"));
    store = (MetadataStore) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {MetadataStore.class},
        (proxy, method, args) -> {
          if (method.getName().equals("deleteTopic") && failNextMetadataDelete) {
            failNextMetadataDelete = false;
            throw new MetadataException("injected: metadata store unavailable", null);
          }
          try {
            return method.invoke(raw, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
    fs = new FlakyLocalFileSystem();
    fs.initialize(URI.create("file:///"), new Configuration());
    logs = new PartitionLogs(fs, new org.apache.hadoop.fs.Path(dir.resolve("log").toUri()), LogConfig.builder().build(), CLOCK);
    deletions = new TopicDeletions(store, logs, CLOCK);
  }

  @AfterEach
  void close() throws IOException {
    logs.close();
    fs.close();
    raw.close();
  }

  private TopicRecord topicWithData(String name) throws IOException {
    TopicRecord t = new TopicRecord(name, TopicNames.resourceName("alice", name, "s1"), "alice", 2, 60,
        Map.of(), 0L, 0);
    assertTrue(store.createTopic(t));
    logs.log(t.resourceName(), 0);
    logs.log(t.resourceName(), 1);
    assertTrue(Files.isDirectory(dataDir(t)));
    return t;
  }

  private Path dataDir(TopicRecord t) {
    return dir.resolve("log").resolve(PartitionLogs.encodeDirName(t.resourceName()));
  }

  @Test
  void deleteRemovesMetadataThenDataThenItsTombstone() throws Exception {
    TopicRecord t = topicWithData("orders");
    assertTrue(deletions.delete(t));
    assertEquals(Optional.empty(), store.topic("orders"));
    assertFalse(Files.exists(dataDir(t)));
    assertEquals(Map.of(), store.topicTombstones());
    assertFalse(deletions.delete(t), "a second delete finds no topic");
  }

  @Test
  void aDeletionWhoseMetadataRemovalFailedIsFinishedByTheNextPass() throws Exception {
    TopicRecord t = topicWithData("orders");
    failNextMetadataDelete = true;
    assertThrows(MetadataException.class, () -> deletions.delete(t));
    // The tombstone came first: the request's deletion is not lost.
    assertEquals(Optional.of(t), store.topic("orders"));
    assertTrue(store.topicTombstones().containsKey(t.resourceName()));
    assertTrue(Files.isDirectory(dataDir(t)));

    assertEquals(1, deletions.runOnce());
    assertEquals(Optional.empty(), store.topic("orders"));
    assertFalse(Files.exists(dataDir(t)));
    assertEquals(Map.of(), store.topicTombstones());
  }

  @Test
  void aDeletionWhoseDataRemovalFailedIsDoneForTheClientAndFinishedByTheNextPass() throws Exception {
    TopicRecord t = topicWithData("orders");
    fs.failDeletes = true;
    assertTrue(deletions.delete(t));
    assertEquals(Optional.empty(), store.topic("orders"));
    assertTrue(store.topicTombstones().containsKey(t.resourceName()));
    assertEquals(0, deletions.runOnce(), "storage still failing");
    assertEquals(List.of(), deletions.orphans(), "a tombstoned directory is no orphan");

    fs.failDeletes = false;
    assertEquals(1, deletions.runOnce());
    assertFalse(Files.exists(dataDir(t)));
    assertEquals(Map.of(), store.topicTombstones());
  }

  @Test
  void aDirectoryWithNeitherTopicNorTombstoneIsReportedAndLeftAlone() throws Exception {
    TopicRecord kept = topicWithData("kept");
    TopicRecord lost = topicWithData("lost");
    // Its metadata vanishes without a tombstone (an older backup restored, another store).
    assertTrue(raw.deleteTopic("lost", lost.resourceName()));

    assertEquals(0, deletions.runOnce());
    assertTrue(Files.isDirectory(dataDir(lost).resolve("0")), "orphaned data is never deleted");
    assertTrue(Files.isDirectory(dataDir(kept).resolve("1")));
    assertEquals(List.of(new TopicDeletions.Orphan(lost.resourceName(), logs.topicDir(lost.resourceName()).toString())),
        deletions.orphans());
    // Reported, not acted on, pass after pass.
    deletions.runOnce();
    assertTrue(Files.isDirectory(dataDir(lost).resolve("0")));
  }

  @Test
  void startupIsRefusedOnAnEmptyStoreOverTopicDataUnlessAccepted() throws Exception {
    TopicRecord t = topicWithData("orders");
    TopicDeletions.checkStartup(store, logs, "the-store", "the-root", false, "--accept-orphan-data");

    assertTrue(raw.deleteTopic("orders", t.resourceName()));
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> TopicDeletions.checkStartup(store, logs, "the-store", "the-root", false, "--accept-orphan-data"));
    for (String expected : List.of("the-store", "the-root", t.resourceName(), "--accept-orphan-data", "Nothing was deleted")) {
      assertTrue(e.getMessage().contains(expected), expected + " missing from: " + e.getMessage());
    }
    TopicDeletions.checkStartup(store, logs, "the-store", "the-root", true, "--accept-orphan-data");
    assertTrue(Files.isDirectory(dataDir(t).resolve("0")));

    // A pending tombstone means the store is the right one (a deletion of its own is unfinished).
    raw.putTopicTombstone(t.resourceName(), 1);
    TopicDeletions.checkStartup(store, logs, "the-store", "the-root", false, "--accept-orphan-data");
  }
}
