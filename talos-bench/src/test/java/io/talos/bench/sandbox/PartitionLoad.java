package io.talos.bench.sandbox;

import io.talos.client.TalosClient;
import io.talos.client.TalosException;
import io.talos.client.producer.PutResult;
import io.talos.client.producer.SimpleProducer;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One producer thread on one partition with our SDK's SimpleProducer, through every node's client
 * in turn: it puts batches of numbered messages and records every acknowledged offset with its
 * message's number, when the put was sent and when it was answered. A retriable failure (node
 * down, paused, PARTITION_NOT_SERVING, timeout) moves it to the next node's client; a
 * non-retriable one is recorded and ends the load. A message's number is never sent twice, so a
 * payload found twice in the partition was stored twice by the servers.
 *
 * <p>Thread-safe reads of the records while it runs.
 */
final class PartitionLoad implements AutoCloseable {
  /** An acknowledged put: its first offset, count, first message number, sent and answered times. */
  record Ack(long offset, int count, long firstSeq, long sentMs, long ackMs) {}

  private final List<SimpleProducer> producers;
  private final int partition;
  private final SortedMap<Long, Long> ackedSeqByOffset = new ConcurrentSkipListMap<>();
  private final List<Ack> acks = new CopyOnWriteArrayList<>();
  private final List<Long> reusedOffsets = new CopyOnWriteArrayList<>();
  private final Map<String, AtomicLong> retriable = new ConcurrentHashMap<>();
  private final List<String> nonRetriable = new CopyOnWriteArrayList<>();
  private final AtomicBoolean stop = new AtomicBoolean();
  private final Thread thread;

  PartitionLoad(List<TalosClient> clients, String topic, int partition) {
    this.partition = partition;
    this.producers = new ArrayList<>();
    for (TalosClient c : clients) producers.add(c.producer(topic, partition));
    this.thread = new Thread(this::run, "load-" + topic + "-" + partition);
    thread.setDaemon(true);
    thread.start();
  }

  static byte[] payload(int partition, long seq) {
    return ByteBuffer.allocate(16).putLong(partition).putLong(seq).array();
  }

  /** The message number in a payload of this partition, or -1. */
  static long seqOf(byte[] payload, int partition) {
    if (payload.length != 16) return -1;
    ByteBuffer b = ByteBuffer.wrap(payload);
    return b.getLong() == partition ? b.getLong() : -1;
  }

  private void run() {
    long seq = 0;
    int at = 0;
    while (!stop.get() && nonRetriable.isEmpty()) {
      int n = 1 + (int) (seq % 3);
      List<byte[]> batch = new ArrayList<>(n);
      for (int i = 0; i < n; i++) batch.add(payload(partition, seq + i));
      long sent = System.currentTimeMillis();
      try {
        PutResult r = producers.get(at).put(batch);
        long acked = System.currentTimeMillis();
        long first = r.firstOffset().orElseThrow(() -> new IllegalStateException("no offset in the answer"));
        for (int i = 0; i < n; i++) {
          if (ackedSeqByOffset.putIfAbsent(first + i, seq + i) != null) reusedOffsets.add(first + i);
        }
        acks.add(new Ack(first, n, seq, sent, acked));
      } catch (TalosException e) {
        if (e.isRetriable()) {
          retriable.computeIfAbsent(e.errorCode() != null ? e.errorCode().name()
              : e.httpStatus() > 0 ? "HTTP " + e.httpStatus() : "transport", k -> new AtomicLong()).incrementAndGet();
          at = (at + 1) % producers.size();
          pause(20);
        } else {
          nonRetriable.add(e.toString());
        }
      } catch (RuntimeException e) {
        nonRetriable.add(e.toString());
      }
      seq += n; // never sent again, acknowledged or not
      pause(3);
    }
  }

  private static void pause(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  int partition() {
    return partition;
  }

  int ackCount() {
    return ackedSeqByOffset.size();
  }

  /** Acknowledged message number by offset. */
  SortedMap<Long, Long> acked() {
    return ackedSeqByOffset;
  }

  List<Ack> acks() {
    return acks;
  }

  List<Long> reusedOffsets() {
    return reusedOffsets;
  }

  Map<String, AtomicLong> retriableErrors() {
    return retriable;
  }

  List<String> nonRetriableErrors() {
    return nonRetriable;
  }

  /** Waits until {@code count} messages more than now are acknowledged with puts sent after {@code sinceMs}. */
  void awaitAcksSince(long sinceMs, int count, long timeoutMs) throws InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (acks.stream().filter(a -> a.sentMs() >= sinceMs).mapToInt(Ack::count).sum() < count) {
      if (!nonRetriable.isEmpty()) throw new AssertionError("non-retriable errors: " + nonRetriable);
      if (System.currentTimeMillis() > deadline) {
        throw new AssertionError("fewer than " + count + " messages acknowledged within " + timeoutMs
            + " ms (retriable errors: " + retriable + ")");
      }
      Thread.sleep(10);
    }
  }

  /** When the first put sent at or after {@code sinceMs} was acknowledged. */
  long firstAckSince(long sinceMs) {
    return acks.stream().filter(a -> a.sentMs() >= sinceMs).mapToLong(Ack::ackMs).min()
        .orElseThrow(() -> new AssertionError("nothing acknowledged since " + sinceMs));
  }

  @Override
  public void close() throws InterruptedException {
    stop.set(true);
    thread.join(60_000);
  }
}
