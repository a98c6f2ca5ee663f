package io.talos.bench.load;

import io.talos.client.TalosClient;
import io.talos.client.consumer.ConsumedMessage;
import io.talos.client.consumer.SimpleConsumer;
import io.talos.client.producer.SimpleProducer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Scenario 1, the reference's synchronous tables: one SimpleProducer thread per partition (and,
 * read/write, one SimpleConsumer thread per partition reading behind it), each sending its next
 * request as soon as the previous one is answered; every combination of partitions and batch size.
 */
final class SyncScenario {
  /** One cell of the table. */
  record Cell(String mode, int partitions, int batch, ClosedLoop.GroupResult put, ClosedLoop.GroupResult get) {}

  private SyncScenario() {}

  static List<Cell> run(BenchContext ctx, List<Integer> partitionCounts, List<Integer> batches,
      int messageBytes, List<String> modes, double warmupSeconds, double cellSeconds) throws Exception {
    ctx.report.heading("Scenario 1: synchronous SimpleProducer / SimpleConsumer, one thread per partition");
    ctx.report.text(String.format("%d-byte messages; partitions %s; batch %s; %s s per cell after %s s warm-up;"
        + " a topic per cell. QPS = requests/s; latency = one request, client side (ms); MB/s = payload bytes."
        + " Read/write: a consumer thread per partition reads behind its producer (fetch of at most `batch`"
        + " messages); fetches that found nothing new are not counted.",
        messageBytes, partitionCounts, batches, fmt(cellSeconds), fmt(warmupSeconds)));
    List<Cell> cells = new ArrayList<>();
    byte[] payload = BenchContext.payload(messageBytes);
    try (TalosNode node = ctx.startTalos(); TalosClient client = node.client()) {
      warmUp(ctx, client, payload);
      node.resetMemoryPeaks();
      for (String mode : modes) {
        boolean rw = mode.equals("readwrite");
        Table table = rw
            ? new Table("Scenario 1, read/write (put/get)", "partitions", "batch", "QPS put/get", "mean ms put/get",
                "P50 ms put/get", "P99 ms put/get", "MB/s put/get")
            : new Table("Scenario 1, write only", "partitions", "batch", "QPS", "msg/s", "mean ms", "P50 ms",
                "P99 ms", "MB/s");
        for (int batch : batches) {
          List<byte[]> batchPayloads = Collections.nCopies(batch, payload);
          for (int partitions : partitionCounts) {
            String topic = "s1-" + mode + "-b" + batch + "-p" + partitions;
            client.admin().createTopic(topic, partitions);
            Map<String, List<ClosedLoop.Step>> groups = new LinkedHashMap<>();
            List<ClosedLoop.Step> puts = new ArrayList<>();
            List<ClosedLoop.Step> gets = new ArrayList<>();
            for (int p = 0; p < partitions; p++) {
              SimpleProducer producer = client.producer(topic, p);
              puts.add(() -> producer.put(batchPayloads).messageCount());
              if (rw) {
                SimpleConsumer consumer = client.consumer(topic, p);
                long[] next = {0};
                gets.add(() -> {
                  List<ConsumedMessage> got = consumer.fetch(next[0], batch);
                  if (!got.isEmpty()) next[0] = got.get(got.size() - 1).offset() + 1;
                  return got.size();
                });
              }
            }
            groups.put("put", puts);
            if (rw) groups.put("get", gets);
            String label = "s1 " + mode + " p=" + partitions + " batch=" + batch;
            Map<String, ClosedLoop.GroupResult> r;
            try (AutoCloseable profile = ctx.profile(node, "s1-" + mode + "-p" + partitions + "-b" + batch,
                warmupSeconds + 0.1, cellSeconds)) {
              r = ClosedLoop.run(label, ctx.progress, warmupSeconds, cellSeconds, groups, false);
            }
            node.checkAlive();
            ClosedLoop.GroupResult put = r.get("put");
            ClosedLoop.GroupResult get = r.get("get");
            reportErrors(ctx, label, put);
            reportErrors(ctx, label, get);
            cells.add(new Cell(mode, partitions, batch, put, get));
            if (rw) {
              table.row(partitions, batch, Table.count(put.qps()) + " / " + Table.count(get.qps()),
                  Table.ms(put.latencyNanos.getMean()) + " / " + Table.ms(get.latencyNanos.getMean()),
                  Table.ms(put.latencyNanos.getValueAtPercentile(50)) + " / " + Table.ms(get.latencyNanos.getValueAtPercentile(50)),
                  Table.ms(put.latencyNanos.getValueAtPercentile(99)) + " / " + Table.ms(get.latencyNanos.getValueAtPercentile(99)),
                  Table.mbps(put.messagesPerSecond() * messageBytes) + " / " + Table.mbps(get.messagesPerSecond() * messageBytes));
            } else {
              table.row(partitions, batch, Table.count(put.qps()), Table.count(put.messagesPerSecond()),
                  Table.ms(put.latencyNanos.getMean()), Table.ms(put.latencyNanos.getValueAtPercentile(50)),
                  Table.ms(put.latencyNanos.getValueAtPercentile(99)), Table.mbps(put.messagesPerSecond() * messageBytes));
            }
            ctx.progress.note(String.format("%s: put %s req/s P50 %s ms%s", label, Table.count(put.qps()),
                Table.ms(put.latencyNanos.getValueAtPercentile(50)),
                rw ? ", get " + Table.count(get.qps()) + " req/s" : ""));
            client.admin().deleteTopic(topic);
          }
        }
        ctx.report.table(table);
      }
      ctx.report.memory("1 sync", "Talos", node.memory());
    }
    return cells;
  }

  /**
   * {@code --warmup} seconds of puts and gets on a scratch topic once the server is up, so that the
   * server's and the client's JIT compilers have done their work before anything is recorded (each
   * measurement then has its own warm-up of the same length). None with {@code --warmup 0}.
   */
  static void warmUp(BenchContext ctx, TalosClient client, byte[] payload) throws Exception {
    if (ctx.warmupSeconds <= 0) return;
    String topic = "bench-warmup-" + Long.toHexString(System.nanoTime());
    int partitions = 4;
    client.admin().createTopic(topic, partitions);
    List<ClosedLoop.Step> puts = new ArrayList<>();
    List<ClosedLoop.Step> gets = new ArrayList<>();
    for (int p = 0; p < partitions; p++) {
      SimpleProducer producer = client.producer(topic, p);
      List<byte[]> batch = Collections.nCopies(1 + p * 10, payload);
      puts.add(() -> producer.put(batch).messageCount());
      SimpleConsumer consumer = client.consumer(topic, p);
      long[] next = {0};
      gets.add(() -> {
        List<ConsumedMessage> got = consumer.fetch(next[0], 100);
        if (!got.isEmpty()) next[0] = got.get(got.size() - 1).offset() + 1;
        return got.size();
      });
    }
    Map<String, List<ClosedLoop.Step>> groups = new LinkedHashMap<>();
    groups.put("put", puts);
    groups.put("get", gets);
    ClosedLoop.run("server warm-up", ctx.progress, 0, ctx.warmupSeconds, groups, false);
    client.admin().deleteTopic(topic);
  }

  static void reportErrors(BenchContext ctx, String label, ClosedLoop.GroupResult r) {
    if (r != null && r.errors.sum() > 0) {
      Throwable e = r.firstError.get();
      ctx.report.text(String.format("_%s %s: %d failed requests, first: %s_", label, r.name, r.errors.sum(), e));
    }
  }

  static String fmt(double d) {
    return d == Math.rint(d) ? String.valueOf((long) d) : String.valueOf(d);
  }
}
