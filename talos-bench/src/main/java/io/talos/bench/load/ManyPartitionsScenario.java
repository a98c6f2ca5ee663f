package io.talos.bench.load;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.talos.client.TalosClient;
import io.talos.client.consumer.ConsumedMessage;
import io.talos.client.consumer.SimpleConsumer;
import io.talos.client.producer.SimpleProducer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Server memory with many partitions: {@code topics x partitions} partitions created, a few puts to
 * every one of them (so that each partition log has been opened, and stays open as far as the
 * server's open-log limits allow), then synchronous put/get load on a subset. The server's RSS,
 * heap, threads and open logs are recorded after each phase; with {@code --native-memory} also the
 * JVM's native memory summary per phase, and with {@code --histogram} the heap's largest classes,
 * so that what grows with the partition count can be named.
 */
final class ManyPartitionsScenario {
  /** What the scenario is asked to do. */
  record Options(int topics, int partitionsPerTopic, int putsPerPartition, int messageBytes, int fillThreads,
      int loadPartitions, int loadBatch, double loadSeconds, boolean nativeMemory, boolean histogram) {}

  private record Phase(String name, MemorySampler.Memory peak, long rssAfterKb, long threads, String openLogs,
      Map<String, Long> nativeKb) {}

  private ManyPartitionsScenario() {}

  static void run(BenchContext ctx, double warmupSeconds, Options o) throws Exception {
    int total = o.topics() * o.partitionsPerTopic();
    int loaded = Math.min(o.loadPartitions(), total);
    ctx.report.heading(String.format("Server memory with %,d partitions (%d topics x %d)", total, o.topics(),
        o.partitionsPerTopic()));
    ctx.report.text(String.format("Phases: the server idle after start; %d topics of %d partitions created; %d"
        + " put(s) of one %d-byte message to every partition (%d client threads), which opens every partition"
        + " log; then %s s (after %s s warm-up) of one synchronous put thread (batch %d) and one get thread per"
        + " partition on %d partitions spread over the topics. After each phase: peak RSS during it (sampled every"
        + " 200 ms), RSS at its end, peak heap used and committed (jstat), threads (/proc), open partition logs"
        + " (`storage.open.logs` of /ops/metrics).", o.topics(), o.partitionsPerTopic(), o.putsPerPartition(),
        o.messageBytes(), o.fillThreads(), SyncScenario.fmt(o.loadSeconds()), SyncScenario.fmt(warmupSeconds),
        o.loadBatch(), loaded));
    byte[] payload = BenchContext.payload(o.messageBytes());
    List<Phase> phases = new ArrayList<>();
    ClosedLoop.GroupResult loadPut;
    ClosedLoop.GroupResult loadGet;
    List<ServerJcmd.ClassBytes> histoFill = List.of();
    List<ServerJcmd.ClassBytes> histoLoad = List.of();
    try (TalosNode node = ctx.startTalos(); TalosClient client = node.client()) {
      if (!node.local()) throw new IllegalArgumentException("this scenario measures the server it starts; no --endpoint");
      ServerJcmd jcmd = new ServerJcmd(node.process().pid());
      Path files = ctx.report.file().resolveSibling(ctx.report.file().getFileName().toString()
          .replaceAll("\\.md$", "") + "-jcmd");
      SyncScenario.warmUp(ctx, client, payload);
      node.resetMemoryPeaks();
      phases.add(phase(ctx, node, jcmd, o, files, "idle after start"));

      List<String> topics = new ArrayList<>();
      for (int t = 0; t < o.topics(); t++) {
        String topic = String.format("many-t%03d", t);
        client.admin().createTopic(topic, o.partitionsPerTopic());
        topics.add(topic);
      }
      ctx.progress.note("created " + o.topics() + " topics of " + o.partitionsPerTopic() + " partitions");
      phases.add(phase(ctx, node, jcmd, o, files, String.format("%,d partitions created", total)));

      fill(ctx, client, topics, o, payload);
      node.checkAlive();
      phases.add(phase(ctx, node, jcmd, o, files, String.format("%,d partitions, %d put(s) each", total,
          o.putsPerPartition())));
      if (o.histogram()) histoFill = jcmd.classHistogram(files.resolve("histogram-after-fill.txt"), 15);

      List<byte[]> batch = Collections.nCopies(o.loadBatch(), payload);
      List<ClosedLoop.Step> puts = new ArrayList<>();
      List<ClosedLoop.Step> gets = new ArrayList<>();
      for (int k = 0; k < loaded; k++) {
        // spread over the topics: partition k / topics of topic k % topics
        String topic = topics.get(k % o.topics());
        int partition = k / o.topics();
        SimpleProducer producer = client.producer(topic, partition);
        puts.add(() -> producer.put(batch).messageCount());
        SimpleConsumer consumer = client.consumer(topic, partition);
        long[] next = {0};
        gets.add(() -> {
          List<ConsumedMessage> got = consumer.fetch(next[0], o.loadBatch());
          if (!got.isEmpty()) next[0] = got.get(got.size() - 1).offset() + 1;
          return got.size();
        });
      }
      Map<String, List<ClosedLoop.Step>> groups = new LinkedHashMap<>();
      groups.put("put", puts);
      groups.put("get", gets);
      String label = "many load p=" + loaded + " batch=" + o.loadBatch();
      Map<String, ClosedLoop.GroupResult> r = ClosedLoop.run(label, ctx.progress, warmupSeconds, o.loadSeconds(),
          groups, false);
      node.checkAlive();
      loadPut = r.get("put");
      loadGet = r.get("get");
      SyncScenario.reportErrors(ctx, label, loadPut);
      SyncScenario.reportErrors(ctx, label, loadGet);
      phases.add(phase(ctx, node, jcmd, o, files, String.format("load on %d of them", loaded)));
      if (o.histogram()) histoLoad = jcmd.classHistogram(files.resolve("histogram-after-load.txt"), 15);
      ctx.report.memory("many partitions", "Talos", node.memory());
    }

    Table t = new Table("Server memory by phase (MiB)", "phase", "peak RSS", "RSS after", "peak heap used",
        "peak heap committed", "threads", "open logs");
    for (Phase p : phases) {
      t.row(p.name(), p.peak().rssMiB(), mib(p.rssAfterKb()), p.peak().heapUsedMiB(), p.peak().heapCommittedMiB(),
          Table.count(p.threads()), p.openLogs());
    }
    ctx.report.table(t);
    ctx.report.text(String.format("Load on %d partitions, batch %d: put %s req/s (%s msg/s, P50 %s ms, P99 %s ms),"
        + " get %s req/s (P50 %s ms, P99 %s ms).", loaded, o.loadBatch(), Table.count(loadPut.qps()),
        Table.count(loadPut.messagesPerSecond()), Table.ms(loadPut.latencyNanos.getValueAtPercentile(50)),
        Table.ms(loadPut.latencyNanos.getValueAtPercentile(99)), Table.count(loadGet.qps()),
        Table.ms(loadGet.latencyNanos.getValueAtPercentile(50)), Table.ms(loadGet.latencyNanos.getValueAtPercentile(99))));
    if (o.nativeMemory()) ctx.report.table(nativeTable(phases));
    if (o.histogram()) ctx.report.table(histogramTable(histoFill, histoLoad));
  }

  /** A few puts to every partition from {@code fillThreads} threads, partitions dealt round-robin. */
  private static void fill(BenchContext ctx, TalosClient client, List<String> topics, Options o, byte[] payload)
      throws Exception {
    int total = topics.size() * o.partitionsPerTopic();
    AtomicInteger done = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(o.fillThreads());
    try {
      List<Future<?>> work = new ArrayList<>();
      for (int w = 0; w < o.fillThreads(); w++) {
        int first = w;
        work.add(pool.submit(() -> {
          for (int k = first; k < total; k += o.fillThreads()) {
            SimpleProducer producer = client.producer(topics.get(k / o.partitionsPerTopic()), k % o.partitionsPerTopic());
            for (int i = 0; i < o.putsPerPartition(); i++) producer.put(List.of(payload));
            done.incrementAndGet();
          }
          return null;
        }));
      }
      long start = System.nanoTime();
      ctx.progress.start("many fill", 0, () -> String.format("%,d of %,d partitions written", done.get(), total));
      try {
        for (Future<?> f : work) f.get();
      } finally {
        ctx.progress.stop();
      }
      ctx.progress.note(String.format("wrote %,d partitions in %.1f s", total, (System.nanoTime() - start) / 1e9));
    } finally {
      pool.shutdownNow();
    }
  }

  private static Phase phase(BenchContext ctx, TalosNode node, ServerJcmd jcmd, Options o, Path files, String name)
      throws Exception {
    Thread.sleep(1000); // at least one jstat sample (every 500 ms) in the phase, even a short one
    MemorySampler.Memory peak = node.memory();
    node.resetMemoryPeaks(); // samples the RSS now
    long rssAfter = node.memory().peakRssKb();
    long threads = node.process().memory().threads();
    JsonNode open = new ObjectMapper().readTree(node.opsMetrics()).path("storage.open.logs");
    String openLogs = open.isNumber() ? Table.count(open.asDouble())
        : open.path("value").isNumber() ? Table.count(open.path("value").asDouble()) : "n/a";
    Map<String, Long> nativeKb = Map.of();
    if (o.nativeMemory()) {
      String file = "nmt-" + name.replaceAll("[^A-Za-z0-9]+", "-") + ".txt";
      nativeKb = jcmd.nativeMemoryCommittedKb(files.resolve(file));
    }
    ctx.progress.note(String.format("%s: peak RSS %s MiB, RSS %s MiB, %d threads, open logs %s", name, peak.rssMiB(),
        mib(rssAfter), threads, openLogs));
    return new Phase(name, peak, rssAfter, threads, openLogs, nativeKb);
  }

  private static Table nativeTable(List<Phase> phases) {
    Set<String> categories = new LinkedHashSet<>();
    for (Phase p : phases) categories.addAll(p.nativeKb().keySet());
    List<String> header = new ArrayList<>();
    header.add("category");
    for (Phase p : phases) header.add(p.name());
    Table t = new Table("Native memory tracking, committed MiB at the end of each phase (jcmd VM.native_memory summary)",
        header.toArray(new String[0]));
    for (String c : categories) {
      List<Object> row = new ArrayList<>();
      row.add(c);
      for (Phase p : phases) {
        Long kb = p.nativeKb().get(c);
        row.add(kb == null ? "" : mib(kb));
      }
      t.row(row.toArray());
    }
    return t;
  }

  private static Table histogramTable(List<ServerJcmd.ClassBytes> fill, List<ServerJcmd.ClassBytes> load) {
    Table t = new Table("Largest classes on the heap after a full GC (jcmd GC.class_histogram)", "after", "class",
        "instances", "MiB");
    for (ServerJcmd.ClassBytes c : fill) t.row("fill", "`" + c.className() + "`", Table.count(c.instances()), mibBytes(c.bytes()));
    for (ServerJcmd.ClassBytes c : load) t.row("load", "`" + c.className() + "`", Table.count(c.instances()), mibBytes(c.bytes()));
    return t;
  }

  private static String mib(long kb) {
    return kb < 0 ? "n/a" : String.valueOf(Math.round(kb / 1024.0));
  }

  private static String mibBytes(long bytes) {
    return String.format(java.util.Locale.ROOT, "%.1f", bytes / 1048576.0);
  }
}
