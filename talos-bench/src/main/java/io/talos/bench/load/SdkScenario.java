package io.talos.bench.load;

import io.talos.client.TalosClient;
import io.talos.client.consumer.ConsumerRecord;
import io.talos.client.consumer.TalosConsumer;
import io.talos.client.producer.ProducerRecord;
import io.talos.client.producer.TalosProducer;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The high-level clients against each other: Talos's {@link TalosProducer} and group
 * {@link TalosConsumer} versus Kafka's {@code KafkaProducer} and group {@code KafkaConsumer}, in
 * one run, each server alone on the machine. Async produce runs in rounds (one by default), each on
 * fresh servers with the order alternating (see {@link Rounds}); catch-up and latency then run once
 * more on fresh servers, Talos first.
 *
 * <ol>
 *   <li>Async produce: ONE producer, one thread calling send as fast as the producer accepts
 *       (it blocks when its buffer is full), keyless records over {@code partitions} partitions
 *       with each client's default (sticky) partitioner; records acknowledged per second in the
 *       measurement window. Same batching on both: {@code batchBytes} per partition batch
 *       (Talos batch.max.bytes, Kafka batch.size), linger.ms=5, 32 MiB buffer, idempotence on,
 *       no compression; Kafka acks=all.</li>
 *   <li>Group catch-up: a backlog of {@code backlog} records, then ONE group member reading all of
 *       it (Talos poll mode, Kafka subscribe), each with its default fetch settings; records per
 *       second from creating the consumer (group join included) to the last record.</li>
 *   <li>End-to-end latency: {@code rate} records/s over the partitions, producer with linger.ms=0,
 *       one group member polling in the same process; latency from each record's intended send
 *       time (carried in its first 8 bytes) to poll returning it. Talos twice: with long poll
 *       (fetch.max.wait.ms) and with plain fetches every fetch.backoff.ms.</li>
 * </ol>
 */
final class SdkScenario {
  /** Options of the scenario. */
  record Options(List<Integer> sizes, int partitions, int batchBytes, double seconds, long backlog,
      int backlogBytes, int rate, int latencyBytes, double latencyWarmup, double latencySeconds,
      long longPollMs, long fetchIntervalMs, int inFlight, int rounds) {}

  /** e2e: intended send to poll; ack: intended send to the producer's acknowledgement (the put's share). */
  record Latency(String name, Histogram e2e, Histogram ack, long measured, String failure) {}

  private SdkScenario() {}

  static void run(BenchContext ctx, double warmupSeconds, Options o) throws Exception {
    ctx.report.heading("SDK clients: async producer, group catch-up, end-to-end latency");
    ctx.report.text(String.format(Locale.ROOT, "One TalosProducer vs one KafkaProducer and one group TalosConsumer"
        + " vs one group KafkaConsumer, in this run, each server alone on the machine: async produce on fresh servers"
        + " (Talos first; with several rounds the order alternates), then catch-up and latency on fresh servers (Talos first)."
        + " Produce: %d partitions, one thread sending keyless records as fast as the producer accepts them,"
        + " %s s measured after %s s warm-up; both: %d-byte batches per partition (Talos batch.max.bytes,"
        + " batch.max.records=100000; Kafka batch.size), linger.ms=5, 32 MiB buffer, idempotence on, no"
        + " compression, default sticky partitioner; Kafka acks=all, max.in.flight.requests.per.connection=5;"
        + " Talos max.in.flight.requests=%s per producer, at most one per partition."
        + " Catch-up: %,d records of %d bytes already stored, one group member from creation to the last"
        + " record (defaults: Talos poll mode max.fetch.records=1000, max.poll.buffered.records=10000; Kafka"
        + " max.poll.records=500). Latency: %,d records/s of %d bytes for %s s after %s s warm-up, linger.ms=0;"
        + " Talos with long poll (fetch.max.wait.ms=%d) and without (fetch.max.wait.ms=0, a fetch every"
        + " fetch.backoff.ms=%d when caught up); Kafka fetch.min.bytes=1, fetch.max.wait.ms=500 (default)."
        + " Durability on both: %s.", o.partitions, SyncScenario.fmt(o.seconds), SyncScenario.fmt(warmupSeconds),
        o.batchBytes, o.inFlight > 0 ? Integer.toString(o.inFlight)
            : io.talos.client.producer.ProducerConfig.defaults().maxInFlightRequests() + " (default)", o.backlog, o.backlogBytes, o.rate, o.latencyBytes, SyncScenario.fmt(o.latencySeconds),
        SyncScenario.fmt(o.latencyWarmup), o.longPollMs, o.fetchIntervalMs, LatencyScenario.durabilityText(ctx)));
    if (o.rounds > 1) ctx.report.text("Async produce: " + Rounds.describe(o.rounds));
    // rounds x sizes
    List<List<Double>> talosProduce = new ArrayList<>();
    List<List<Double>> kafkaProduce = new ArrayList<>();
    for (int round = 1; round <= o.rounds; round++) {
      boolean kafkaFirst = Rounds.kafkaFirst(ctx, round);
      if (kafkaFirst) kafkaProduce.add(kafkaProduceRound(ctx, o, warmupSeconds, round));
      talosProduce.add(talosProduceRound(ctx, o, warmupSeconds, round));
      if (ctx.kafka && !kafkaFirst) kafkaProduce.add(kafkaProduceRound(ctx, o, warmupSeconds, round));
    }
    double talosCatchUp;
    double kafkaCatchUp = 0;
    List<Latency> latencies = new ArrayList<>();
    try (TalosNode node = ctx.startTalos(); TalosClient client = node.client()) {
      SyncScenario.warmUp(ctx, client, BenchContext.payload(100));
      node.resetMemoryPeaks();
      talosCatchUp = talosCatchUp(ctx, node, client, o);
      latencies.add(talosLatency(ctx, node, client, "Talos, long poll", o, o.longPollMs));
      latencies.add(talosLatency(ctx, node, client, "Talos, fetch every " + o.fetchIntervalMs + " ms", o, 0));
      ctx.report.memory("sdk catch-up, latency", "Talos", node.memory());
    }
    if (ctx.kafka) {
      try (KafkaNode node = ctx.startKafka()) {
        node.process().memory().resetPeaks();
        kafkaCatchUp = kafkaCatchUp(ctx, node, o);
        latencies.add(kafkaLatency(ctx, node, o));
        ctx.report.memory("sdk catch-up, latency", "Kafka", node.process().memory().snapshot());
      }
    }
    Table t = ctx.kafka
        ? new Table("SDK throughput", "figure", "Talos", "Kafka 4.3.1", "Talos/Kafka")
        : new Table("SDK throughput", "figure", "Talos");
    for (int i = 0; i < o.sizes.size(); i++) {
      int size = o.sizes.get(i);
      Rounds.row(t, size + " B async produce, records/s", Rounds.figures(talosProduce, i, r -> r),
          Rounds.figures(kafkaProduce, i, r -> r), true);
      Rounds.row(t, size + " B async produce, MB/s", Rounds.figures(talosProduce, i, r -> r * size),
          Rounds.figures(kafkaProduce, i, r -> r * size), false);
    }
    String catchUp = String.format(Locale.ROOT, "group catch-up of %,d x %d B, records/s", o.backlog, o.backlogBytes);
    if (ctx.kafka) {
      t.row(catchUp, Table.count(talosCatchUp), Table.count(kafkaCatchUp), Table.ratio(talosCatchUp, kafkaCatchUp));
    } else {
      t.row(catchUp, Table.count(talosCatchUp));
    }
    ctx.report.table(t);
    List<String> header = new ArrayList<>(List.of("figure"));
    for (Latency l : latencies) header.add(l.name);
    Latency kafka = ctx.kafka ? latencies.get(latencies.size() - 1) : null;
    if (kafka != null) {
      for (int i = 0; i < latencies.size() - 1; i++) header.add(latencies.get(i).name + " / Kafka");
    }
    Table lt = new Table(String.format(Locale.ROOT, "SDK end-to-end latency at %,d records/s (ms)", o.rate),
        header.toArray(String[]::new));
    String[] names = {"P50", "P99", "P99.9", "max"};
    double[] pcts = {50, 99, 99.9, 100};
    for (int i = 0; i < names.length; i++) {
      List<Object> row = new ArrayList<>(List.of("end to end " + names[i]));
      for (Latency l : latencies) row.add(Table.ms(l.e2e.getValueAtPercentile(pcts[i])));
      if (kafka != null) {
        double k = kafka.e2e.getValueAtPercentile(pcts[i]);
        for (int j = 0; j < latencies.size() - 1; j++) {
          row.add(Table.ratio(latencies.get(j).e2e.getValueAtPercentile(pcts[i]), k));
        }
      }
      lt.row(row.toArray());
    }
    List<Object> counts = new ArrayList<>(List.of("records measured"));
    for (Latency l : latencies) counts.add(Table.count(l.measured));
    while (counts.size() < header.size()) counts.add("");
    lt.row(counts.toArray());
    // where an end-to-end tail comes from: the produce acknowledgement alone (send to callback)
    String[] ackNames = {"P50", "P99"};
    double[] ackPcts = {50, 99};
    for (int i = 0; i < ackNames.length; i++) {
      List<Object> row = new ArrayList<>(List.of("produce acknowledged " + ackNames[i]));
      for (Latency l : latencies) row.add(Table.ms(l.ack.getValueAtPercentile(ackPcts[i])));
      while (row.size() < header.size()) row.add("");
      lt.row(row.toArray());
    }
    ctx.report.table(lt);
    for (Latency l : latencies) {
      if (l.failure != null) ctx.report.text("_" + l.name + ": " + l.failure + "_");
    }
  }

  /** One round of async produce on a fresh Talos server: records/s per size. */
  private static List<Double> talosProduceRound(BenchContext ctx, Options o, double warmupSeconds, int round)
      throws Exception {
    List<Double> rates = new ArrayList<>();
    try (TalosNode node = ctx.startTalos(); TalosClient client = node.client()) {
      SyncScenario.warmUp(ctx, client, BenchContext.payload(100));
      node.resetMemoryPeaks();
      for (int size : o.sizes) {
        String name = "sdk-produce-" + size + "b" + (round > 1 ? "-round" + round : "");
        try (AutoCloseable profile = ctx.profile(node, name, warmupSeconds, o.seconds)) {
          rates.add(talosProduce(ctx, client, "sdk-produce-" + size, size, o, warmupSeconds));
        }
      }
      if (round == 1) ctx.report.memory("sdk produce", "Talos", node.memory());
    }
    return rates;
  }

  /** One round of async produce on a fresh Kafka broker: records/s per size. */
  private static List<Double> kafkaProduceRound(BenchContext ctx, Options o, double warmupSeconds, int round)
      throws Exception {
    List<Double> rates = new ArrayList<>();
    try (KafkaNode node = ctx.startKafka()) {
      node.process().memory().resetPeaks();
      for (int size : o.sizes) rates.add(kafkaProduce(ctx, node, "sdk-produce-" + size, size, o, warmupSeconds));
      if (round == 1) ctx.report.memory("sdk produce", "Kafka", node.process().memory().snapshot());
    }
    return rates;
  }

  // ------------------------------------------------------------------ Talos

  static io.talos.client.producer.ProducerConfig.Builder talosProducerConfig(Options o) {
    io.talos.client.producer.ProducerConfig.Builder b = io.talos.client.producer.ProducerConfig.builder()
        .batchMaxBytes(o.batchBytes).batchMaxRecords(100_000).lingerMs(5)
        .bufferMemoryBytes(32L * 1024 * 1024);
    return o.inFlight > 0 ? b.maxInFlightRequests(o.inFlight) : b;
  }

  private static double talosProduce(BenchContext ctx, TalosClient client, String topic, int size, Options o,
      double warmupSeconds) throws Exception {
    client.admin().createTopic(topic, o.partitions);
    byte[] payload = BenchContext.payload(size);
    AtomicLong acked = new AtomicLong();
    AtomicLong failed = new AtomicLong();
    AtomicReference<Throwable> firstFailure = new AtomicReference<>();
    double rate;
    ctx.progress.start("sdk talos produce " + size + " B", warmupSeconds + o.seconds,
        () -> String.format(Locale.ROOT, "%,d acked", acked.get()));
    try (TalosProducer producer = client.producer(topic, talosProducerConfig(o).build())) {
      rate = sendLoop(warmupSeconds, o.seconds, acked, () -> producer.send(ProducerRecord.of(payload), (md, e) -> {
        if (e == null) {
          acked.incrementAndGet();
        } else {
          failed.incrementAndGet();
          firstFailure.compareAndSet(null, e);
        }
      }));
      producer.flush();
      // where the time goes: batch sizes and the put round trip as the producer saw them
      var m = producer.metrics();
      var batches = m.getHistograms().get("batch-records").getSnapshot();
      var requests = m.getTimers().get("request-latency");
      ctx.report.text(String.format(Locale.ROOT, "_Talos producer, %d B: %,d puts, mean %.0f records per batch,"
          + " put round trip mean %.1f ms, p99 %.1f ms_", size, requests.getCount(), batches.getMean(),
          requests.getSnapshot().getMean() / 1e6, requests.getSnapshot().get99thPercentile() / 1e6));
    }
    ctx.progress.stop();
    if (failed.get() > 0) ctx.report.text("_sdk talos produce: " + failed.get() + " failed, first: " + firstFailure.get() + "_");
    client.admin().deleteTopic(topic);
    ctx.progress.note(String.format(Locale.ROOT, "sdk talos produce %d B: %,.0f records/s", size, rate));
    return rate;
  }

  /** Sends until warm-up + measurement are over; returns the records acknowledged per second in the window. */
  private static double sendLoop(double warmupSeconds, double seconds, AtomicLong acked, Runnable send) {
    long start = System.nanoTime();
    long measureStart = start + (long) (warmupSeconds * 1e9);
    long end = measureStart + (long) (seconds * 1e9);
    long ackedAtStart = 0;
    boolean measuring = false;
    long now;
    while ((now = System.nanoTime()) < end) {
      if (!measuring && now >= measureStart) {
        measuring = true;
        ackedAtStart = acked.get();
      }
      for (int i = 0; i < 64; i++) send.run();
    }
    return (acked.get() - ackedAtStart) / ((System.nanoTime() - measureStart) / 1e9);
  }

  private static void talosBacklog(BenchContext ctx, TalosClient client, String topic, Options o) {
    byte[] payload = BenchContext.payload(o.backlogBytes);
    AtomicLong acked = new AtomicLong();
    ctx.progress.start("sdk talos backlog", 0, () -> String.format(Locale.ROOT, "%,d / %,d", acked.get(), o.backlog));
    try (TalosProducer producer = client.producer(topic, talosProducerConfig(o).build())) {
      for (long i = 0; i < o.backlog; i++) {
        producer.send(ProducerRecord.of(payload), (md, e) -> {
          if (e == null) acked.incrementAndGet();
        });
      }
      producer.flush();
    }
    ctx.progress.stop();
    if (acked.get() != o.backlog) throw new IllegalStateException("backlog: " + acked.get() + " of " + o.backlog + " stored");
  }

  private static double talosCatchUp(BenchContext ctx, TalosNode node, TalosClient client, Options o) throws Exception {
    String topic = "sdk-catch-up";
    client.admin().createTopic(topic, o.partitions);
    talosBacklog(ctx, client, topic, o);
    AtomicLong read = new AtomicLong();
    ctx.progress.start("sdk talos catch-up", 0, () -> String.format(Locale.ROOT, "%,d / %,d", read.get(), o.backlog));
    double seconds;
    try (AutoCloseable profile = ctx.profileCpu(node, "sdk-catch-up")) {
      long t0 = System.nanoTime();
      try (TalosConsumer consumer = client.consumer(topic, "sdk-catch-up",
          io.talos.client.consumer.ConsumerConfig.defaults())) {
        long idleSince = System.nanoTime();
        while (read.get() < o.backlog && System.nanoTime() - idleSince < 60e9) {
          int n = consumer.poll(Duration.ofMillis(200)).size();
          if (n > 0) idleSince = System.nanoTime();
          read.addAndGet(n);
        }
        seconds = (System.nanoTime() - t0) / 1e9;
      }
    }
    ctx.progress.stop();
    if (read.get() < o.backlog) ctx.report.text("_sdk talos catch-up: read " + read.get() + " of " + o.backlog + "_");
    client.admin().deleteTopic(topic);
    double rate = read.get() / seconds;
    ctx.progress.note(String.format(Locale.ROOT, "sdk talos catch-up: %,.0f records/s", rate));
    return rate;
  }

  private static Histogram histogram() {
    return new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
  }

  private static byte[] stamped(byte[] template, long intendedNanos) {
    byte[] b = template.clone();
    ByteBuffer.wrap(b).putLong(0, intendedNanos);
    return b;
  }

  private static void recordAck(Histogram h, long measureStart, long intended, long now) {
    if (intended >= measureStart) h.recordValue(Math.min(now - intended, h.getHighestTrackableValue()));
  }

  private static void record(Histogram h, long measureStart, byte[] payload, long now) {
    long intended = ByteBuffer.wrap(payload).getLong(0);
    if (intended >= measureStart) h.recordValue(Math.min(now - intended, h.getHighestTrackableValue()));
  }

  private static Latency talosLatency(BenchContext ctx, TalosNode node, TalosClient client, String name, Options o,
      long maxWaitMs) throws Exception {
    String topic = "sdk-latency-" + maxWaitMs;
    client.admin().createTopic(topic, o.partitions);
    byte[] template = BenchContext.payload(Math.max(8, o.latencyBytes));
    Histogram e2e = histogram();
    Histogram ack = new org.HdrHistogram.ConcurrentHistogram(TimeUnit.SECONDS.toNanos(60), 3);
    long total = (long) ((o.latencyWarmup + o.latencySeconds) * o.rate);
    AtomicLong consumed = new AtomicLong();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    io.talos.client.consumer.ConsumerConfig cc = io.talos.client.consumer.ConsumerConfig.builder()
        .fetchMaxWaitMs(maxWaitMs).fetchBackoffMs(o.fetchIntervalMs).build();
    long[] measureStart = {Long.MAX_VALUE};
    try (TalosConsumer consumer = client.consumer(topic, "sdk-latency", cc);
        TalosProducer producer = client.producer(topic, talosProducerConfig(o).lingerMs(0).build())) {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (consumer.assignment().size() < o.partitions && System.nanoTime() < deadline) Thread.sleep(50);
      Thread.sleep(1000); // every reader has started (read its committed offset) and caught up
      Thread reader = new Thread(() -> {
        try {
          while (consumed.get() < total && failure.get() == null) {
            List<ConsumerRecord> got = consumer.poll(Duration.ofMillis(100));
            long now = System.nanoTime();
            for (ConsumerRecord r : got) record(e2e, measureStart[0], r.message().payload(), now);
            consumed.addAndGet(got.size());
          }
        } catch (RuntimeException | InterruptedException e) {
          failure.compareAndSet(null, e);
        }
      }, "sdk-talos-reader");
      reader.setDaemon(true);
      reader.start();
      ctx.progress.start("sdk " + name, o.latencyWarmup + o.latencySeconds, () -> String.format(Locale.ROOT,
          "%,d consumed of %,d", consumed.get(), total));
      // --profile: the server during the measured part (the sending starts 0.1 s from now)
      try (AutoCloseable profile = ctx.profile(node, "sdk-latency-wait-" + maxWaitMs + "ms", 0.1 + o.latencyWarmup,
          o.latencySeconds)) {
        paced(o, total, measureStart, failure, (intended) -> producer.send(ProducerRecord.of(stamped(template, intended)),
            (md, e) -> {
              if (e != null) failure.compareAndSet(null, e);
              else recordAck(ack, measureStart[0], intended, System.nanoTime());
            }));
      }
      producer.flush();
      reader.join(30_000);
      ctx.progress.stop();
      var m = producer.metrics();
      var requests = m.getTimers().get("request-latency");
      ctx.report.text(String.format(Locale.ROOT, "_Talos producer during %s: %,d puts, mean %.1f records per put,"
          + " put round trip mean %.1f ms, p99 %.1f ms; consumer: %,d commits, %,d fetch errors_", name,
          requests.getCount(), m.getHistograms().get("batch-records").getSnapshot().getMean(),
          requests.getSnapshot().getMean() / 1e6, requests.getSnapshot().get99thPercentile() / 1e6,
          consumer.metrics().getMeters().get("commits").getCount(),
          consumer.metrics().getMeters().get("fetch-errors").getCount()));
    }
    client.admin().deleteTopic(topic);
    ctx.progress.note(String.format(Locale.ROOT, "sdk %s: p50 %s ms, p99 %s ms", name,
        Table.ms(e2e.getValueAtPercentile(50)), Table.ms(e2e.getValueAtPercentile(99))));
    return new Latency(name, e2e, ack, e2e.getTotalCount(), failure.get() == null ? null : failure.get().toString());
  }

  /** Sends {@code total} records at {@code o.rate}, each at its intended time. */
  private static void paced(Options o, long total, long[] measureStart, AtomicReference<Throwable> failure,
      java.util.function.LongConsumer send) {
    long interval = 1_000_000_000L / o.rate;
    long start = System.nanoTime() + 100_000_000L;
    measureStart[0] = start + (long) (o.latencyWarmup * 1e9);
    for (long i = 0; i < total && failure.get() == null; i++) {
      long intended = start + i * interval;
      long wait;
      while ((wait = intended - System.nanoTime()) > 0) LockSupport.parkNanos(wait);
      send.accept(intended);
    }
  }

  // ------------------------------------------------------------------ Kafka

  private static Properties kafkaProducerConfig(KafkaNode node, int batchBytes, int lingerMs) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, node.bootstrap());
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.LINGER_MS_CONFIG, Integer.toString(lingerMs));
    p.put(ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(batchBytes));
    p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, Long.toString(32L * 1024 * 1024));
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "none");
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    return p;
  }

  private static Properties kafkaConsumerConfig(KafkaNode node, String group) {
    Properties c = new Properties();
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, node.bootstrap());
    c.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    return c;
  }

  private static double kafkaProduce(BenchContext ctx, KafkaNode node, String topic, int size, Options o,
      double warmupSeconds) throws Exception {
    node.createTopic(topic, o.partitions);
    byte[] payload = BenchContext.payload(size);
    AtomicLong acked = new AtomicLong();
    AtomicLong failed = new AtomicLong();
    AtomicReference<Exception> firstFailure = new AtomicReference<>();
    double rate;
    ctx.progress.start("sdk kafka produce " + size + " B", warmupSeconds + o.seconds,
        () -> String.format(Locale.ROOT, "%,d acked", acked.get()));
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(kafkaProducerConfig(node, o.batchBytes, 5))) {
      // every partition's leader known before measuring (see ThroughputScenario)
      for (int i = 0; i < o.partitions; i++) {
        producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>(topic, i, null, payload)).get(60, TimeUnit.SECONDS);
      }
      rate = sendLoop(warmupSeconds, o.seconds, acked, () -> producer.send(
          new org.apache.kafka.clients.producer.ProducerRecord<>(topic, payload), (md, e) -> {
            if (e == null) {
              acked.incrementAndGet();
            } else {
              failed.incrementAndGet();
              firstFailure.compareAndSet(null, e);
            }
          }));
      producer.flush();
    }
    ctx.progress.stop();
    if (failed.get() > 0) ctx.report.text("_sdk kafka produce: " + failed.get() + " failed, first: " + firstFailure.get() + "_");
    ctx.progress.note(String.format(Locale.ROOT, "sdk kafka produce %d B: %,.0f records/s", size, rate));
    return rate;
  }

  private static double kafkaCatchUp(BenchContext ctx, KafkaNode node, Options o) throws Exception {
    String topic = "sdk-catch-up";
    node.createTopic(topic, o.partitions);
    byte[] payload = BenchContext.payload(o.backlogBytes);
    AtomicLong acked = new AtomicLong();
    ctx.progress.start("sdk kafka backlog", 0, () -> String.format(Locale.ROOT, "%,d / %,d", acked.get(), o.backlog));
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(kafkaProducerConfig(node, o.batchBytes, 5))) {
      for (long i = 0; i < o.backlog; i++) {
        producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>(topic, payload), (md, e) -> {
          if (e == null) acked.incrementAndGet();
        });
      }
      producer.flush();
    }
    ctx.progress.stop();
    if (acked.get() != o.backlog) throw new IllegalStateException("backlog: " + acked.get() + " of " + o.backlog + " stored");
    AtomicLong read = new AtomicLong();
    ctx.progress.start("sdk kafka catch-up", 0, () -> String.format(Locale.ROOT, "%,d / %,d", read.get(), o.backlog));
    long t0 = System.nanoTime();
    double seconds;
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(kafkaConsumerConfig(node, "sdk-catch-up"))) {
      consumer.subscribe(List.of(topic));
      long idleSince = System.nanoTime();
      while (read.get() < o.backlog && System.nanoTime() - idleSince < 60e9) {
        ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
        if (!records.isEmpty()) idleSince = System.nanoTime();
        read.addAndGet(records.count());
      }
      seconds = (System.nanoTime() - t0) / 1e9;
    }
    ctx.progress.stop();
    if (read.get() < o.backlog) ctx.report.text("_sdk kafka catch-up: read " + read.get() + " of " + o.backlog + "_");
    double rate = read.get() / seconds;
    ctx.progress.note(String.format(Locale.ROOT, "sdk kafka catch-up: %,.0f records/s", rate));
    return rate;
  }

  private static Latency kafkaLatency(BenchContext ctx, KafkaNode node, Options o) throws Exception {
    String topic = "sdk-latency";
    node.createTopic(topic, o.partitions);
    byte[] template = BenchContext.payload(Math.max(8, o.latencyBytes));
    Histogram e2e = histogram();
    Histogram ack = new org.HdrHistogram.ConcurrentHistogram(TimeUnit.SECONDS.toNanos(60), 3);
    long total = (long) ((o.latencyWarmup + o.latencySeconds) * o.rate);
    AtomicLong consumed = new AtomicLong();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    long[] measureStart = {Long.MAX_VALUE};
    Properties c = kafkaConsumerConfig(node, "sdk-latency");
    c.put(ConsumerConfig.FETCH_MIN_BYTES_CONFIG, "1");
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(kafkaProducerConfig(node, o.batchBytes, 0))) {
      KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c);
      consumer.subscribe(List.of(topic));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (consumer.assignment().size() < o.partitions && System.nanoTime() < deadline) {
        consumer.poll(Duration.ofMillis(100));
      }
      Thread reader = new Thread(() -> {
        try (consumer) {
          while (consumed.get() < total && failure.get() == null) {
            ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
            long now = System.nanoTime();
            for (var r : records) record(e2e, measureStart[0], r.value(), now);
            consumed.addAndGet(records.count());
          }
        } catch (RuntimeException e) {
          failure.compareAndSet(null, e);
        }
      }, "sdk-kafka-reader");
      reader.setDaemon(true);
      reader.start();
      ctx.progress.start("sdk kafka latency", o.latencyWarmup + o.latencySeconds, () -> String.format(Locale.ROOT,
          "%,d consumed of %,d", consumed.get(), total));
      paced(o, total, measureStart, failure, intended -> producer.send(
          new org.apache.kafka.clients.producer.ProducerRecord<>(topic, stamped(template, intended)), (md, e) -> {
            if (e != null) failure.compareAndSet(null, e);
            else recordAck(ack, measureStart[0], intended, System.nanoTime());
          }));
      producer.flush();
      reader.join(30_000);
      ctx.progress.stop();
    }
    ctx.progress.note(String.format(Locale.ROOT, "sdk kafka latency: p50 %s ms, p99 %s ms",
        Table.ms(e2e.getValueAtPercentile(50)), Table.ms(e2e.getValueAtPercentile(99))));
    return new Latency("Kafka 4.3.1", e2e, ack, e2e.getTotalCount(), failure.get() == null ? null : failure.get().toString());
  }
}
