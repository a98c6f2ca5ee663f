package io.talos.client.consumer.internals;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.client.TalosException;
import io.talos.client.consumer.ConsumedMessage;
import io.talos.client.consumer.ConsumerConfig;
import io.talos.client.consumer.ConsumerConfig.OffsetReset;
import io.talos.client.consumer.MessageCheckpointer;
import io.talos.client.consumer.MessageProcessor;
import io.talos.thrift.ErrorCode;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** One partition's reader stepped by hand, with a hand-moved clock and an in-memory partition. */
class PartitionReaderTest {
  final AtomicLong clock = new AtomicLong(1_000);
  /** The partition: offsets start..end (inclusive). */
  long start = 0;
  long end = 99;
  long committedOnServer = -1;
  final List<Long> commits = new ArrayList<>();
  boolean lockHeld = true;
  final List<List<Long>> processed = new ArrayList<>();
  final List<String> calls = new ArrayList<>();
  RuntimeException failNext;

  final PartitionReader.GroupOffsets group = new PartitionReader.GroupOffsets() {
    @Override
    public long committed() {
      return committedOnServer;
    }

    @Override
    public boolean commit(long offset) {
      if (!lockHeld) return false;
      commits.add(offset);
      committedOnServer = offset;
      return true;
    }

    @Override
    public long[] range() {
      return new long[] {start, end};
    }

    @Override
    public long offsetForTimestamp(long timestampMs) {
      // every message of this fake partition was appended at time 0
      return timestampMs <= 0 ? start : end + 1;
    }
  };

  List<ConsumedMessage> fetch(long offset, int max) {
    if (offset < start || offset > end + 1) {
      throw new TalosException(ErrorCode.MESSAGE_OFFSET_OUT_OF_RANGE, "offset " + offset);
    }
    List<ConsumedMessage> out = new ArrayList<>();
    for (long o = offset; o <= end && out.size() < max; o++) {
      out.add(new ConsumedMessage(o, new byte[] {1}, 0, 0, null));
    }
    return out;
  }

  MessageCheckpointer lastCheckpointer;

  PartitionReader reader(ConsumerConfig config) {
    MessageProcessor p = new MessageProcessor() {
      @Override
      public void init(int partition, long startOffset) {
        calls.add("init " + startOffset);
      }

      @Override
      public void process(List<ConsumedMessage> messages, MessageCheckpointer checkpointer) {
        lastCheckpointer = checkpointer;
        if (failNext != null) {
          RuntimeException e = failNext;
          failNext = null;
          throw e;
        }
        processed.add(messages.stream().map(ConsumedMessage::offset).toList());
      }

      @Override
      public void shutdown(MessageCheckpointer checkpointer) {
        calls.add("shutdown");
      }
    };
    return new PartitionReader(0, this::fetch, p, group, config, clock::get,
        new ConsumerMetrics(() -> 1, () -> 0), true);
  }

  static ConsumerConfig.Builder config() {
    return ConsumerConfig.builder().maxFetchRecords(10).autoCommitIntervalMs(5_000)
        .autoCommitMessages(1_000_000);
  }

  @Test
  void processesBatchesInOrderAndCommitsByInterval() {
    PartitionReader r = reader(config().build());
    assertEquals(PartitionReader.Step.BUSY, r.runOnce()); // init
    assertEquals(List.of("init 0"), calls);
    for (int i = 0; i < 3; i++) r.runOnce();
    assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L), processed.get(0));
    assertEquals(3, processed.size());
    assertEquals(List.of(), commits, "interval not reached");
    assertEquals(0, r.lag(), "the end is known only as far as fetched: 29");
    clock.addAndGet(5_000);
    r.runOnce();
    assertEquals(List.of(39L), commits);
  }

  @Test
  void commitsByCountAndOnStopOnlyWithAutoCommit() {
    PartitionReader r = reader(config().autoCommitMessages(25).build());
    for (int i = 0; i < 4; i++) r.runOnce(); // init + 30 messages
    assertEquals(List.of(29L), commits);
    r.runOnce(); // 40
    r.stop(true);
    assertEquals(List.of(29L, 39L), commits);
    assertEquals("shutdown", calls.get(calls.size() - 1));
    assertEquals(PartitionReader.Step.STOPPED, r.runOnce());

    commits.clear();
    committedOnServer = -1;
    PartitionReader manual = reader(config().autoCommit(false).build());
    for (int i = 0; i < 4; i++) manual.runOnce();
    clock.addAndGet(60_000);
    manual.runOnce();
    manual.stop(true);
    assertEquals(List.of(), commits, "no auto-commit, no commit on stop");
  }

  @Test
  void resumesAfterTheCommittedOffsetAndManualCheckpointsAreBounded() {
    committedOnServer = 41;
    PartitionReader r = reader(config().autoCommit(false).build());
    r.runOnce();
    assertEquals(List.of("init 42"), calls);
    r.runOnce();
    assertEquals(42L, processed.get(0).get(0));
    assertTrue(lastCheckpointer.checkpoint(45));
    assertThrows(IllegalArgumentException.class, () -> lastCheckpointer.checkpoint(52));
    assertThrows(IllegalArgumentException.class, () -> lastCheckpointer.checkpoint(40));
    assertTrue(lastCheckpointer.checkpoint());
    assertEquals(List.of(45L, 51L), commits);
    lockHeld = false;
    r.runOnce();
    assertFalse(lastCheckpointer.checkpoint(), "refused once the lock is gone");
  }

  @Test
  void aFailingProcessCallGetsTheSameBatchAgain() {
    PartitionReader r = reader(config().build());
    r.runOnce();
    failNext = new IllegalStateException("boom");
    assertEquals(PartitionReader.Step.IDLE, r.runOnce());
    r.runOnce();
    assertEquals(List.of(List.of(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L)), processed);
    failNext = new PartitionReader.RetryLater();
    assertEquals(PartitionReader.Step.BLOCKED, r.runOnce());
    r.runOnce();
    assertEquals(10L, processed.get(1).get(0));
  }

  @Test
  void outOfRangeResetsByPolicy() {
    committedOnServer = 500; // beyond the end
    PartitionReader earliest = reader(config().build());
    earliest.runOnce(); // init at 501
    earliest.runOnce(); // out of range -> 0
    earliest.runOnce();
    assertEquals(0L, processed.get(0).get(0));

    start = 50; // retention removed 0..49
    processed.clear();
    committedOnServer = 10;
    PartitionReader latest = reader(config().autoOffsetReset(OffsetReset.LATEST).build());
    latest.runOnce();
    latest.runOnce(); // 11 is gone -> 100 (the end)
    assertEquals(PartitionReader.Step.IDLE, latest.runOnce());
    assertEquals(List.of(), processed);
    assertEquals(0, latest.lag());

    PartitionReader none = reader(config().autoOffsetReset(OffsetReset.NONE).build());
    none.runOnce();
    none.runOnce();
    assertEquals(ErrorCode.MESSAGE_OFFSET_OUT_OF_RANGE, none.failure().errorCode());
    assertEquals(PartitionReader.Step.IDLE, none.runOnce());
    assertEquals(List.of(), processed);
  }

  @Test
  void lagFollowsTheEndOffset() {
    PartitionReader r = reader(config().build());
    assertEquals(0, r.lag(), "not started");
    r.runOnce();
    r.updateEndOffset(99);
    assertEquals(100, r.lag());
    r.runOnce();
    assertEquals(90, r.lag());
    for (int i = 0; i < 10; i++) r.runOnce();
    assertEquals(0, r.lag());
    end = 120;
    r.updateEndOffset(120);
    assertEquals(21, r.lag());
  }

  /**
   * Poll mode: poll() marks what it returned while another thread runs the partition's step. A
   * step that commits holds the reader for the commit's round trip; marking must not wait for it
   * (it once did, so one partition's commit held up poll() and with it every partition).
   */
  @Test
  void markingConsumedDoesNotWaitForACommitInProgress() throws Exception {
    CountDownLatch commitStarted = new CountDownLatch(1);
    CountDownLatch releaseCommit = new CountDownLatch(1);
    List<Long> slowCommits = new java.util.concurrent.CopyOnWriteArrayList<>();
    PartitionReader.GroupOffsets slowGroup = new PartitionReader.GroupOffsets() {
      @Override
      public long committed() {
        return -1;
      }

      @Override
      public boolean commit(long offset) {
        commitStarted.countDown();
        try {
          assertTrue(releaseCommit.await(30, TimeUnit.SECONDS), "test never released the commit");
        } catch (InterruptedException e) {
          throw new IllegalStateException(e);
        }
        slowCommits.add(offset);
        return true;
      }

      @Override
      public long[] range() {
        return new long[] {start, end};
      }

      @Override
      public long offsetForTimestamp(long timestampMs) {
        return start;
      }
    };
    MessageProcessor feeder = new MessageProcessor() {
      @Override
      public void init(int partition, long startOffset) {}

      @Override
      public void process(List<ConsumedMessage> messages, MessageCheckpointer checkpointer) {}
    };
    PartitionReader r = new PartitionReader(0, this::fetch, feeder, slowGroup,
        config().autoCommitMessages(5).build(), clock::get, new ConsumerMetrics(() -> 1, () -> 0), false);
    r.runOnce(); // init
    r.runOnce(); // offsets 0..9 handed to poll
    r.markConsumed(9); // poll returned them: 10 consumed, over auto.commit.messages
    CompletableFuture<PartitionReader.Step> step = CompletableFuture.supplyAsync(r::runOnce); // fetches 10..19, commits 9
    assertTrue(commitStarted.await(30, TimeUnit.SECONDS), "the step did not commit");
    try {
      // poll returning 10..19 meanwhile: must not block on the step's commit
      CompletableFuture<Void> mark = CompletableFuture.runAsync(() -> r.markConsumed(19));
      mark.get(10, TimeUnit.SECONDS);
      assertEquals(19, r.consumedOffset());
    } finally {
      releaseCommit.countDown();
    }
    assertEquals(PartitionReader.Step.BUSY, step.get(30, TimeUnit.SECONDS));
    assertEquals(List.of(9L), slowCommits);
    assertEquals(9, r.committedOffset());
    // the 10 marked during the commit count towards the next one (auto.commit.messages=5)
    r.runOnce();
    assertEquals(List.of(9L, 19L), slowCommits);
  }
}
