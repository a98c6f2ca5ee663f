package io.talos.server.frontend;

import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Long poll: getMessage calls that found nothing new, parked until their partition gets an append
 * or their wait ends, without holding a thread. A parked get is an object in a per-partition list
 * and in the {@link Bucket} of the tick its wait ends in; its HTTP response stays open (Jetty
 * completes it asynchronously).
 *
 * <p>Wait ends are kept in buckets, one per tick, each expired by one scheduled task, rather than
 * one scheduled task per get: a get that is woken by an append (the common case for a consumer at
 * the tail) then costs no cancelling, only the first get of a tick schedules, and the timer thread
 * wakes once per tick that had gets ending in it rather than twice per get (with a task per get,
 * each new one became the timer queue's head as soon as the previous was cancelled, and woke the
 * timer thread). The price: a wait ends up to one tick after its time, never before ({@link
 * #tickMs}: 1 ms for waits under 32 ms, else up to 1/16 of the wait and at most {@value
 * #MAX_TICK_MS} ms).
 *
 * <p>Lost wake-ups cannot happen: every partition has an append counter ({@link Slot}), raised
 * after an append has become readable. A get reads the counter <em>before</em> it reads the
 * partition and parks only if the counter has not moved since; if it has, the get runs again at
 * once. Slots are kept for the life of the server (one small object per partition that was
 * polled or appended to while polled), because dropping one could lose that ordering.
 *
 * <p>Bounds: at most {@code maxWaiters} gets are parked on this node; a get over that limit is
 * answered at once with its empty result (the client fetches again, as without long poll). A
 * woken get is handed back to the task pool ({@code resubmit}); if the pool refuses it, it is
 * answered at once the same way. {@link #close} answers every parked get.
 *
 * <p>Thread-safe: a slot's list is guarded by the slot; a waiter is answered exactly once (its
 * {@code claimed} flag decides between wake, timeout and close).
 */
final class FetchWaiters implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FetchWaiters.class);

  /** What {@link #park} did. */
  enum Parked {
    /** parked: the waiter's {@code onWake} or {@code onTimeout} will run later, once */
    PARKED,
    /** the partition got an append since the get read the counter: run the get again now */
    CHANGED,
    /** over {@code maxWaiters} (or closed): answer now */
    FULL
  }

  /** A partition's append counter and parked gets. */
  static final class Slot {
    private long appends;
    private final List<Waiter> waiters = new ArrayList<>(2);

    synchronized long appends() {
      return appends;
    }
  }

  /** One parked get: run {@code onWake} after an append, {@code onTimeout} when the wait ends. */
  static final class Waiter {
    private final Runnable onWake;
    private final Runnable onTimeout;
    private final AtomicBoolean claimed = new AtomicBoolean();
    /** Set once parked (before it can be found in its bucket), to leave the slot on expiry. */
    private volatile Slot slot;
    /** Set once in its bucket, to leave it when woken; null until then. */
    private volatile Bucket bucket;

    Waiter(Runnable onWake, Runnable onTimeout) {
      this.onWake = onWake;
      this.onTimeout = onTimeout;
    }
  }

  /**
   * The gets whose waits end at {@code endMs} ({@link System#nanoTime} in ms). Once {@code fired},
   * nothing is added any more (a get that comes later makes a new bucket for the same end, which
   * fires at once). Guarded by itself.
   */
  static final class Bucket {
    final long endMs;
    private final Set<Waiter> waiters = new HashSet<>();
    private boolean fired;

    Bucket(long endMs) {
      this.endMs = endMs;
    }
  }

  /** Longest tick a wait's end is rounded up to, in ms. */
  static final int MAX_TICK_MS = 16;

  private final int maxWaiters;
  private final long maxWaitMs;
  private final ConcurrentHashMap<PartitionKey, Slot> slots = new ConcurrentHashMap<>();
  /**
   * Buckets by end; one leaves when it fires. At most one per tick within the next {@code
   * maxWaitMs} exists (callers park for at most that long; for waits of 256 ms and more, one per 16
   * ms).
   */
  private final ConcurrentHashMap<Long, Bucket> buckets = new ConcurrentHashMap<>();
  private final AtomicInteger parked = new AtomicInteger();
  private final ScheduledThreadPoolExecutor timer;
  private final Meter woken;
  private final Meter timedOut;
  private final Meter refused;
  private volatile boolean closed;

  /**
   * @param maxWaitMs longest a get is held, whatever it asks ({@code message.get.wait.max.ms});
   *     0 disables long poll
   * @param maxWaiters most gets parked at once on this node ({@code message.get.waiters.max})
   */
  FetchWaiters(long maxWaitMs, int maxWaiters, MetricRegistry metrics) {
    this.maxWaitMs = maxWaitMs;
    this.maxWaiters = maxWaiters;
    this.timer = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, "talos-fetch-wait");
      t.setDaemon(true);
      return t;
    });
    metrics.gauge("fetch.waiters.parked", () -> parked::get);
    this.woken = metrics.meter("fetch.waiters.woken");
    this.timedOut = metrics.meter("fetch.waiters.timeouts");
    this.refused = metrics.meter("fetch.waiters.refused");
  }

  /** The longest wait this server grants; 0 when long poll is off. */
  long maxWaitMs() {
    return maxWaitMs;
  }

  /** Gets parked now. */
  int parked() {
    return parked.get();
  }

  /** The partition's slot; read {@link Slot#appends()} before reading the partition. */
  Slot slot(String topic, int partition) {
    return slots.computeIfAbsent(new PartitionKey(topic, partition), k -> new Slot());
  }

  /**
   * Called after an append to the partition is readable: counts it and wakes the partition's
   * parked gets. Cheap when nobody polls the partition (one map lookup).
   */
  void appended(String topic, int partition) {
    Slot slot = slots.get(new PartitionKey(topic, partition));
    if (slot == null) return;
    List<Waiter> wake;
    synchronized (slot) {
      slot.appends++;
      if (slot.waiters.isEmpty()) return;
      wake = new ArrayList<>(slot.waiters);
      slot.waiters.clear();
    }
    for (Waiter w : wake) {
      if (!w.claimed.compareAndSet(false, true)) continue;
      parked.decrementAndGet();
      Bucket b = w.bucket;
      if (b != null) {
        synchronized (b) {
          b.waiters.remove(w);
        }
      } // else not in its bucket yet: the bucket finds it claimed when it fires
      woken.mark();
      w.onWake.run();
    }
  }

  /**
   * Parks {@code waiter} on {@code slot} until an append or {@code waitMs} from now.
   *
   * @param seenAppends {@link Slot#appends()} as read before the get read the partition
   */
  Parked park(Slot slot, long seenAppends, Waiter waiter, long waitMs) {
    if (closed || waitMs <= 0) return Parked.FULL;
    if (parked.incrementAndGet() > maxWaiters) {
      parked.decrementAndGet();
      refused.mark();
      return Parked.FULL;
    }
    synchronized (slot) {
      if (slot.appends != seenAppends) {
        parked.decrementAndGet();
        return Parked.CHANGED;
      }
      waiter.slot = slot;
      slot.waiters.add(waiter);
    }
    long endMs = endMs(System.nanoTime(), waitMs);
    while (true) {
      if (closed) { // close() may have scanned the slot already, and the timer runs no more tasks
        expire(waiter);
        return Parked.PARKED;
      }
      Bucket b = buckets.get(endMs);
      if (b == null) {
        Bucket created = new Bucket(endMs);
        b = buckets.putIfAbsent(endMs, created);
        if (b == null) {
          b = created;
          if (!schedule(created)) continue; // refused: closing, seen at the top
        }
      }
      synchronized (b) {
        if (!b.fired) {
          b.waiters.add(waiter);
          waiter.bucket = b;
          // Woken meanwhile, before its bucket was known to appended(): leave it now. (appended()
          // claims, then reads the bucket; this sets the bucket, then reads the claim.)
          if (waiter.claimed.get()) b.waiters.remove(waiter);
          break;
        }
      } // fired meanwhile, and left the map: the next round makes a new one
    }
    if (closed) expire(waiter); // closed meanwhile: its bucket may never fire
    return Parked.PARKED;
  }

  /**
   * The end of a wait of {@code waitMs} from {@code nowNanos} ({@link System#nanoTime}), in ms of
   * the same clock: at or after {@code nowNanos + waitMs}, rounded up to its tick.
   */
  static long endMs(long nowNanos, long waitMs) {
    long tick = tickMs(waitMs);
    long earliestMs = Math.floorDiv(nowNanos, 1_000_000L) + 1 + waitMs; // the current ms rounded up
    return Math.floorDiv(earliestMs + tick - 1, tick) * tick;
  }

  /**
   * The tick a wait of {@code waitMs} ends on: the largest power of two of at most {@link
   * #MAX_TICK_MS} and at most 1/16 of the wait (1 ms for waits under 32 ms).
   */
  static long tickMs(long waitMs) {
    return Long.highestOneBit(Math.max(1, Math.min(MAX_TICK_MS, waitMs / 16)));
  }

  /** Schedules {@code b} to fire at its end (never before); false, and {@code b} removed, if refused. */
  private boolean schedule(Bucket b) {
    try {
      timer.schedule(() -> fire(b), b.endMs * 1_000_000L - System.nanoTime(), TimeUnit.NANOSECONDS);
      return true;
    } catch (RejectedExecutionException e) { // closing
      buckets.remove(b.endMs, b);
      synchronized (b) {
        b.fired = true;
      }
      return false;
    }
  }

  /** Ends the wait of every get still in {@code b}. */
  private void fire(Bucket b) {
    buckets.remove(b.endMs, b);
    List<Waiter> due;
    synchronized (b) {
      b.fired = true;
      due = new ArrayList<>(b.waiters);
      b.waiters.clear();
    }
    for (Waiter w : due) {
      try {
        expire(w);
      } catch (RuntimeException e) { // one get's answer failing must not strand the others
        LOG.warn("Answering a long-poll get at the end of its wait failed", e);
      }
    }
  }

  /** Buckets now (for tests). */
  int buckets() {
    return buckets.size();
  }

  /** Gets in the buckets now, over all of them (for tests: a woken get leaves its bucket). */
  int bucketed() {
    int n = 0;
    for (Bucket b : buckets.values()) {
      synchronized (b) {
        n += b.waiters.size();
      }
    }
    return n;
  }

  private void expire(Waiter waiter) {
    if (!waiter.claimed.compareAndSet(false, true)) return;
    Slot slot = waiter.slot;
    synchronized (slot) {
      slot.waiters.remove(waiter);
    }
    parked.decrementAndGet();
    timedOut.mark();
    waiter.onTimeout.run();
  }

  /** Answers every parked get (as if its wait ended) and refuses new ones. */
  @Override
  public void close() {
    closed = true;
    timer.shutdownNow();
    for (Slot slot : slots.values()) {
      List<Waiter> all;
      synchronized (slot) {
        all = new ArrayList<>(slot.waiters);
      }
      for (Waiter w : all) expire(w);
    }
    buckets.clear();
  }
}
