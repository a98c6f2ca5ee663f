package io.talos.server.storage;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The idempotent-produce state of one partition: for each producer id seen recently, the last
 * {@link #RETAINED_PUTS} puts it stored here (sequence, first offset, next offset). It decides
 * whether a put is new, a repeat of a stored one (answered with the stored offsets, nothing
 * written) or out of order (refused for good).
 *
 * <p>Rules for a put {@code (producerId, sequence)}, see {@link #check}:
 * <ul>
 *   <li>unknown producer (new, expired or evicted): stored, whatever its sequence;
 *   <li>{@code sequence == last + 1}: stored;
 *   <li>{@code sequence} one of the retained puts: a duplicate, answered with that put's offsets;
 *   <li>anything else (a gap, or a repeat older than the retained puts): out of order.
 * </ul>
 *
 * <p>Not only in memory: every record of an idempotent put carries its producer id and sequence
 * (record format version 2, see {@link RecordFormat}), and {@link #recover} rebuilds the state
 * from the log when a partition opens, after a crash or on a takeover by another server.
 *
 * <p>Bounded: at most {@code maxProducers} producers (the one whose last put is oldest is dropped
 * for a new one), and a producer without a put for {@code expiryMs} (by append time) is dropped.
 * A dropped producer's repeat is then stored again, so the expiry must exceed the time a producer
 * keeps retrying a put (its delivery timeout).
 *
 * <p>Not thread-safe: the owning {@link PartitionLog} calls it under its append lock.
 */
public final class ProducerState {
  private static final Logger LOG = LoggerFactory.getLogger(ProducerState.class);

  /** Puts per producer whose offsets are kept to answer repeats. */
  public static final int RETAINED_PUTS = 5;

  /** A put stored in the log: sequence and offsets {@code [firstOffset, nextOffset)}. */
  public record StoredPut(int sequence, long firstOffset, long nextOffset) {}

  /** What to do with a put. */
  public sealed interface Decision permits Append, Duplicate, OutOfOrder {}

  /** A new put: append it. */
  public record Append() implements Decision {}

  /** A repeat of a stored put: answer with its offsets, write nothing. */
  public record Duplicate(StoredPut stored) implements Decision {}

  /** Neither new nor a remembered repeat: refuse, not retriable. */
  public record OutOfOrder(String message) implements Decision {}

  private static final Append APPEND = new Append();

  private static final class Entry {
    final ArrayDeque<StoredPut> recent = new ArrayDeque<>(RETAINED_PUTS);
    long lastAppendTimestampMs;
  }

  private final int maxProducers;
  private final long expiryMs;
  /** Insertion order = order of the last stored put, oldest first (an entry moves to the end on each put). */
  private final LinkedHashMap<Long, Entry> producers = new LinkedHashMap<>();
  private long evicted;

  public ProducerState(int maxProducers, long expiryMs) {
    if (maxProducers < 1) throw new IllegalArgumentException("maxProducers=" + maxProducers + " must be >= 1");
    if (expiryMs < 1) throw new IllegalArgumentException("expiryMs=" + expiryMs + " must be >= 1");
    this.maxProducers = maxProducers;
    this.expiryMs = expiryMs;
  }

  /** Decides about a put; changes nothing. */
  public Decision check(long producerId, int sequence) {
    Entry e = producers.get(producerId);
    if (e == null || e.recent.isEmpty()) return APPEND;
    int last = e.recent.peekLast().sequence();
    if (sequence == last + 1) return APPEND;
    if (sequence <= last) {
      for (StoredPut p : e.recent) {
        if (p.sequence() == sequence) return new Duplicate(p);
      }
      return new OutOfOrder("producer " + producerId + " sent sequence " + sequence + ", a repeat older than the "
          + RETAINED_PUTS + " puts the partition remembers (last stored: " + last + ")");
    }
    return new OutOfOrder("producer " + producerId + " sent sequence " + sequence + " but the last one stored is "
        + last + ": puts " + (last + 1) + " to " + (sequence - 1) + " are missing; expected " + (last + 1));
  }

  /**
   * Records a put stored in the log (after its append is durable, or replayed from the log).
   * Makes room first: drops the producer whose last put is oldest when {@code maxProducers}
   * would be exceeded.
   */
  public void record(long producerId, int sequence, long firstOffset, long nextOffset, long appendTimestampMs) {
    Entry e = producers.remove(producerId);
    if (e == null) {
      while (producers.size() >= maxProducers) {
        Iterator<Map.Entry<Long, Entry>> it = producers.entrySet().iterator();
        long dropped = it.next().getKey();
        it.remove();
        evicted++;
        LOG.debug("producer state full ({} producers): forgot producer {}", maxProducers, dropped);
      }
      e = new Entry();
    }
    if (e.recent.size() == RETAINED_PUTS) e.recent.removeFirst();
    e.recent.addLast(new StoredPut(sequence, firstOffset, nextOffset));
    e.lastAppendTimestampMs = Math.max(e.lastAppendTimestampMs, appendTimestampMs);
    producers.put(producerId, e);
  }

  /**
   * Drops the producers whose last put was appended before {@code nowMs - expiryMs}.
   *
   * @return how many were dropped
   */
  public int expire(long nowMs) {
    int n = 0;
    for (Iterator<Entry> it = producers.values().iterator(); it.hasNext(); ) {
      Entry e = it.next();
      if (e.lastAppendTimestampMs >= nowMs - expiryMs) break; // the rest put later
      it.remove();
      n++;
    }
    return n;
  }

  /** Producers tracked. */
  public int size() {
    return producers.size();
  }

  /** Producers dropped to make room since this state was created. */
  public long evicted() {
    return evicted;
  }

  /** The retained puts of a producer, oldest first; empty if unknown. */
  public List<StoredPut> recentPuts(long producerId) {
    Entry e = producers.get(producerId);
    return e == null ? List.of() : new ArrayList<>(e.recent);
  }

  long expiryMs() {
    return expiryMs;
  }

  /**
   * Rebuilds the state of a log from its records: reads the newest segments back to the first
   * one whose records are all older than {@code nowMs - expiryMs} (those producers would have
   * expired anyway), then replays their version 2 records in offset order. A put counts once its
   * last record ({@code recordsLeftInPut == 0}) is read; the records of a put cut short by a crash
   * were never acknowledged and do not count. A segment that cannot be read to its end is
   * logged; its readable records count.
   *
   * <p>Costs one read of the data appended within the expiry before the newest segment's end.
   */
  static ProducerState recover(List<LogSegment> segments, int maxProducers, long expiryMs, long nowMs) {
    ProducerState state = new ProducerState(maxProducers, expiryMs);
    long cutoff = nowMs - expiryMs;
    int from = segments.size();
    while (from > 0) {
      LogSegment s = segments.get(from - 1);
      if (s.hasRecords() && s.maxAppendTimestampMs() < cutoff) break;
      from--;
    }
    long replayed = 0;
    for (int i = from; i < segments.size(); i++) {
      LogSegment s = segments.get(i);
      if (!s.hasRecords()) continue;
      LogSegment.RecordCursor c = s.cursor(0, s.validBytes());
      long putFirst = -1;
      RecordFormat.ProducerTag putTag = null;
      try {
        RecordFormat.Header h;
        while ((h = c.next()) != null) {
          c.verify(h);
          RecordFormat.ProducerTag t = h.producer();
          if (t != null) {
            if (putTag == null || putTag.producerId() != t.producerId() || putTag.sequence() != t.sequence()) {
              putFirst = h.startOffset();
            }
            putTag = t;
            if (t.recordsLeftInPut() == 0) {
              state.record(t.producerId(), t.sequence(), putFirst, h.nextOffset(), h.appendTimestampMs());
              replayed++;
              putTag = null;
            }
          } else {
            putTag = null;
          }
          c.advance(h);
        }
      } catch (IOException e) {
        LOG.warn("Producer state of {}: stopped reading at position {} ({}); puts after it are not known",
            s, c.position(), e.toString());
      }
    }
    state.expire(nowMs);
    if (replayed > 0) {
      LOG.info("Recovered the producer state from {} segments: {} idempotent puts, {} producers",
          segments.size() - from, replayed, state.size());
    }
    return state;
  }
}
