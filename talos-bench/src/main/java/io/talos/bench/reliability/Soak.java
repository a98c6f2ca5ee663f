package io.talos.bench.reliability;

import io.talos.client.TalosClient;
import io.talos.client.producer.ProducerConfig;
import io.talos.client.producer.ProducerRecord;
import io.talos.client.producer.TalosProducer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.HdrHistogram.Recorder;
import org.HdrHistogram.Histogram;

/**
 * Scenario 6, soak: the maximum put throughput of a real server process is measured first, then
 * producers hold half of it for {@code seconds}; every {@code sampleSeconds} the server's resident
 * memory, open file descriptors and threads (from /proc) and the p99 of the time from send to
 * acknowledgement are sampled. After the warm-up (the first quarter), RSS must stay within ±10%
 * of its first value, and descriptors and threads flat. Every acknowledged message is read back.
 *
 * <p>The load is the SDK's asynchronous {@link TalosProducer} (one for the run, idempotent,
 * batches of up to {@code batch} 16-byte records per partition, {@code linger.ms} 5, one put in
 * flight per partition), fed by one thread per partition. The maximum is what the server
 * acknowledges when those threads send without pausing (a thread waits only when the producer's
 * buffer is full): acknowledged messages per second over the second half of a
 * {@code probeSeconds} probe (the first half warms up both JVMs). The producer batches whatever
 * arrives while a partition's put is in flight, so the probe is bound by the server (and the
 * machine it shares with the harness), not by one put's round trip.
 *
 * <p>The server runs with {@code -Xms} equal to {@code -Xmx} and its heap pre-touched, so RSS
 * growth is growth outside the heap (direct buffers, thread stacks, metaspace): a leak.
 */
final class Soak {
  static final String TOPIC = "soak";
  /** Fixed heap, pre-touched: RSS then moves only with memory outside the heap. */
  static final String DEFAULT_JVM = "-Xms256m -Xmx256m -XX:+AlwaysPreTouch";
  /** The producer's batch.max.records by default. */
  static final int DEFAULT_BATCH = 1000;
  /**
   * Buffer of the producer: a few batches per partition. Larger only lengthens the queue a send
   * waits in (and the probe's drain), not the throughput.
   */
  private static final long BUFFER_BYTES = 1024 * 1024;

  /** {@code batch}: the producer's batch.max.records. */
  record Options(int seconds, int probeSeconds, int sampleSeconds, int partitions, int batch, String serverJvm) {}

  /** One sample; {@code p99Ms}: send to acknowledgement, over the sample's interval. */
  record Sample(long atSecond, long rssKb, long fds, long threads, double p99Ms, long messages) {}

  /** What the run measured. */
  record Result(Tally tally, double maxPerSecond, double targetPerSecond, List<Sample> samples,
      double rssDriftPercent, long fdDrift, long threadDrift) {}

  private final Options o;
  private final Path work;
  private final Progress progress;

  Soak(Options o, Path work, Progress progress) {
    this.o = o;
    this.work = work;
    this.progress = progress;
  }

  Result run() throws Exception {
    Map<String, String> props = new LinkedHashMap<>();
    props.put("storage.durability", "flush");
    AckLedger ledger = new AckLedger();
    long[] nextSeq = new long[o.partitions()];
    AtomicLong failed = new AtomicLong();
    AtomicReference<String> firstFailure = new AtomicReference<>();
    ProducerConfig config = ProducerConfig.builder().batchMaxRecords(o.batch()).lingerMs(5)
        .bufferMemoryBytes(BUFFER_BYTES).maxBlockMs(600_000).build();
    try (ServerProcess server = new ServerProcess(work.resolve("data"), props, o.serverJvm())) {
      server.start(120_000);
      try (TalosClient client = server.client(30_000)) {
        client.admin().createTopic(TOPIC, o.partitions());
        double max;
        try (TalosProducer producer = client.producer(TOPIC, config)) {
          AtomicLong probed = new AtomicLong();
          Load probe = new Load(producer, ledger, nextSeq, 0, probed, new Recorder(3), failed, firstFailure);
          long probeMs = o.probeSeconds() * 1000L;
          probe.start(probeMs);
          Thread.sleep(probeMs / 2);
          long fromAcks = probed.get();
          long fromNanos = System.nanoTime();
          probe.join();
          max = (probed.get() - fromAcks) / ((System.nanoTime() - fromNanos) / 1e9);
          producer.flush();
          double target = max / 2;
          progress.note(String.format("soak: maximum %.0f msg/s, holding %.0f msg/s for %d s", max, target,
              o.seconds()));

          List<Sample> samples = new ArrayList<>();
          AtomicLong soaked = new AtomicLong();
          Recorder soakLatency = new Recorder(3);
          Load load = new Load(producer, ledger, nextSeq, target, soaked, soakLatency, failed, firstFailure);
          long start = System.currentTimeMillis();
          load.start(o.seconds() * 1000L);
          Histogram interval = null;
          while (!load.done()) {
            Thread.sleep(o.sampleSeconds() * 1000L);
            interval = soakLatency.getIntervalHistogram(interval);
            Sample s = new Sample((System.currentTimeMillis() - start) / 1000, rssKb(server.pid()), fds(server.pid()),
                threads(server.pid()), interval.getTotalCount() == 0 ? 0 : interval.getValueAtPercentile(99) / 1000.0,
                soaked.get());
            samples.add(s);
            progress.note("soak: " + s);
          }
          load.join();
          producer.flush();
          return result(client, ledger, max, target, samples, failed.get(), firstFailure.get());
        }
      }
    }
  }

  private Result result(TalosClient client, AckLedger ledger, double max, double target, List<Sample> samples,
      long failed, String firstFailure) {
    AckLedger.Check total = AckLedger.Check.ZERO;
    for (int p = 0; p < o.partitions(); p++) {
      total = total.plus(ledger.verify(p, CrashCycles.readAll(client.consumer(TOPIC, p), p), new HashSet<>()));
    }
    List<Sample> after = samples.subList(Math.min(samples.size() - 1, samples.size() / 4), samples.size());
    Sample first = after.get(0);
    Sample last = samples.get(samples.size() - 1);
    double rssDrift = 0;
    long fdDrift = 0, threadDrift = 0;
    for (Sample s : after) {
      double d = 100.0 * (s.rssKb() - first.rssKb()) / first.rssKb();
      if (Math.abs(d) > Math.abs(rssDrift)) rssDrift = d;
      fdDrift = Math.max(fdDrift, Math.abs(s.fds() - first.fds()));
      threadDrift = Math.max(threadDrift, Math.abs(s.threads() - first.threads()));
    }
    double p99Min = after.stream().mapToDouble(Sample::p99Ms).min().orElse(0);
    double p99Max = after.stream().mapToDouble(Sample::p99Ms).max().orElse(0);
    Tally tally = new Tally("6 soak", String.format("local, flush, %d partitions, Talos SDK TalosProducer (batches"
        + " of up to %d), %.0f msg/s (50%% of %.0f), %d s", o.partitions(), o.batch(), target, max, o.seconds()), 1,
        ledger.acknowledged(), total.readBack(), total.lost() + ledger.reusedOffsets(), total.duplicated(),
        total.reordered(), total.refused(),
        String.format("after warm-up: RSS %d -> %d KiB (largest drift %+.1f%%), fds %d -> %d (max drift %d),"
            + " threads %d -> %d (max drift %d), send-to-ack p99 per %d s %.1f-%.1f ms; records failed: %d%s",
            first.rssKb(), last.rssKb(), rssDrift, first.fds(), last.fds(), fdDrift, first.threads(),
            last.threads(), threadDrift, o.sampleSeconds(), p99Min, p99Max, failed,
            firstFailure == null ? "" : " (first: " + firstFailure + ")"));
    return new Result(tally, max, target, samples, rssDrift, fdDrift, threadDrift);
  }

  /**
   * One thread per partition sending 16-byte numbered records through {@code producer}: at
   * {@code perSecond} in total (each thread sends what is due by its clock, then sleeps a
   * millisecond or until the next record is due), or without pausing when 0. The callbacks
   * record the acknowledgements in the ledger, count them and the send-to-acknowledgement time.
   * {@code nextSeq[p]} is confined to partition p's thread (one load at a time).
   */
  private final class Load {
    private final TalosProducer producer;
    private final AckLedger ledger;
    private final long[] nextSeq;
    private final double perSecond;
    private final AtomicLong acked;
    private final Recorder latency;
    private final AtomicLong failed;
    private final AtomicReference<String> firstFailure;
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicBoolean done = new AtomicBoolean();

    Load(TalosProducer producer, AckLedger ledger, long[] nextSeq, double perSecond, AtomicLong acked,
        Recorder latency, AtomicLong failed, AtomicReference<String> firstFailure) {
      this.producer = producer;
      this.ledger = ledger;
      this.nextSeq = nextSeq;
      this.perSecond = perSecond;
      this.acked = acked;
      this.latency = latency;
      this.failed = failed;
      this.firstFailure = firstFailure;
    }

    void start(long forMs) {
      long startNanos = System.nanoTime();
      long end = startNanos + forMs * 1_000_000;
      double perThreadPerNano = perSecond / o.partitions() / 1e9;
      for (int p = 0; p < o.partitions(); p++) {
        int partition = p;
        Thread t = new Thread(() -> {
          long sent = 0;
          long now;
          while ((now = System.nanoTime()) < end) {
            long due = perSecond == 0 ? sent + 1000 : (long) ((now - startNanos) * perThreadPerNano);
            for (; sent < due; sent++) send(partition);
            if (perSecond > 0) {
              long nextDueNanos = startNanos + (long) ((sent + 1) / perThreadPerNano);
              try {
                Thread.sleep(Math.max(1, (nextDueNanos - System.nanoTime()) / 1_000_000));
              } catch (InterruptedException e) {
                return;
              }
            }
          }
        }, "soak-producer-" + p);
        threads.add(t);
        t.start();
      }
      Thread watcher = new Thread(() -> {
        try {
          for (Thread t : threads) t.join();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        done.set(true);
      }, "soak-load");
      watcher.setDaemon(true);
      watcher.start();
    }

    private void send(int partition) {
      long seq = nextSeq[partition]++; // never sent again, acknowledged or not
      long sentNanos = System.nanoTime();
      try {
        producer.send(new ProducerRecord(null, AckLedger.payload(partition, seq), partition, null, ProducerRecord.NOW),
          (m, e) -> {
            if (e == null) {
              latency.recordValue((System.nanoTime() - sentNanos) / 1000);
              ledger.ack(partition, m.offset(), seq);
              acked.incrementAndGet();
            } else {
              failed.incrementAndGet();
              firstFailure.compareAndSet(null, e.toString());
            }
          });
      } catch (RuntimeException e) { // buffer full for max.block.ms: counted, the load goes on
        failed.incrementAndGet();
        firstFailure.compareAndSet(null, e.toString());
      }
    }

    boolean done() {
      return done.get();
    }

    void join() throws InterruptedException {
      for (Thread t : threads) t.join();
    }
  }

  static long rssKb(long pid) throws IOException {
    return statusField(pid, "VmRSS:");
  }

  static long threads(long pid) throws IOException {
    return statusField(pid, "Threads:");
  }

  static long fds(long pid) throws IOException {
    try (Stream<Path> s = Files.list(Path.of("/proc", String.valueOf(pid), "fd"))) {
      return s.count();
    }
  }

  private static long statusField(long pid, String field) throws IOException {
    for (String l : Files.readAllLines(Path.of("/proc", String.valueOf(pid), "status"))) {
      if (l.startsWith(field)) return Long.parseLong(l.substring(field.length()).trim().split("\\s+")[0]);
    }
    throw new IOException(field + " not in /proc/" + pid + "/status");
  }
}
