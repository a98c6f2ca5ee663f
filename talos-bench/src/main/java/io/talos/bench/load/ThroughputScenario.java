package io.talos.bench.load;

import io.talos.client.TalosClient;
import io.talos.client.consumer.ConsumedMessage;
import io.talos.client.consumer.SimpleConsumer;
import io.talos.client.producer.SimpleProducer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Scenario 3 (and its Kafka half, scenario 5): the most records per second a producer gets
 * acknowledged with batching, then reading everything back. Talos: one synchronous producer
 * thread per partition, each put one batch of {@code batchBytes}; Kafka: one KafkaProducer
 * (acks=all, linger.ms=5, batch.size=batchBytes), records spread round-robin over the partitions,
 * as its ProducerPerformance does. Read-back: Talos one thread per partition fetching up to 10,000
 * messages per request; Kafka one KafkaConsumer assigned every partition.
 */
final class ThroughputScenario {
  record Figures(double produceRecords, double produceBytes, double readRecords, double readBytes, long produced) {}

  private ThroughputScenario() {}

  /** @param rounds how many times each system is measured (fresh servers each time, order alternating) */
  static void run(BenchContext ctx, List<Integer> sizes, int partitions, int batchBytes, double warmupSeconds,
      double seconds, int rounds) throws Exception {
    ctx.report.heading("Scenario 3" + (ctx.kafka ? " and 5" : "") + ": maximum producer throughput with batching, then read-back");
    ctx.report.text(String.format(Locale.ROOT, "%d partitions; %s s of producing (after %s s warm-up, not counted),"
        + " then every record read back from the start. Batches of %d bytes: Talos, one synchronous producer"
        + " thread per partition putting %d-byte batches; Kafka, one KafkaProducer, acks=all, linger.ms=5,"
        + " batch.size=%d, no compression, records round-robin over partitions. Read-back: Talos a thread per"
        + " partition (fetch up to 10,000 messages / 2 MiB), Kafka one KafkaConsumer (max.poll.records=10000)."
        + " Durability on both: %s.", partitions, SyncScenario.fmt(seconds), SyncScenario.fmt(warmupSeconds),
        batchBytes, batchBytes, batchBytes, LatencyScenario.durabilityText(ctx)));
    if (rounds > 1) ctx.report.text(Rounds.describe(rounds));
    // rounds x sizes
    List<List<Figures>> talos = new ArrayList<>();
    List<List<Figures>> kafka = new ArrayList<>();
    for (int round = 1; round <= rounds; round++) {
      boolean kafkaFirst = Rounds.kafkaFirst(ctx, round);
      if (kafkaFirst) kafka.add(kafkaRound(ctx, sizes, partitions, batchBytes, warmupSeconds, seconds, round == 1));
      talos.add(talosRound(ctx, sizes, partitions, batchBytes, warmupSeconds, seconds, round == 1));
      if (ctx.kafka && !kafkaFirst) kafka.add(kafkaRound(ctx, sizes, partitions, batchBytes, warmupSeconds, seconds, round == 1));
    }
    Table t = ctx.kafka
        ? new Table("Scenario 3 vs 5: throughput", "figure", "Talos", "Kafka 4.3.1", "Talos/Kafka")
        : new Table("Scenario 3: throughput", "figure", "Talos");
    for (int i = 0; i < sizes.size(); i++) {
      int size = sizes.get(i);
      row(t, size + " B produce, records/s", talos, kafka, i, Figures::produceRecords, true);
      row(t, size + " B produce, MB/s", talos, kafka, i, Figures::produceBytes, false);
      row(t, size + " B read-back, records/s", talos, kafka, i, Figures::readRecords, true);
      row(t, size + " B read-back, MB/s", talos, kafka, i, Figures::readBytes, false);
    }
    ctx.report.table(t);
  }

  private static List<Figures> talosRound(BenchContext ctx, List<Integer> sizes, int partitions, int batchBytes,
      double warmupSeconds, double seconds, boolean reportMemory) throws Exception {
    List<Figures> figures = new ArrayList<>();
    try (TalosNode node = ctx.startTalos(); TalosClient client = node.client()) {
      SyncScenario.warmUp(ctx, client, BenchContext.payload(100));
      node.resetMemoryPeaks();
      for (int size : sizes) figures.add(talos(ctx, node, client, size, partitions, batchBytes, warmupSeconds, seconds));
      if (reportMemory) ctx.report.memory("3 throughput", "Talos", node.memory());
    }
    return figures;
  }

  private static List<Figures> kafkaRound(BenchContext ctx, List<Integer> sizes, int partitions, int batchBytes,
      double warmupSeconds, double seconds, boolean reportMemory) throws Exception {
    List<Figures> figures = new ArrayList<>();
    try (KafkaNode node = ctx.startKafka()) {
      node.process().memory().resetPeaks();
      for (int size : sizes) figures.add(kafka(ctx, node, size, partitions, batchBytes, warmupSeconds, seconds));
      if (reportMemory) ctx.report.memory("5 (3 on Kafka)", "Kafka", node.process().memory().snapshot());
    }
    return figures;
  }

  /** One figure: the median over rounds of each system, and the median (min-max) of the rounds' ratios. */
  private static void row(Table t, String name, List<List<Figures>> talos, List<List<Figures>> kafka, int sizeIndex,
      java.util.function.ToDoubleFunction<Figures> figure, boolean count) {
    Rounds.row(t, name, Rounds.figures(talos, sizeIndex, figure), Rounds.figures(kafka, sizeIndex, figure), count);
  }

  private static Figures talos(BenchContext ctx, TalosNode node, TalosClient client, int size, int partitions,
      int batchBytes, double warmupSeconds, double seconds) throws Exception {
    String topic = "s3-" + size + "b-p" + partitions;
    client.admin().createTopic(topic, partitions);
    byte[] payload = BenchContext.payload(size);
    List<byte[]> batch = Collections.nCopies(Math.max(1, batchBytes / size), payload);
    List<ClosedLoop.Step> puts = new ArrayList<>();
    for (int p = 0; p < partitions; p++) {
      SimpleProducer producer = client.producer(topic, p);
      puts.add(() -> producer.put(batch).messageCount());
    }
    ClosedLoop.GroupResult r;
    try (AutoCloseable profile = ctx.profile(node, "s3-produce-" + size + "b", warmupSeconds, seconds)) {
      r = ClosedLoop.run("s3 talos produce " + size + " B", ctx.progress, warmupSeconds, seconds,
          java.util.Map.of("put", puts), true).get("put");
    }
    SyncScenario.reportErrors(ctx, "s3 talos " + size + " B", r);
    // read everything back, a thread per partition
    long[] ends = new long[partitions];
    for (var o : client.admin().getTopicOffsets(topic)) ends[o.partitionId()] = o.nextOffset();
    long total = 0;
    for (long e : ends) total += e;
    LongAdder read = new LongAdder();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<Thread> readers = new ArrayList<>();
    for (int p = 0; p < partitions; p++) {
      SimpleConsumer consumer = client.consumer(topic, p);
      long end = ends[p];
      Thread t = new Thread(() -> {
        long next = 0;
        try {
          while (next < end) {
            List<ConsumedMessage> got = consumer.fetch(next, 10_000);
            if (got.isEmpty()) break;
            next = got.get(got.size() - 1).offset() + 1;
            read.add(got.size());
          }
        } catch (RuntimeException e) {
          failure.compareAndSet(null, e);
        }
      }, "s3-reader-" + p);
      readers.add(t);
    }
    final long totalF = total;
    ctx.progress.start("s3 talos read-back " + size + " B", 0, () -> String.format(Locale.ROOT, "%,d / %,d records",
        read.sum(), totalF));
    double readSeconds;
    try (AutoCloseable profile = ctx.profileCpu(node, "s3-read-back-" + size + "b")) {
      long t0 = System.nanoTime();
      readers.forEach(Thread::start);
      for (Thread t : readers) t.join();
      readSeconds = (System.nanoTime() - t0) / 1e9;
    }
    ctx.progress.stop();
    if (failure.get() != null) ctx.report.text("_s3 talos read-back failed: " + failure.get() + "_");
    client.admin().deleteTopic(topic);
    Figures f = new Figures(r.messagesPerSecond(), r.messagesPerSecond() * size, read.sum() / readSeconds,
        read.sum() * (double) size / readSeconds, total);
    ctx.progress.note(String.format(Locale.ROOT, "s3 talos %d B: produce %,.0f rec/s, read-back %,.0f rec/s", size,
        f.produceRecords, f.readRecords));
    return f;
  }

  private static Figures kafka(BenchContext ctx, KafkaNode node, int size, int partitions, int batchBytes,
      double warmupSeconds, double seconds) throws Exception {
    String topic = "s3-" + size + "b-p" + partitions;
    node.createTopic(topic, partitions);
    byte[] payload = BenchContext.payload(size);
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, node.bootstrap());
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    p.put(ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(batchBytes));
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "none");
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    AtomicLong acked = new AtomicLong();
    AtomicLong failed = new AtomicLong();
    AtomicReference<Exception> firstFailure = new AtomicReference<>();
    long start = System.nanoTime();
    long measureStart = start + (long) (warmupSeconds * 1e9);
    long end = measureStart + (long) (seconds * 1e9);
    long ackedAtStart = 0;
    long ackedAtEnd;
    double measured;
    long sent = 0;
    ctx.progress.start("s5 kafka produce " + size + " B", warmupSeconds + seconds, () -> String.format(Locale.ROOT,
        "%,d acked", acked.get()));
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
      // one acknowledged record per partition first: leaders known, metadata fresh (a new topic's
      // partitions can answer NOT_LEADER_OR_FOLLOWER for a moment, and a stuck partition's batches
      // would fill the producer's buffer and stall every partition)
      for (int i = 0; i < partitions; i++) {
        producer.send(new ProducerRecord<>(topic, i, null, payload)).get(60, java.util.concurrent.TimeUnit.SECONDS);
        sent++;
      }
      acked.set(0);
      boolean measuring = false;
      long now;
      while ((now = System.nanoTime()) < end) {
        if (!measuring && now >= measureStart) {
          measuring = true;
          ackedAtStart = acked.get();
        }
        for (int i = 0; i < 64; i++) {
          producer.send(new ProducerRecord<>(topic, (int) (sent++ % partitions), null, payload), (md, e) -> {
            if (e == null) {
              acked.incrementAndGet();
            } else {
              failed.incrementAndGet();
              firstFailure.compareAndSet(null, e);
            }
          });
        }
      }
      ackedAtEnd = acked.get();
      measured = (System.nanoTime() - measureStart) / 1e9;
      producer.flush();
    }
    ctx.progress.stop();
    if (failed.get() > 0) ctx.report.text("_s5 kafka produce: " + failed.get() + " failed sends, first: " + firstFailure.get() + "_");
    double produceRate = (ackedAtEnd - ackedAtStart) / measured;
    long total = acked.get() + partitions;
    // read-back
    Properties c = new Properties();
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, node.bootstrap());
    c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    c.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "10000");
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    LongAdder read = new LongAdder();
    ctx.progress.start("s5 kafka read-back " + size + " B", 0, () -> String.format(Locale.ROOT, "%,d / %,d records",
        read.sum(), total));
    long t0 = System.nanoTime();
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c)) {
      List<TopicPartition> tps = new ArrayList<>();
      for (int i = 0; i < partitions; i++) tps.add(new TopicPartition(topic, i));
      consumer.assign(tps);
      consumer.seekToBeginning(tps);
      long idleSince = System.nanoTime();
      while (read.sum() < total) {
        ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
        if (records.isEmpty()) {
          if (System.nanoTime() - idleSince > 30e9) break;
        } else {
          idleSince = System.nanoTime();
          read.add(records.count());
        }
      }
    }
    double readSeconds = (System.nanoTime() - t0) / 1e9;
    ctx.progress.stop();
    Figures f = new Figures(produceRate, produceRate * size, read.sum() / readSeconds, read.sum() * (double) size / readSeconds,
        total);
    ctx.progress.note(String.format(Locale.ROOT, "s5 kafka %d B: produce %,.0f rec/s, read-back %,.0f rec/s", size,
        f.produceRecords, f.readRecords));
    return f;
  }
}
