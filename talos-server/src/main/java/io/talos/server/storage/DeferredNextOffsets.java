package io.talos.server.storage;

import java.io.Closeable;
import java.io.IOException;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link NextOffsetStore} that stores the raises of {@link #raiseNextOffsetSoon} on a thread of
 * its own, so that a segment roll on a put's thread never waits for the metadata store (the
 * embedded store commits and fsyncs each raise: milliseconds of waiting for write-back on a busy
 * disk, taken by every put queued behind the roll).
 *
 * <p><b>Contract.</b> Pending raises are merged per partition by maximum. {@link #nextOffset}
 * answers the larger of the stored and the pending value, so a reader in this process never sees
 * the record go down. A deferred raise only makes the stored record lag for a moment longer; it
 * lags anyway (by up to the active segment, see {@link NextOffsetStore}), and a lagging record
 * only weakens the missing-data check, never makes it wrong. A raise that fails stays pending
 * and is tried again after {@link #RETRY_MS}. {@link #raiseNextOffset} stores at once (with any
 * pending raise of the partition folded in): opening and closing a log use it, so a partition
 * handed to another server finds its record up to date. {@link #close} stores what is pending;
 * a crash loses it, which is the lag a roll had before it was stored.
 *
 * <p><b>Threads.</b> {@link #start} runs {@link #runOnce} on a daemon thread whenever a raise is
 * pending; tests step {@link #runOnce} instead. Stores of one partition are serialized with
 * {@link #forget}, so a topic's raises are never stored after it returns. Thread-safe.
 */
public final class DeferredNextOffsets implements NextOffsetStore, Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(DeferredNextOffsets.class);
  /** How long a failed store waits before it is tried again (unless another raise comes first). */
  static final long RETRY_MS = 1_000;
  /** How long {@link #close} waits for a store under way before giving its pending raises up. */
  static final long CLOSE_WAIT_MS = 10_000;

  private record Key(String topicResourceName, int partitionId) {}

  private final NextOffsetStore delegate;
  private final Map<Key, Long> pending = new ConcurrentHashMap<>();
  /** Held while storing one pending raise and by {@link #forget}. */
  private final Object storing = new Object();
  private final Semaphore wakeUp = new Semaphore(0);
  private final AtomicLong failures = new AtomicLong();
  private volatile boolean closed;
  private Thread thread;

  public DeferredNextOffsets(NextOffsetStore delegate) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
  }

  /** Starts the thread that stores the pending raises. Once. */
  public synchronized DeferredNextOffsets start(String threadName) {
    if (thread != null) throw new IllegalStateException("already started");
    thread = new Thread(this::run, threadName);
    thread.setDaemon(true);
    thread.start();
    return this;
  }

  @Override
  public long nextOffset(String topicResourceName, int partitionId) throws IOException {
    // pending first: a raise missing from it was stored before it was removed, so the read below sees it
    Long raised = pending.get(new Key(topicResourceName, partitionId));
    long stored = delegate.nextOffset(topicResourceName, partitionId);
    return raised == null ? stored : Math.max(stored, raised);
  }

  @Override
  public void raiseNextOffset(String topicResourceName, int partitionId, long nextOffset) throws IOException {
    Key key = new Key(topicResourceName, partitionId);
    Long raised = pending.get(key);
    delegate.raiseNextOffset(topicResourceName, partitionId, raised == null ? nextOffset : Math.max(nextOffset, raised));
    if (raised != null) pending.remove(key, raised);
  }

  /** Returns at once; the raise is stored by {@link #runOnce} (at once if this store is closed). */
  @Override
  public void raiseNextOffsetSoon(String topicResourceName, int partitionId, long nextOffset) throws IOException {
    if (nextOffset < 0) throw new IllegalArgumentException("nextOffset must be >= 0, was " + nextOffset);
    if (closed) {
      raiseNextOffset(topicResourceName, partitionId, nextOffset);
      return;
    }
    pending.merge(new Key(topicResourceName, partitionId), nextOffset, Math::max);
    wakeUp.release();
    if (closed) runOnce(); // closed meanwhile: its last round may have run before the merge
  }

  /** Drops the pending raises of a deleted topic; none of them is stored after this returns. */
  public void forget(String topicResourceName) {
    synchronized (storing) {
      pending.keySet().removeIf(k -> k.topicResourceName().equals(topicResourceName));
    }
  }

  /** Pending raises (partitions whose stored record lags the raised one). */
  public int pendingCount() {
    return pending.size();
  }

  /** Stores that failed (each is tried again). */
  public long failureCount() {
    return failures.get();
  }

  /**
   * Stores every pending raise once. A failed one stays pending; the first failure of the round
   * is logged with the count of the others.
   *
   * @return whether nothing failed
   */
  public boolean runOnce() {
    int failed = 0;
    Exception first = null;
    Key firstKey = null;
    for (Key key : pending.keySet()) {
      synchronized (storing) {
        Long raised = pending.get(key);
        if (raised == null) continue; // stored by raiseNextOffset, or forgotten
        try {
          delegate.raiseNextOffset(key.topicResourceName(), key.partitionId(), raised);
          pending.remove(key, raised); // a higher raise that came meanwhile stays
        } catch (IOException | RuntimeException e) {
          failures.incrementAndGet();
          if (failed++ == 0) {
            first = e;
            firstKey = key;
          }
        }
      }
    }
    if (failed > 0) {
      LOG.warn("Could not record the next offset of partition {} of {} in the metadata store ({} partitions failed"
          + " in all); their records lag and are tried again", firstKey.partitionId(), firstKey.topicResourceName(),
          failed, first);
    }
    return failed == 0;
  }

  private void run() {
    boolean retrying = false;
    while (!closed) {
      try {
        if (retrying) {
          wakeUp.tryAcquire(RETRY_MS, TimeUnit.MILLISECONDS);
        } else {
          wakeUp.acquire();
        }
      } catch (InterruptedException e) {
        return;
      }
      wakeUp.drainPermits(); // one round stores every raise made so far
      if (closed) return;
      retrying = !runOnce();
    }
  }

  /**
   * Stops the thread and stores the pending raises (a failure is logged; those records lag).
   * Later raises are stored at once. Idempotent.
   */
  @Override
  public void close() {
    Thread t;
    synchronized (this) {
      if (closed) return;
      closed = true;
      t = thread;
    }
    if (t != null) {
      wakeUp.release();
      try {
        t.join(CLOSE_WAIT_MS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (t.isAlive()) {
        LOG.warn("The metadata store did not answer within {} ms; {} partitions' next-offset records lag",
            CLOSE_WAIT_MS, pending.size());
        return;
      }
    }
    runOnce();
  }
}
