package io.talos.server.storage;

import java.time.Clock;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logs storage failures of puts and gets on the server (a client learns of its own failure only):
 * at most once per failing partition per interval ({@code storage.failure.log.interval.ms}), with
 * the topic, the partition, the operation and the cause; the next line of that partition says how
 * many failures were not logged meanwhile ({@code suppressed=N}). So a partition whose storage is
 * broken is seen in the log at once and does not flood it at the request rate.
 *
 * <p>At most {@code maxPartitions} partitions are tracked; when full, entries whose interval has
 * passed are dropped first, else the failure is logged without rate limiting of its own (a log
 * flood is better than losing the partition's first failure).
 *
 * <p>Thread-safe.
 */
public final class StorageFailureLog {
  private static final Logger LOG = LoggerFactory.getLogger(StorageFailureLog.class);

  private record Key(String topic, int partition) {}

  private static final class Entry {
    long lastLoggedMs;
    long suppressed;
  }

  private final Clock clock;
  private final long intervalMs;
  private final int maxPartitions;
  private final Consumer<String> sink;
  private final Map<Key, Entry> entries = new ConcurrentHashMap<>();

  public StorageFailureLog(Clock clock, long intervalMs) {
    this(clock, intervalMs, 10_000, LOG::warn);
  }

  /** @param sink where lines go (the WARN log; tests capture them) */
  public StorageFailureLog(Clock clock, long intervalMs, int maxPartitions, Consumer<String> sink) {
    this.clock = clock;
    this.intervalMs = intervalMs;
    this.maxPartitions = maxPartitions;
    this.sink = sink;
  }

  /**
   * Records one failure; logs it unless this partition's failure was logged less than the
   * interval ago.
   *
   * @param operation what failed ("put", "get", "open")
   */
  public void failed(String topic, int partition, String operation, Throwable cause) {
    long now = clock.millis();
    Key key = new Key(topic, partition);
    if (!entries.containsKey(key) && entries.size() >= maxPartitions) evictExpired(now);
    long suppressed;
    if (entries.size() >= maxPartitions && !entries.containsKey(key)) {
      suppressed = 0; // untracked: logged every time
    } else {
      Entry e = entries.computeIfAbsent(key, k -> {
        Entry n = new Entry();
        n.lastLoggedMs = Long.MIN_VALUE;
        return n;
      });
      synchronized (e) {
        if (e.lastLoggedMs != Long.MIN_VALUE && now - e.lastLoggedMs < intervalMs) {
          e.suppressed++;
          return;
        }
        suppressed = e.suppressed;
        e.suppressed = 0;
        e.lastLoggedMs = now;
      }
    }
    sink.accept("storage failure: " + operation + " of partition " + partition + " of topic '" + topic + "' failed: "
        + describe(cause) + (suppressed > 0 ? " (suppressed=" + suppressed + " failures of this partition in the last "
        + intervalMs + " ms, storage.failure.log.interval.ms)" : ""));
  }

  private void evictExpired(long now) {
    for (Iterator<Map.Entry<Key, Entry>> it = entries.entrySet().iterator(); it.hasNext();) {
      Entry e = it.next().getValue();
      synchronized (e) {
        if (now - e.lastLoggedMs >= intervalMs && e.suppressed == 0) it.remove();
      }
    }
  }

  /** The cause chain in one line: each exception's class and message. */
  static String describe(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (int depth = 0; t != null && depth < 5; t = t.getCause(), depth++) {
      if (depth > 0) sb.append(" <- caused by ");
      sb.append(t.getClass().getSimpleName()).append(": ").append(t.getMessage());
      if (t.getCause() == t) break;
    }
    return sb.toString();
  }
}
