package io.talos.bench.reliability;

import io.talos.client.TalosClient;
import io.talos.client.consumer.ConsumedMessage;
import io.talos.client.consumer.SimpleConsumer;
import io.talos.client.producer.ProducerConfig;
import io.talos.client.producer.ProducerRecord;
import io.talos.client.producer.PutResult;
import io.talos.client.producer.SimpleProducer;
import io.talos.client.producer.TalosProducer;
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
 * <p>Producers ({@link Options#producer()}): {@code simple}, our SimpleProducer, one put at a
 * time, stops at the kill and starts again with the next cycle; {@code sdk}, the same with the
 * official Talos SDK 2.0.2's SimpleProducer (its answer has no offset, so acknowledged messages
 * are checked by payload: read once, in order); {@code talos}, one asynchronous idempotent
 * TalosProducer for the whole run that keeps sending through every kill (the server restarts on
 * the same port) and retries what was not answered: then no payload may be stored twice, not
 * even an unacknowledged one.
 *
 * <p>Storage: the local file system at {@code sync} or {@code flush} (a process crash loses
 * neither), or hdfs (a MiniDFSCluster in this JVM; the server in its own process holds the
 * leases, which the next start recovers).
 */
final class CrashCycles {
  static final String TOPIC = "crash";

  /** Producers: our SimpleProducer, our async idempotent TalosProducer, the official SDK 2.0.2's SimpleProducer. */
  static final List<String> PRODUCERS = List.of("simple", "talos", "sdk");

  /** What to run. */
  /**
   * How long a restarted server may take to answer. Recovery itself takes well under a second
   * here; the bound is generous because a machine shared with other work can starve the new JVM
   * for minutes, and a slow start says nothing about lost messages (a server that exits is still
   * reported at once).
   */
  private static final long START_TIMEOUT_MS = 600_000;

  record Options(String storage, String durability, int cycles, int partitions, long minRunMs, long maxRunMs,
      long seed, String serverJvm, String producer) {
    Options(String storage, String durability, int cycles, int partitions, long minRunMs, long maxRunMs, long seed,
        String serverJvm) {
      this(storage, durability, cycles, partitions, minRunMs, maxRunMs, seed, serverJvm, "simple");
    }

    Options {
      if (!PRODUCERS.contains(producer)) {
        throw new IllegalArgumentException("producer must be one of " + PRODUCERS + ", got " + producer);
      }
    }
  }

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
      if (o.producer().equals("talos")) return runAsync(server, random, ledger, startMs);
      server.start(START_TIMEOUT_MS);
      try (TalosClient client = server.client(10_000)) {
        client.admin().createTopic(TOPIC, o.partitions());
      }
      for (int cycle = 1; cycle <= o.cycles(); cycle++) {
        if (cycle > 1) server.start(START_TIMEOUT_MS);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong failures = new AtomicLong();
        List<Thread> producers = new ArrayList<>();
        try (TalosClient client = server.client(10_000)) {
          for (int p = 0; p < o.partitions(); p++) {
            int partition = p;
            PartitionWriter producer = untilAnswered(() -> o.producer().equals("sdk")
                ? OfficialSdkWriter.create(server, TOPIC, partition) : simpleWriter(client.producer(TOPIC, partition)));
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
      server.start(START_TIMEOUT_MS);
      AckLedger.Check total = AckLedger.Check.ZERO;
      try (TalosClient client = server.client(30_000)) {
        for (int p = 0; p < o.partitions(); p++) {
          ReadBack reads = readAll(client.consumer(TOPIC, p), p);
          total = total.plus(o.producer().equals("sdk") ? ledger.verifyBySeq(p, reads)
              : ledger.verify(p, reads, new HashSet<>()));
        }
      }
      long dataLoss = server.countLogLines("DATA LOSS");
      server.stop();
      long seconds = (System.currentTimeMillis() - startMs) / 1000;
      String who = o.producer().equals("sdk") ? "official SDK 2.0.2 SimpleProducer" : "Talos SDK";
      return new Tally("1 crash cycles", o.storage() + ", " + o.durability() + ", " + who + ", " + o.partitions()
          + " partitions", o.cycles(), ledger.acknowledged(), total.readBack(), total.lost() + ledger.reusedOffsets(),
          total.duplicated(), total.reordered(), total.refused(), "SIGKILL after " + o.minRunMs() + "-" + o.maxRunMs()
          + " ms of produce per cycle; " + failedPuts + " puts failed (not acknowledged); offsets handed out twice: "
          + ledger.reusedOffsets() + "; DATA LOSS log lines: " + dataLoss + "; " + seconds + " s");
    } finally {
      if (hdfs != null) hdfs.close();
    }
  }

  /** One partition's synchronous producer: puts a batch, returns its first offset, or -1 if the answer has none. */
  interface PartitionWriter {
    long put(List<byte[]> batch) throws Exception;
  }

  private static PartitionWriter simpleWriter(SimpleProducer producer) {
    return batch -> {
      PutResult r = producer.put(batch);
      return r.firstOffset().orElseThrow(() -> new IllegalStateException("no offset in the answer"));
    };
  }

  /**
   * The {@code talos} variant: one idempotent TalosProducer for the whole run, sending through the
   * kills; at the end it is flushed, so every record is acknowledged or failed for good.
   */
  private Tally runAsync(ServerProcess server, Random random, AckLedger ledger, long startMs) throws Exception {
    server.fixPort();
    server.start(START_TIMEOUT_MS);
    try (TalosClient admin = server.client(10_000)) {
      admin.admin().createTopic(TOPIC, o.partitions());
    }
    AtomicLong failed = new AtomicLong();
    // Why records failed for good (delivery timeout, a non-retriable error...): the first one is reported.
    java.util.concurrent.atomic.AtomicReference<String> firstFailure = new java.util.concurrent.atomic.AtomicReference<>();
    AtomicLong sent = new AtomicLong();
    long[] nextSeq = new long[o.partitions()];
    AtomicBoolean stop = new AtomicBoolean();
    List<Thread> threads = new ArrayList<>();
    ProducerConfig config = ProducerConfig.builder().enableIdempotence(true).lingerMs(5).batchMaxRecords(20)
        .retryBackoffMs(50).retryBackoffMaxMs(500).deliveryTimeoutMs(600_000).maxBlockMs(600_000).build();
    try (TalosClient client = server.client(5_000); TalosProducer producer = client.producer(TOPIC, config)) {
      for (int p = 0; p < o.partitions(); p++) {
        int partition = p;
        Random r = new Random(random.nextLong());
        Thread t = new Thread(() -> {
          while (!stop.get()) {
            int n = 1 + r.nextInt(20);
            for (int i = 0; i < n; i++) {
              long seq = nextSeq[partition]++; // this thread's partition only
              sent.incrementAndGet();
              producer.send(new ProducerRecord(null, AckLedger.payload(partition, seq), partition, null,
                  ProducerRecord.NOW), (m, e) -> {
                    if (e == null) {
                      ledger.ack(partition, m.offset(), seq);
                    } else {
                      failed.incrementAndGet();
                      firstFailure.compareAndSet(null, e.toString());
                    }
                  });
            }
            try {
              Thread.sleep(2);
            } catch (InterruptedException e) {
              return;
            }
          }
        }, "producer-" + p);
        threads.add(t);
        t.start();
      }
      for (int cycle = 1; cycle <= o.cycles(); cycle++) {
        Thread.sleep(o.minRunMs() + (long) (random.nextDouble() * (o.maxRunMs() - o.minRunMs())));
        server.kill();
        Thread.sleep(random.nextInt(300));
        server.start(START_TIMEOUT_MS);
        progress.note("cycle " + cycle + "/" + o.cycles() + ": " + ledger.acknowledged() + " acknowledged so far");
      }
      Thread.sleep(o.minRunMs());
      stop.set(true);
      for (Thread t : threads) t.join(60_000);
      producer.flush();
    }
    AckLedger.Check total = AckLedger.Check.ZERO;
    long storedTwice = 0;
    try (TalosClient client = server.client(30_000)) {
      for (int p = 0; p < o.partitions(); p++) {
        ReadBack reads = readAll(client.consumer(TOPIC, p), p);
        total = total.plus(ledger.verify(p, reads, new HashSet<>()));
        storedTwice += AckLedger.storedTwice(reads);
      }
    }
    long dataLoss = server.countLogLines("DATA LOSS");
    server.stop();
    long seconds = (System.currentTimeMillis() - startMs) / 1000;
    return new Tally("1 crash cycles", o.storage() + ", " + o.durability() + ", Talos SDK async TalosProducer,"
        + " idempotent, retrying through the kills, " + o.partitions() + " partitions", o.cycles(),
        ledger.acknowledged(), total.readBack(), total.lost() + ledger.reusedOffsets(),
        Math.max(total.duplicated(), storedTwice), total.reordered(), total.refused(), "SIGKILL after "
        + o.minRunMs() + "-" + o.maxRunMs() + " ms of produce per cycle; " + sent.get() + " records sent, "
        + failed.get() + " failed for good" + (firstFailure.get() == null ? "" : " (first: " + firstFailure.get() + ")")
        + "; payloads stored twice (acknowledged or not): " + storedTwice
        + "; offsets handed out twice: " + ledger.reusedOffsets() + "; DATA LOSS log lines: " + dataLoss + "; "
        + seconds + " s");
  }

  /** Puts batches of 1-20 numbered messages until stopped or the server is gone. */
  private static void produce(PartitionWriter producer, int partition, long[] nextSeq, AckLedger ledger,
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
      long offset;
      try {
        offset = producer.put(batch);
      } catch (Exception e) {
        failures.incrementAndGet();
        return; // the server was killed (or refused): this cycle's producing ends
      }
      for (int i = 0; i < n; i++) {
        if (offset < 0) {
          ledger.ackSeq(partition, first + i);
        } else {
          ledger.ack(partition, offset + i, first + i);
        }
      }
    }
  }

  /** Every message of a partition from its start, in the order served. */
  static ReadBack readAll(SimpleConsumer consumer, int partition) {
    ReadBack reads = new ReadBack();
    long next = 0;
    while (true) {
      List<ConsumedMessage> got = consumer.fetch(next, 1000);
      if (got.isEmpty()) return reads;
      for (ConsumedMessage m : got) reads.add(m.offset(), AckLedger.seqOf(m.payload(), partition));
      next = got.get(got.size() - 1).offset() + 1;
    }
  }

  /**
   * Makes a producer, asking again while the just-restarted server does not answer in time: on a
   * machine shared with other work the first describeTopic after a restart can take longer than
   * the client's request timeout, which says nothing about lost messages and must not end the run.
   * Gives up after two minutes.
   */
  private static PartitionWriter untilAnswered(java.util.concurrent.Callable<PartitionWriter> make) throws Exception {
    long deadline = System.nanoTime() + 120_000_000_000L;
    while (true) {
      try {
        return make.call();
      } catch (Exception e) {
        boolean retriable = e instanceof io.talos.client.TalosException te ? te.isRetriable()
            : e.getCause() instanceof java.net.SocketTimeoutException || String.valueOf(e).contains("timed out");
        if (!retriable || System.nanoTime() > deadline) throw e;
        Thread.sleep(500);
      }
    }
  }
}
