package io.talos.server.metadata;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;
import org.h2.mvstore.type.StringDataType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The contract on {@link MvStoreMetadataStore}, plus its file, crash and locking behaviour. */
class MvStoreMetadataStoreTest extends MetadataStoreContractTest {
  @TempDir
  Path dir;

  @Override
  protected MetadataStore newStore() {
    return MvStoreMetadataStore.open(dir);
  }

  @Override
  protected MetadataStore reopen(MetadataStore old) {
    old.close();
    return MvStoreMetadataStore.open(dir);
  }

  private MvStoreMetadataStore mvStore() {
    return (MvStoreMetadataStore) store;
  }

  @Test
  void timeMsFollowsTheProcessClockButNeverGoesBackwards() {
    long[] wall = {5_000};
    mvStore().wallClockForTest(() -> wall[0]);
    assertEquals(5_000, store.timeMs());
    wall[0] = 4_000; // the clock was set back
    assertEquals(5_000, store.timeMs());
    wall[0] = 6_000;
    assertEquals(6_000, store.timeMs());
  }

  /** Opens the file as a bare MVStore, bypassing the metadata store. Caller closes it. */
  private MVStore openRaw() {
    return new MVStore.Builder().fileName(dir.resolve(MvStoreMetadataStore.FILE_NAME).toString())
        .autoCommitDisabled().open();
  }

  private static MVMap<String, String> rawMap(MVStore raw, String name) {
    return raw.openMap(name, new MVMap.Builder<String, String>()
        .keyType(StringDataType.INSTANCE).valueType(StringDataType.INSTANCE));
  }

  @Test
  void storesEverythingInOneFileInTheGivenDirectory() throws Exception {
    Path nested = dir.resolve("a/b");
    try (MvStoreMetadataStore s = MvStoreMetadataStore.open(nested)) {
      assertEquals(nested.resolve("metadata.mv.db").toAbsolutePath(), s.file());
      assertTrue(Files.isRegularFile(s.file()));
    }
    try (var files = Files.list(nested)) {
      assertEquals(List.of(nested.resolve("metadata.mv.db")), files.toList());
    }
  }

  @Test
  void keepsEverythingAfterCloseAndReopen() {
    Snapshot expected = populate(store);
    store.close();
    store = MvStoreMetadataStore.open(dir);
    expected.assertMatches(store);
  }

  @Test
  void keepsEveryReturnedChangeAfterAnAbruptStop() {
    Snapshot expected = populate(store);
    // Changes right before the "crash": the last call that returned must be there.
    TopicRecord last = topic("last", "s1");
    assertTrue(store.createTopic(last));
    store.setOffset(GROUP, last.resourceName(), 0, 1234);

    mvStore().closeImmediately(); // releases the file lock, writes nothing, like a dead process
    store = MvStoreMetadataStore.open(dir);

    assertEquals(Optional.of(last), store.topic("last"));
    assertEquals(OptionalLong.of(1234), store.committedOffset(GROUP, last.resourceName(), 0));
    assertTrue(store.deleteTopic("last", last.resourceName()));
    expected.assertMatches(store);
  }

  @Test
  void abruptStopLosesWritesThatWereNotCommitted() {
    // Shows the crash simulation above is real: closeImmediately() persists nothing pending.
    store.close();
    MVStore raw = openRaw();
    rawMap(raw, MvStoreMetadataStore.MAP_TOPICS)
        .put("pending", MetadataCodec.encodeTopic(topic("pending", "s1")));
    raw.closeImmediately();

    store = MvStoreMetadataStore.open(dir);
    assertEquals(Optional.empty(), store.topic("pending"));
  }

  @Test
  void secondOpenOfTheSameFileFailsClearlyAndLeavesTheFirstWorking() {
    MetadataException e = assertThrows(MetadataException.class,
        () -> MvStoreMetadataStore.open(dir));
    assertTrue(e.getMessage().contains("already open"), e.getMessage());
    assertTrue(e.getMessage().contains(mvStore().file().toString()), e.getMessage());

    assertTrue(store.createTopic(topic("orders", "s1")));
    store.close();
    store = MvStoreMetadataStore.open(dir);
    assertTrue(store.topic("orders").isPresent());
  }

  @Test
  void closeIsIdempotentAndLaterCallsFail() {
    store.close();
    store.close();
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> store.topics());
    assertTrue(e.getMessage().contains("closed"), e.getMessage());
    assertThrows(IllegalStateException.class, () -> store.createTopic(topic("t", "s")));
  }

  @Test
  void anInterruptedCallerCompletesItsCallAndTheStoreKeepsWorking() {
    TopicRecord t = topic("orders", "s1");
    Thread.currentThread().interrupt();
    try {
      assertTrue(store.createTopic(t));
      store.setOffset(GROUP, t.resourceName(), 0, 5);
      assertTrue(Thread.currentThread().isInterrupted(), "interrupt status was swallowed");
    } finally {
      Thread.interrupted();
    }
    assertEquals(OptionalLong.of(5), store.committedOffset(GROUP, t.resourceName(), 0));
    reopenStore();
    assertEquals(Optional.of(t), store.topic("orders"));
  }

  @Test
  void newStoreRecordsItsSchemaVersion() {
    store.close();
    MVStore raw = openRaw();
    try {
      assertEquals(Integer.toString(MvStoreMetadataStore.SCHEMA_VERSION),
          rawMap(raw, MvStoreMetadataStore.MAP_META).get(MvStoreMetadataStore.KEY_SCHEMA_VERSION));
    } finally {
      raw.close();
    }
  }

  @Test
  void refusesAFileOfANewerSchemaVersion() {
    store.close();
    MVStore raw = openRaw();
    rawMap(raw, MvStoreMetadataStore.MAP_META).put(MvStoreMetadataStore.KEY_SCHEMA_VERSION, "2");
    raw.commit();
    raw.close();

    MetadataException e = assertThrows(MetadataException.class,
        () -> MvStoreMetadataStore.open(dir));
    assertTrue(e.getMessage().contains("schema version 2"), e.getMessage());
    assertTrue(e.getMessage().contains("newer"), e.getMessage());
    // The failed open released the file (else this would fail: "The file is locked").
    openRaw().close();
  }

  @Test
  void refusesAValueOfAnUnknownFormatVersionByName() {
    store.close();
    MVStore raw = openRaw();
    rawMap(raw, MvStoreMetadataStore.MAP_TOPICS).put("future", "{\"v\":2,\"name\":\"future\"}");
    rawMap(raw, MvStoreMetadataStore.MAP_CREDENTIALS).put("AK", "{\"v\":1,\"secretKey\":\"s3\"}");
    raw.commit();
    raw.close();

    store = MvStoreMetadataStore.open(dir);
    MetadataException e = assertThrows(MetadataException.class, () -> store.topic("future"));
    assertTrue(e.getMessage().contains("topic future"), e.getMessage());
    assertTrue(e.getMessage().contains("v=2"), e.getMessage());
    // A broken credential is reported without quoting its secret.
    e = assertThrows(MetadataException.class, () -> store.credential("AK"));
    assertTrue(e.getMessage().contains("credential AK"), e.getMessage());
    assertFalse(e.getMessage().contains("s3"), e.getMessage());
  }

  @Test
  void keyComponentsEscapeSeparatorsReversibly() {
    for (String s : List.of("", "plain", "a/b", "a%b", "%2F", "%25/", "//%%")) {
      assertEquals(s, MvStoreMetadataStore.unescape(MvStoreMetadataStore.escape(s)), s);
      assertFalse(MvStoreMetadataStore.escape(s).contains("/"), s);
    }
    assertNotEquals(MvStoreMetadataStore.consumerPrefix("b", "a"),
        MvStoreMetadataStore.consumerPrefix("", "a/b"));
    assertEquals("alice#t#1/g%2F1/0000000007",
        MvStoreMetadataStore.partitionKey("g/1", "alice#t#1", 7));
    assertThrows(IllegalArgumentException.class,
        () -> MvStoreMetadataStore.partitionKey("g", "alice#t#1", -1));
  }

  @Test
  void valuesAreVersionedJson() {
    assertEquals("{\"v\":1,\"workerId\":\"w1\",\"lastRenewMs\":100,\"token\":3}",
        MetadataCodec.encodeLock("w1", 100, 3));
    // A lock written before fencing tokens reads as token 0.
    assertEquals(new PartitionLock(2, "w1", 100, 0),
        MetadataCodec.decodeLock("lock", 2, "{\"v\":1,\"workerId\":\"w1\",\"lastRenewMs\":100}"));
    assertEquals("{\"v\":1,\"offset\":-1}", MetadataCodec.encodeOffset(-1));
    TopicRecord t = new TopicRecord("t", "o#t#s", "o", 3, 60, Map.of("b", "2", "a", "1"), 7L, 4);
    assertEquals("{\"v\":1,\"name\":\"t\",\"resourceName\":\"o#t#s\",\"ownerId\":\"o\","
        + "\"partitionCount\":3,\"retentionSecs\":60,\"attributes\":{\"a\":\"1\",\"b\":\"2\"},"
        + "\"createTimestampMs\":7,\"version\":4}", MetadataCodec.encodeTopic(t));
    assertEquals(t, MetadataCodec.decodeTopic("topic t", MetadataCodec.encodeTopic(t)));
  }

  // ---- failures of the file and its permissions ----------------------------------------------

  private final java.util.concurrent.atomic.AtomicLong nanos = new java.util.concurrent.atomic.AtomicLong(1);

  /** The store in {@link #dir} reopened through {@link FailingFilePath}, its reopen clock stepped by the test. */
  private MvStoreMetadataStore openFailing() {
    store.close();
    MvStoreMetadataStore s = MvStoreMetadataStore.open(dir, FailingFilePath.prefix()
        + MvStoreMetadataStore.FILE_PREFIX);
    s.nanoTime(nanos::get);
    store = s;
    return s;
  }

  @Test
  void aFailedWriteFailsThatCallAndTheNextCallReopensTheFile() {
    MvStoreMetadataStore s = openFailing();
    TopicRecord kept = topic("kept", "s1");
    assertTrue(s.createTopic(kept));
    try {
      FailingFilePath.failWrites = true;
      MetadataException e = assertThrows(MetadataException.class, () -> s.createTopic(topic("lost", "s1")));
      assertTrue(e.getMessage().contains("createTopic lost"), e.getMessage());
    } finally {
      FailingFilePath.reset();
    }
    // Recovered as after a crash: what returned is there, the store serves reads and writes.
    assertEquals(Optional.empty(), s.probe());
    assertEquals(Optional.of(kept), s.topic("kept"));
    assertTrue(s.createTopic(topic("after", "s1")));
    store.setOffset(GROUP, kept.resourceName(), 0, 7);
    reopenStore();
    assertTrue(store.topic("after").isPresent());
    assertEquals(OptionalLong.of(7), store.committedOffset(GROUP, kept.resourceName(), 0));
  }

  @Test
  void whileTheFileCannotBeReopenedCallsFailRetriablyAndTheProbeSaysWhy() {
    MvStoreMetadataStore s = openFailing();
    TopicRecord kept = topic("kept", "s1");
    assertTrue(s.createTopic(kept));
    try {
      FailingFilePath.failWrites = true;
      FailingFilePath.failOpens = true;
      assertThrows(MetadataException.class, () -> s.setOffset(GROUP, kept.resourceName(), 0, 1));
      // Every call fails with the retriable MetadataException (HBASE_OPERATION_FAILED on the wire),
      // not as a closed store, and the probe reports unhealthy.
      MetadataException e = assertThrows(MetadataException.class, () -> s.topic("kept"));
      assertTrue(e.getMessage().contains("could not be reopened yet") && e.getMessage().contains("retry"),
          e.getMessage());
      Optional<String> problem = s.probe();
      assertTrue(problem.isPresent() && problem.get().contains("could not be reopened"), problem.toString());
      FailingFilePath.reset();
      // Reopen attempts are spaced: not before REOPEN_INTERVAL_MS since the last one.
      assertTrue(s.probe().isPresent());
      nanos.addAndGet(MvStoreMetadataStore.REOPEN_INTERVAL_MS * 1_000_000);
      assertEquals(Optional.empty(), s.probe());
    } finally {
      FailingFilePath.reset();
    }
    assertEquals(Optional.of(kept), s.topic("kept"));
    assertTrue(s.createTopic(topic("after", "s1")));
  }

  @Test
  void theFileIsOwnerOnlyAndAWiderExistingOneIsNarrowed() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue(
        Files.getFileStore(dir).supportsFileAttributeView("posix"), "no POSIX permissions here");
    Path file = mvStore().file();
    assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(
        Files.getPosixFilePermissions(file)));
    store.close();
    Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
    store = MvStoreMetadataStore.open(dir);
    assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(
        Files.getPosixFilePermissions(file)));
  }
}
