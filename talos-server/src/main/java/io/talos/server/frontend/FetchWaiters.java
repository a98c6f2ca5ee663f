package io.talos.server.frontend;

import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Long poll: getMessage calls that found nothing new, parked until their partition gets an append
 * or their wait ends, without holding a thread. A parked get is an object in a per-partition list
 * plus one scheduled timeout; its HTTP response stays open (Jetty completes it asynchronously).
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
    private volatile ScheduledFuture<?> timeout;

    Waiter(Runnable onWake, Runnable onTimeout) {
      this.onWake = onWake;
      this.onTimeout = onTimeout;
    }
  }

  private final int maxWaiters;
  private final long maxWaitMs;
  private final ConcurrentHashMap<PartitionKey, Slot> slots = new ConcurrentHashMap<>();
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
    timer.setRemoveOnCancelPolicy(true);
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
      ScheduledFuture<?> t = w.timeout;
      if (t != null) t.cancel(false);
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
      slot.waiters.add(waiter);
    }
    try {
      waiter.timeout = timer.schedule(() -> expire(slot, waiter), waitMs, TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      expire(slot, waiter); // closing
    }
    return Parked.PARKED;
  }

  private void expire(Slot slot, Waiter waiter) {
    if (!waiter.claimed.compareAndSet(false, true)) return;
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
      for (Waiter w : all) expire(slot, w);
    }
  }
}
