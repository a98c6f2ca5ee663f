package io.talos.bench.load;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.talos.client.TalosClient;
import io.talos.client.consumer.ConsumedMessage;
import io.talos.client.consumer.SimpleConsumer;
import io.talos.client.producer.SimpleProducer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.HdrHistogram.Histogram;

/**
 * Scenario 2, the 2.1.5 vs 2.1.6 thread-model test scaled to one 2-core machine: 10 KiB messages,
 * N synchronous put threads and N synchronous get threads on N partitions (the reference: 120 and
 * 120 on 120 partitions per client, 4 servers). Reports the server's own task-pool queue wait.
 */
final class ThreadModelScenario {
  private ThreadModelScenario() {}

  static void run(BenchContext ctx, int partitions, int messageBytes, int batch, double warmupSeconds,
      double seconds) throws Exception {
    ctx.report.heading("Scenario 2: thread model, " + partitions + " put + " + partitions + " get threads on "
        + partitions + " partitions");
    ctx.report.text(String.format("%d-byte messages, batch %d, synchronous; %s s after %s s warm-up. Gets read"
        + " behind the puts of their partition; fetches that found nothing new are not counted. Queue wait ="
        + " the server's `pool.queue.wait` timer from `/ops/metrics` (the percentiles of the last 1,028"
        + " tasks the server queued).", messageBytes, batch, SyncScenario.fmt(seconds), SyncScenario.fmt(warmupSeconds)));
    byte[] payload = BenchContext.payload(messageBytes);
    List<byte[]> batchPayloads = java.util.Collections.nCopies(batch, payload);
    try (TalosNode node = ctx.startTalos(); TalosClient client = node.client()) {
      SyncScenario.warmUp(ctx, client, BenchContext.payload(100));
      node.resetMemoryPeaks();
      String topic = "s2-threads-p" + partitions;
      client.admin().createTopic(topic, partitions);
      List<ClosedLoop.Step> puts = new ArrayList<>();
      List<ClosedLoop.Step> gets = new ArrayList<>();
      for (int p = 0; p < partitions; p++) {
        SimpleProducer producer = client.producer(topic, p);
        puts.add(() -> producer.put(batchPayloads).messageCount());
        SimpleConsumer consumer = client.consumer(topic, p);
        long[] next = {0};
        gets.add(() -> {
          List<ConsumedMessage> got = consumer.fetch(next[0], batch);
          if (!got.isEmpty()) next[0] = got.get(got.size() - 1).offset() + 1;
          return got.size();
        });
      }
      Map<String, List<ClosedLoop.Step>> groups = new LinkedHashMap<>();
      groups.put("put", puts);
      groups.put("get", gets);
      Map<String, ClosedLoop.GroupResult> r = ClosedLoop.run("s2 threads", ctx.progress, warmupSeconds, seconds,
          groups, false);
      node.checkAlive();
      Table t = new Table("Scenario 2 (client-side latency in ms)", "operation", "QPS", "MB/s", "mean", "P75", "P99",
          "P999", "max");
      for (ClosedLoop.GroupResult g : r.values()) {
        SyncScenario.reportErrors(ctx, "s2", g);
        Histogram h = g.latencyNanos;
        t.row(g.name, Table.count(g.qps()), Table.mbps(g.messagesPerSecond() * messageBytes), Table.ms(h.getMean()),
            Table.ms(h.getValueAtPercentile(75)), Table.ms(h.getValueAtPercentile(99)),
            Table.ms(h.getValueAtPercentile(99.9)), Table.ms(h.getMaxValue()));
      }
      JsonNode wait = new ObjectMapper().readTree(node.opsMetrics()).path("pool.queue.wait");
      if (!wait.isMissingNode()) {
        t.row("queue wait (server)", "", "", num(wait, "meanMs"), num(wait, "p75Ms"), num(wait, "p99Ms"),
            num(wait, "p999Ms"), num(wait, "maxMs"));
      }
      JsonNode service = new ObjectMapper().readTree(node.opsMetrics()).path("pool.service");
      if (!service.isMissingNode()) {
        t.row("task service (server)", "", "", num(service, "meanMs"), num(service, "p75Ms"), num(service, "p99Ms"),
            num(service, "p999Ms"), num(service, "maxMs"));
      }
      ctx.report.table(t);
      ctx.report.memory("2 thread model", "Talos", node.memory());
    }
  }

  private static String num(JsonNode n, String field) {
    JsonNode v = n.path(field);
    return v.isNumber() ? Table.ms(v.asDouble() * 1e6) : "n/a";
  }

  static String pct(double v) {
    return String.format(Locale.ROOT, "%.1f", v);
  }
}
