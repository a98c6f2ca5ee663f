package io.talos.bench.reliability;

import io.talos.client.TalosClient;
import io.talos.client.producer.PutResult;
import io.talos.client.producer.SimpleProducer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.apache.hadoop.hdfs.MiniDFSCluster;

/**
 * Scenario 4, DataNode faults: a real server process writes to a MiniDFSCluster (in this JVM)
 * while producers (one per partition, retrying after a failed put with new messages) run; each
 * cycle a random DataNode is stopped for {@code downMs} and restarted. Every acknowledged
 * message must be read back (no false acknowledgement), and every partition must acknowledge
 * puts again after the last restart without anybody touching the server (the writer recovers by
 * itself).
 */
final class DataNodeRestarts {
  static final String TOPIC = "datanodes";

  record Options(int cycles, int dataNodes, int replication, int partitions, long downMs, long upMs, long seed,
      String serverJvm) {}

  private final Options o;
  private final Path work;
  private final Progress progress;

  DataNodeRestarts(Options o, Path work, Progress progress) {
    this.o = o;
    this.work = work;
    this.progress = progress;
  }

  Tally run() throws Exception {
    Random random = new Random(o.seed());
    AckLedger ledger = new AckLedger();
    long startMs = System.currentTimeMillis();
    try (HdfsCluster hdfs = HdfsCluster.start(work.resolve("minidfs"), o.dataNodes(), o.replication())) {
      Map<String, String> props = hdfs.serverProps("/talos", o.replication());
      props.put("storage.durability", "flush");
      props.put("storage.lease.recovery.timeout.ms", "30000");
      try (ServerProcess server = new ServerProcess(work.resolve("data"), props, o.serverJvm());) {
        server.start(120_000);
        try (TalosClient client = server.client(15_000)) {
          client.admin().createTopic(TOPIC, o.partitions());
          AtomicBoolean stop = new AtomicBoolean();
          AtomicLong failures = new AtomicLong();
          AtomicLongArray lastAckMs = new AtomicLongArray(o.partitions());
          List<Thread> producers = new ArrayList<>();
          for (int p = 0; p < o.partitions(); p++) {
            int partition = p;
            SimpleProducer producer = client.producer(TOPIC, partition);
            Thread t = new Thread(() -> produce(producer, partition, ledger, stop, failures, lastAckMs), "producer-" + p);
            producers.add(t);
            t.start();
          }
          long lastRestartMs = 0;
          for (int cycle = 1; cycle <= o.cycles(); cycle++) {
            Thread.sleep(o.upMs());
            int dn = random.nextInt(o.dataNodes());
            MiniDFSCluster.DataNodeProperties stopped = hdfs.cluster().stopDataNode(dn);
            Thread.sleep(o.downMs());
            hdfs.cluster().restartDataNode(stopped, true);
            hdfs.cluster().waitActive();
            lastRestartMs = System.currentTimeMillis();
            progress.note("datanode cycle " + cycle + "/" + o.cycles() + ": " + ledger.acknowledged()
                + " acknowledged, " + failures.get() + " puts failed so far");
          }
          // recovered by itself: every partition acknowledges again after the last restart
          long deadline = System.currentTimeMillis() + 120_000;
          long recovered = 0;
          while (System.currentTimeMillis() < deadline) {
            recovered = 0;
            for (int p = 0; p < o.partitions(); p++) if (lastAckMs.get(p) > lastRestartMs) recovered++;
            if (recovered == o.partitions()) break;
            Thread.sleep(200);
          }
          long recoveryMs = System.currentTimeMillis() - lastRestartMs;
          stop.set(true);
          for (Thread t : producers) t.join(60_000);
          AckLedger.Check total = AckLedger.Check.ZERO;
          for (int p = 0; p < o.partitions(); p++) {
            total = total.plus(ledger.verify(p, CrashCycles.readAll(client.consumer(TOPIC, p), p), new HashSet<>()));
          }
          long seconds = (System.currentTimeMillis() - startMs) / 1000;
          return new Tally("4 DataNode faults", "hdfs, flush, " + o.dataNodes() + " DataNodes, replication "
              + o.replication() + ", " + o.partitions() + " partitions", o.cycles(), ledger.acknowledged(),
              total.readBack(), total.lost() + ledger.reusedOffsets(), total.duplicated(), total.reordered(),
              total.refused(), "a DataNode down " + o.downMs() + " ms per cycle; " + failures.get()
              + " puts failed (not acknowledged); partitions acknowledging again after the last restart: "
              + recovered + "/" + o.partitions() + " (within " + recoveryMs + " ms); " + seconds + " s");
        }
      }
    }
  }

  /** Puts batches of 1-10 numbered messages until stopped; a failed put is retried with new messages. */
  private static void produce(SimpleProducer producer, int partition, AckLedger ledger, AtomicBoolean stop,
      AtomicLong failures, AtomicLongArray lastAckMs) {
    Random random = new Random(partition);
    long seq = 0;
    while (!stop.get()) {
      int n = 1 + random.nextInt(10);
      long first = seq;
      seq += n;
      List<byte[]> batch = new ArrayList<>(n);
      for (int i = 0; i < n; i++) batch.add(AckLedger.payload(partition, first + i));
      try {
        PutResult r = producer.put(batch);
        long offset = r.firstOffset().orElseThrow();
        for (int i = 0; i < n; i++) ledger.ack(partition, offset + i, first + i);
        lastAckMs.set(partition, System.currentTimeMillis());
      } catch (RuntimeException e) {
        failures.incrementAndGet();
        try {
          Thread.sleep(200);
        } catch (InterruptedException ie) {
          return;
        }
      }
    }
  }
}
