package io.talos.server.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Raises stored behind the caller: stepped with {@code runOnce}, except where the thread is the point. */
class DeferredNextOffsetsTest {
  private static final String T = "CL1#t#01";

  /** The in-memory store, which can be made to fail. */
  private static final class Store extends PartitionNextOffsetTest.InMemoryNextOffsets {
    volatile boolean failing;
    int stores;

    @Override
    public void raiseNextOffset(String topicResourceName, int partitionId, long nextOffset) {
      if (failing) throw new IllegalStateException("metadata store unavailable");
      stores++;
      super.raiseNextOffset(topicResourceName, partitionId, nextOffset);
    }
  }

  private final Store store = new Store();
  private final DeferredNextOffsets deferred = new DeferredNextOffsets(store);

  @Test
  void shouldAnswerARaiseAtOnceAndStoreItOnTheNextRound() throws IOException {
    deferred.raiseNextOffsetSoon(T, 0, 10);
    deferred.raiseNextOffsetSoon(T, 0, 30);
    deferred.raiseNextOffsetSoon(T, 0, 20); // merged by max
    assertEquals(0, store.nextOffset(T, 0), "not stored before a round");
    assertEquals(30, deferred.nextOffset(T, 0));
    assertEquals(1, deferred.pendingCount());

    assertTrue(deferred.runOnce());
    assertEquals(30, store.nextOffset(T, 0));
    assertEquals(1, store.stores, "three raises, one store");
    assertEquals(0, deferred.pendingCount());

    deferred.raiseNextOffsetSoon(T, 0, 5);
    assertTrue(deferred.runOnce());
    assertEquals(30, deferred.nextOffset(T, 0), "a lower raise never lowers the record");
  }

  @Test
  void shouldKeepAFailedRaisePendingAndStoreItWhenTheStoreRecovers() throws IOException {
    deferred.raiseNextOffsetSoon(T, 1, 7);
    deferred.raiseNextOffsetSoon(T, 2, 9);
    store.failing = true;
    assertFalse(deferred.runOnce());
    assertEquals(2, deferred.failureCount());
    assertEquals(2, deferred.pendingCount());
    assertEquals(7, deferred.nextOffset(T, 1), "still answered while the store fails");

    store.failing = false;
    assertTrue(deferred.runOnce());
    assertEquals(7, store.nextOffset(T, 1));
    assertEquals(9, store.nextOffset(T, 2));
    assertEquals(0, deferred.pendingCount());
  }

  @Test
  void shouldFoldAPendingRaiseIntoAStoreThatDoesNotWait() throws IOException {
    deferred.raiseNextOffsetSoon(T, 0, 50);
    deferred.raiseNextOffset(T, 0, 40); // a close records its end offset; the pending raise is higher
    assertEquals(50, store.nextOffset(T, 0));
    assertEquals(0, deferred.pendingCount());
  }

  @Test
  void shouldNeverStoreTheRaisesOfAForgottenTopic() throws IOException {
    deferred.raiseNextOffsetSoon(T, 0, 50);
    deferred.raiseNextOffsetSoon("CL1#other#02", 0, 60);
    deferred.forget(T);
    assertTrue(deferred.runOnce());
    assertEquals(0, store.nextOffset(T, 0), "a deleted topic's record is not written back");
    assertEquals(60, store.nextOffset("CL1#other#02", 0));
  }

  @Test
  void shouldStoreWhatIsPendingOnCloseAndLaterRaisesAtOnce() throws IOException {
    deferred.raiseNextOffsetSoon(T, 0, 11);
    deferred.close();
    assertEquals(11, store.nextOffset(T, 0));
    deferred.raiseNextOffsetSoon(T, 0, 12);
    assertEquals(12, store.nextOffset(T, 0), "after close nothing is left pending");
  }

  @Test
  void shouldStoreRaisesOnItsThread() throws Exception {
    CountDownLatch stored = new CountDownLatch(2);
    DeferredNextOffsets threaded = new DeferredNextOffsets(new PartitionNextOffsetTest.InMemoryNextOffsets() {
      @Override
      public void raiseNextOffset(String topicResourceName, int partitionId, long nextOffset) {
        super.raiseNextOffset(topicResourceName, partitionId, nextOffset);
        stored.countDown();
      }
    }).start("test-next-offsets");
    try {
      threaded.raiseNextOffsetSoon(T, 0, 3);
      threaded.raiseNextOffsetSoon(T, 1, 4);
      assertTrue(stored.await(10, TimeUnit.SECONDS), "the thread stored both raises");
    } finally {
      threaded.close();
    }
  }
}
