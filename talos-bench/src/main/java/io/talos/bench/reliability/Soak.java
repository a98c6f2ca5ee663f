package io.talos.bench.reliability;

import io.talos.client.TalosClient;
import io.talos.client.producer.PutResult;
import io.talos.client.producer.SimpleProducer;
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
import java.util.stream.Stream;
import org.HdrHistogram.Recorder;
import org.HdrHistogram.Histogram;

/**
 * Scenario 6, soak: the maximum put throughput of a real server process is measured first
 * (producers as fast as they can, {@code probeSeconds}), then producers hold half of it for
 * {@code seconds}; every {@code sampleSeconds} the server's resident memory, open file
 * descriptors and threads (from /proc) and the put latency p99 are sampled. After the warm-up
 * (the first quarter), RSS must stay within ±10% of its first value, and descriptors and threads
 * flat. Every acknowledged message is read back at the end.
 *
 * <p>The server runs with {@code -Xms} equal to {@code -Xmx} and its heap pre-touched, so RSS
 * growth is growth outside the heap (direct buffers, thread stacks, metaspace): a leak.
 */
final class Soak {
  static final String TOPIC = "soak";
  /** Fixed heap, pre-touched: RSS then moves only with memory outside the heap. */
  static final String DEFAULT_JVM = "-Xms256m -Xmx256m -XX:+AlwaysPreTouch";

  record Options(int seconds, int probeSeconds, int sampleSeconds, int partitions, int batch, String serverJvm) {}

  /** One sample. */
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
    try (ServerProcess server = new ServerProcess(work.resolve("data"), props, o.serverJvm())) {
      server.start(120_000);
      try (TalosClient client = server.client(30_000)) {
        client.admin().createTopic(TOPIC, o.partitions());
        AtomicLong produced = new AtomicLong();
        Recorder latency = new Recorder(3);
        long probeStart = System.nanoTime();
        runProducers(client, ledger, nextSeq, 0, o.probeSeconds() * 1000L, produced, latency);
        double max = produced.get() / ((System.nanoTime() - probeStart) / 1e9);
        double target = max / 2;
        progress.note(String.format("soak: maximum %.0f msg/s, holding %.0f msg/s for %d s", max, target, o.seconds()));

        List<Sample> samples = new ArrayList<>();
        AtomicBoolean done = new AtomicBoolean();
        AtomicLong soaked = new AtomicLong();
        Recorder soakLatency = new Recorder(3);
        Thread load = new Thread(() -> {
          try {
            runProducers(client, ledger, nextSeq, target, o.seconds() * 1000L, soaked, soakLatency);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          } finally {
            done.set(true);
          }
        }, "soak-load");
        long start = System.currentTimeMillis();
        load.start();
        Histogram interval = null;
        while (!done.get()) {
          Thread.sleep(o.sampleSeconds() * 1000L);
          interval = soakLatency.getIntervalHistogram(interval);
          Sample s = new Sample((System.currentTimeMillis() - start) / 1000, rssKb(server.pid()), fds(server.pid()),
              threads(server.pid()), interval.getTotalCount() == 0 ? 0 : interval.getValueAtPercentile(99) / 1000.0,
              soaked.get());
          samples.add(s);
          progress.note("soak: " + s);
        }
        load.join();
        AckLedger.Check total = AckLedger.Check.ZERO;
        for (int p = 0; p < o.partitions(); p++) {
          total = total.plus(ledger.verify(p, CrashCycles.readAll(client.consumer(TOPIC, p), p), new HashSet<>()));
        }
        List<Sample> after = samples.subList(Math.min(samples.size() - 1, samples.size() / 4), samples.size());
        Sample first = after.get(0);
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
        Tally tally = new Tally("6 soak", String.format("local, flush, %d partitions, %.0f msg/s (50%% of %.0f), %d s",
            o.partitions(), target, max, o.seconds()), 1, ledger.acknowledged(), total.readBack(),
            total.lost() + ledger.reusedOffsets(), total.duplicated(), total.reordered(), total.refused(),
            String.format("after warm-up: RSS %d -> %d KiB (largest drift %+.1f%%), fds %d -> %d (max drift %d),"
                + " threads %d -> %d (max drift %d), put p99 per %d s %.1f-%.1f ms", first.rssKb(),
                samples.get(samples.size() - 1).rssKb(), rssDrift, first.fds(), samples.get(samples.size() - 1).fds(),
                fdDrift, first.threads(), samples.get(samples.size() - 1).threads(), threadDrift, o.sampleSeconds(),
                p99Min, p99Max));
        return new Result(tally, max, target, samples, rssDrift, fdDrift, threadDrift);
      }
    }
  }

  /**
   * One producer thread per partition, batches of {@code o.batch} 16-byte messages; at
   * {@code perSecond} in total (paced by due times), or as fast as possible when 0.
   */
  private void runProducers(TalosClient client, AckLedger ledger, long[] nextSeq, double perSecond, long forMs,
      AtomicLong produced, Recorder latency) throws InterruptedException {
    List<Thread> threads = new ArrayList<>();
    long end = System.nanoTime() + forMs * 1_000_000;
    for (int p = 0; p < o.partitions(); p++) {
      int partition = p;
      SimpleProducer producer = client.producer(TOPIC, partition);
      Thread t = new Thread(() -> {
        double batchesPerSecond = perSecond / o.batch() / o.partitions();
        long gapNanos = perSecond == 0 ? 0 : (long) (1e9 / batchesPerSecond);
        long due = System.nanoTime();
        while (System.nanoTime() < end) {
          if (gapNanos > 0) {
            long wait = due - System.nanoTime();
            if (wait > 0) {
              try {
                Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
              } catch (InterruptedException e) {
                return;
              }
            }
            due += gapNanos;
          }
          long first = nextSeq[partition];
          nextSeq[partition] += o.batch();
          List<byte[]> batch = new ArrayList<>(o.batch());
          for (int i = 0; i < o.batch(); i++) batch.add(AckLedger.payload(partition, first + i));
          long sent = System.nanoTime();
          PutResult r = producer.put(batch);
          latency.recordValue((System.nanoTime() - sent) / 1000);
          long offset = r.firstOffset().orElseThrow();
          for (int i = 0; i < o.batch(); i++) ledger.ack(partition, offset + i, first + i);
          produced.addAndGet(o.batch());
        }
      }, "soak-producer-" + p);
      threads.add(t);
      t.start();
    }
    for (Thread t : threads) t.join();
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
