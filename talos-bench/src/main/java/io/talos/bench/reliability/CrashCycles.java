package io.talos.bench.reliability;

import io.talos.client.TalosClient;
import io.talos.client.consumer.ConsumedMessage;
import io.talos.client.consumer.SimpleConsumer;
import io.talos.client.producer.PutResult;
import io.talos.client.producer.SimpleProducer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Scenario 1, crash cycles: one producer thread per partition writes numbered messages and records
 * every acknowledged offset; the server process is SIGKILLed at a random moment and started again
 * on the same data, {@code cycles} times; at the end every partition is read from its start and
 * every acknowledged message must be at its offset, once, in order.
 *
 * <p>Storage: the local file system at {@code sync} or {@code flush} (a process crash loses
 * neither), or hdfs (a MiniDFSCluster in this JVM; the server in its own process holds the
 * leases, which the next start recovers).
 */
final class CrashCycles {
  static final String TOPIC = "crash";

  /** What to run. */
  record Options(String storage, String durability, int cycles, int partitions, long minRunMs, long maxRunMs,
      long seed, String serverJvm) {}

  private final Options o;
  private final Path work;
  private final Progress progress;

  CrashCycles(Options o, Path work, Progress progress) {
    this.o = o;
    this.work = work;
    this.progress = progress;
  }

  Tally run() throws Exception {
    Random random = new Random(o.seed());
    AckLedger ledger = new AckLedger();
    Map<String, String> props = new LinkedHashMap<>();
    props.put("storage.durability", o.durability());
    props.put("storage.lease.recovery.timeout.ms", "30000");
    HdfsCluster hdfs = null;
    if (o.storage().equals("hdfs")) {
      hdfs = HdfsCluster.start(work.resolve("minidfs"), 1, 1);
      props.putAll(hdfs.serverProps("/talos", 1));
    } else if (!o.storage().equals("local")) {
      throw new IllegalArgumentException("storage must be local or hdfs, got " + o.storage());
    }
    long[] nextSeq = new long[o.partitions()];
    long failedPuts = 0;
    long startMs = System.currentTimeMillis();
    try (ServerProcess server = new ServerProcess(work.resolve("data"), props, o.serverJvm())) {
      server.start(120_000);
      try (TalosClient client = server.client(10_000)) {
        client.admin().createTopic(TOPIC, o.partitions());
      }
      for (int cycle = 1; cycle <= o.cycles(); cycle++) {
        if (cycle > 1) server.start(120_000);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong failures = new AtomicLong();
        List<Thread> producers = new ArrayList<>();
        try (TalosClient client = server.client(10_000)) {
          for (int p = 0; p < o.partitions(); p++) {
            int partition = p;
            SimpleProducer producer = client.producer(TOPIC, partition);
            long seed = random.nextLong();
            Thread t = new Thread(() -> produce(producer, partition, nextSeq, ledger, stop, failures, new Random(seed)),
                "producer-" + p);
            producers.add(t);
            t.start();
          }
          long runMs = o.minRunMs() + (long) (random.nextDouble() * (o.maxRunMs() - o.minRunMs()));
          Thread.sleep(runMs);
          server.kill();
          stop.set(true);
          for (Thread t : producers) t.join(60_000);
        }
        failedPuts += failures.get();
        progress.note("cycle " + cycle + "/" + o.cycles() + ": " + ledger.acknowledged() + " acknowledged so far");
      }
      server.start(120_000);
      AckLedger.Check total = AckLedger.Check.ZERO;
      try (TalosClient client = server.client(30_000)) {
        for (int p = 0; p < o.partitions(); p++) {
          total = total.plus(ledger.verify(p, readAll(client.consumer(TOPIC, p), p), new HashSet<>()));
        }
      }
      long dataLoss = server.countLogLines("DATA LOSS");
      server.stop();
      long seconds = (System.currentTimeMillis() - startMs) / 1000;
      return new Tally("1 crash cycles", o.storage() + ", " + o.durability() + ", Talos SDK, " + o.partitions()
          + " partitions", o.cycles(), ledger.acknowledged(), total.readBack(), total.lost() + ledger.reusedOffsets(),
          total.duplicated(), total.reordered(), total.refused(), "SIGKILL after " + o.minRunMs() + "-" + o.maxRunMs()
          + " ms of produce per cycle; " + failedPuts + " puts failed (not acknowledged); offsets handed out twice: "
          + ledger.reusedOffsets() + "; DATA LOSS log lines: " + dataLoss + "; " + seconds + " s");
    } finally {
      if (hdfs != null) hdfs.close();
    }
  }

  /** Puts batches of 1-20 numbered messages until stopped or the server is gone. */
  private static void produce(SimpleProducer producer, int partition, long[] nextSeq, AckLedger ledger,
      AtomicBoolean stop, AtomicLong failures, Random random) {
    while (!stop.get()) {
      int n = 1 + random.nextInt(20);
      long first;
      synchronized (nextSeq) {
        first = nextSeq[partition];
        nextSeq[partition] += n; // never reused, acknowledged or not
      }
      List<byte[]> batch = new ArrayList<>(n);
      for (int i = 0; i < n; i++) batch.add(AckLedger.payload(partition, first + i));
      PutResult r;
      try {
        r = producer.put(batch);
      } catch (RuntimeException e) {
        failures.incrementAndGet();
        return; // the server was killed (or refused): this cycle's producing ends
      }
      long offset = r.firstOffset().orElseThrow(() -> new IllegalStateException("no offset in the answer"));
      for (int i = 0; i < n; i++) ledger.ack(partition, offset + i, first + i);
    }
  }

  /** Every message of a partition from its start, in the order served. */
  static List<AckLedger.Read> readAll(SimpleConsumer consumer, int partition) {
    List<AckLedger.Read> reads = new ArrayList<>();
    long next = 0;
    while (true) {
      List<ConsumedMessage> got = consumer.fetch(next, 1000);
      if (got.isEmpty()) return reads;
      for (ConsumedMessage m : got) reads.add(new AckLedger.Read(m.offset(), AckLedger.seqOf(m.payload(), partition)));
      next = got.get(got.size() - 1).offset() + 1;
    }
  }
}
