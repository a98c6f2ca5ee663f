package io.talos.bench.reliability;

import io.talos.bench.sandbox.Sandbox;
import io.talos.bench.sandbox.SandboxNode;
import io.talos.client.TalosClient;
import io.talos.client.TalosClientConfig;
import io.talos.client.TalosException;
import io.talos.client.admin.GroupPartitionState;
import io.talos.client.consumer.ConsumerConfig;
import io.talos.client.consumer.ConsumerRecord;
import io.talos.client.consumer.TalosConsumer;
import io.talos.client.producer.PutResult;
import io.talos.client.producer.SimpleProducer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Scenario 7, cluster chaos: a 3-node {@link Sandbox} (real node processes on an HBase mini
 * cluster) under produce and group consume while random nodes are killed (SIGKILL, then started
 * again) or paused (SIGSTOP for longer than the ZooKeeper session, then SIGCONT), the two in turn.
 *
 * <p>One producer thread per partition (our SDK's SimpleProducer, moving to the next node's
 * endpoint on a retriable error) records every acknowledged offset; a group of two TalosConsumers
 * (poll mode, auto-commit), each on another node's endpoint, reads the topic; a monitor reads the
 * group's committed offsets every 500 ms. At the end: every partition read back from its start
 * against the acknowledgements (at its offset, once, in order), every acknowledged message
 * delivered to the group, and no committed offset ever lower than one seen before. In the row,
 * "lost" also counts acknowledged messages the group never delivered, and "reordered" also counts
 * committed offsets that went back.
 */
final class ClusterChaos {
  static final String TOPIC = "chaos";
  static final String GROUP = "chaos-group";
  /** A pause longer than the ZooKeeper session (4 s) plus cluster.reassign.delay.ms (2 s): the partitions move. */
  static final long PAUSE_MS = 8_000;

  record Options(int cycles, int partitions, long seed, String nodeJvm) {}

  private final Options o;
  private final Path work;
  private final Progress progress;

  ClusterChaos(Options o, Path work, Progress progress) {
    this.o = o;
    this.work = work;
    this.progress = progress;
  }

  Tally run() throws Exception {
    long startMs = System.currentTimeMillis();
    Random random = new Random(o.seed());
    AckLedger ledger = new AckLedger();
    List<String> jvm = List.of(o.nodeJvm().trim().split("\\s+"));
    try (Sandbox sandbox = Sandbox.start(new Sandbox.Options(3, work.resolve("sandbox"), jvm, 0, Map.of()),
        progress.out())) {
      List<TalosClient> clients = new ArrayList<>();
      for (SandboxNode n : sandbox.nodes()) {
        clients.add(TalosClient.create(TalosClientConfig.builder().endpoint(n.endpoint())
            .credentialFile(sandbox.adminCredentialFile()).connectTimeoutMs(1_000).requestTimeoutMs(5_000).build()));
      }
      try {
        clients.get(0).admin().createTopic(TOPIC, o.partitions());
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong retriable = new AtomicLong();
        List<String> nonRetriable = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<Thread> producers = new ArrayList<>();
        for (int p = 0; p < o.partitions(); p++) {
          int partition = p;
          List<SimpleProducer> perNode = new ArrayList<>();
          for (TalosClient c : clients) perNode.add(c.producer(TOPIC, partition));
          Thread t = new Thread(() -> produce(perNode, partition, ledger, stop, retriable, nonRetriable),
              "chaos-producer-" + p);
          producers.add(t);
          t.start();
        }
        Map<Integer, Set<Long>> consumed = new ConcurrentHashMap<>();
        AtomicLong consumerErrors = new AtomicLong();
        List<Thread> consumers = new ArrayList<>();
        AtomicBoolean stopConsumers = new AtomicBoolean();
        List<String> firstConsumerError = new java.util.concurrent.CopyOnWriteArrayList<>();
        for (int w = 1; w <= 2; w++) {
          // Its own client: a long poll (fetch.max.wait.ms) must be shorter than the request timeout.
          TalosClient c = TalosClient.create(TalosClientConfig.builder().endpoint(sandbox.node(w).endpoint())
              .credentialFile(sandbox.adminCredentialFile()).connectTimeoutMs(1_000).requestTimeoutMs(10_000).build());
          clients.add(c);
          Thread t = new Thread(() -> consume(c, consumed, stopConsumers, consumerErrors, firstConsumerError),
              "chaos-consumer-" + w);
          consumers.add(t);
          t.start();
        }
        AtomicLong commitRegressions = new AtomicLong();
        AtomicLong commitSamples = new AtomicLong();
        List<TalosClient> nodeClients = List.copyOf(clients.subList(0, 3));
        Thread monitor = new Thread(() -> monitorCommits(nodeClients, stopConsumers, commitRegressions, commitSamples),
            "chaos-commit-monitor");
        monitor.start();

        int kills = 0, pauses = 0;
        boolean killFirst = random.nextBoolean(); // kills and pauses alternate: a short run has both
        Thread.sleep(2_000);
        for (int cycle = 1; cycle <= o.cycles(); cycle++) {
          SandboxNode victim = sandbox.node(random.nextInt(3));
          if ((cycle % 2 == 1) == killFirst) {
            victim.kill();
            Thread.sleep(random.nextInt(2_000));
            sandbox.restart(victim.index());
            kills++;
          } else {
            victim.pause();
            Thread.sleep(PAUSE_MS + random.nextInt(2_000));
            victim.resume();
            pauses++;
          }
          Sandbox.awaitMembers(sandbox.nodes(), 3, 90_000);
          Thread.sleep(1_000 + random.nextInt(2_000));
          progress.note("cycle " + cycle + "/" + o.cycles() + ": " + ledger.acknowledged() + " acknowledged so far");
        }
        stop.set(true);
        for (Thread t : producers) t.join(60_000);
        // The group catches up with everything acknowledged, at most 60 s.
        long deadline = System.currentTimeMillis() + 60_000;
        while (System.currentTimeMillis() < deadline && undelivered(ledger, consumed) > 0) Thread.sleep(200);
        stopConsumers.set(true);
        for (Thread t : consumers) t.join(60_000);
        monitor.join(10_000);

        AckLedger.Check total = AckLedger.Check.ZERO;
        for (int p = 0; p < o.partitions(); p++) {
          ReadBack reads = CrashCycles.readAll(clients.get(0).consumer(TOPIC, p), p);
          total = total.plus(ledger.verify(p, reads, new HashSet<>()));
        }
        long undelivered = undelivered(ledger, consumed);
        long seconds = (System.currentTimeMillis() - startMs) / 1000;
        return new Tally("7 cluster chaos", "3 node processes, HBase + HDFS mini cluster, " + o.partitions()
            + " partitions, Talos SDK SimpleProducer + TalosConsumer group of 2", o.cycles(), ledger.acknowledged(),
            total.readBack(), total.lost() + ledger.reusedOffsets() + undelivered, total.duplicated(),
            total.reordered() + commitRegressions.get(), total.refused(), kills + " kill -9 + restart, " + pauses + " SIGSTOP " + PAUSE_MS / 1000 + "-"
            + (PAUSE_MS / 1000 + 2) + " s + SIGCONT; acknowledged but not delivered to the group: " + undelivered
            + "; committed offsets that went back: " + commitRegressions.get() + " (of " + commitSamples.get()
            + " samples); offsets handed out twice: " + ledger.reusedOffsets() + "; producer errors: "
            + retriable.get() + " retriable, " + nonRetriable.size() + " not retriable"
            + (nonRetriable.isEmpty() ? "" : " (" + nonRetriable.get(0) + ")") + "; consumer errors: "
            + consumerErrors.get() + (firstConsumerError.isEmpty() ? "" : " (first: " + firstConsumerError.get(0) + ")")
            + "; " + seconds + " s");
      } finally {
        clients.forEach(TalosClient::close);
      }
    }
  }

  /** Acknowledged messages the group has not delivered (yet). */
  private long undelivered(AckLedger ledger, Map<Integer, Set<Long>> consumed) {
    long[] n = {0};
    for (int p = 0; p < o.partitions(); p++) {
      Set<Long> got = consumed.getOrDefault(p, Set.of());
      ledger.forEachAckedSeq(p, seq -> {
        if (!got.contains(seq)) n[0]++;
      });
    }
    return n[0];
  }

  private static void produce(List<SimpleProducer> perNode, int partition, AckLedger ledger, AtomicBoolean stop,
      AtomicLong retriable, List<String> nonRetriable) {
    long seq = 0;
    int at = partition % perNode.size();
    while (!stop.get()) {
      int n = 1 + (int) (seq % 5);
      List<byte[]> batch = new ArrayList<>(n);
      for (int i = 0; i < n; i++) batch.add(AckLedger.payload(partition, seq + i));
      try {
        PutResult r = perNode.get(at).put(batch);
        long first = r.firstOffset().orElseThrow(() -> new IllegalStateException("no offset in the answer"));
        for (int i = 0; i < n; i++) ledger.ack(partition, first + i, seq + i);
      } catch (TalosException e) {
        if (!e.isRetriable()) {
          nonRetriable.add(e.toString());
          return;
        }
        retriable.incrementAndGet();
        at = (at + 1) % perNode.size();
        sleep(20);
      }
      seq += n; // never sent again, acknowledged or not
      sleep(5);
    }
  }

  /** One group member: polls until stopped; a consumer that fails is made again (its endpoint was down). */
  private void consume(TalosClient client, Map<Integer, Set<Long>> consumed, AtomicBoolean stop, AtomicLong errors,
      List<String> firstError) {
    ConsumerConfig config = ConsumerConfig.builder().set(ConsumerConfig.FETCH_MAX_WAIT_MS, 1_000L).build();
    while (!stop.get()) {
      try (TalosConsumer consumer = client.consumer(TOPIC, GROUP, config)) {
        while (!stop.get()) {
          for (ConsumerRecord r : consumer.poll(Duration.ofMillis(200))) {
            long seq = AckLedger.seqOf(r.message().payload(), r.partition());
            if (seq >= 0) consumed.computeIfAbsent(r.partition(), p -> ConcurrentHashMap.newKeySet()).add(seq);
          }
        }
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        if (errors.incrementAndGet() == 1) firstError.add(e.toString());
        sleep(500);
      }
    }
  }

  /** Samples the group's committed offsets through any node that answers; counts values lower than seen before. */
  private static void monitorCommits(List<TalosClient> clients, AtomicBoolean stop, AtomicLong regressions,
      AtomicLong samples) {
    Map<Integer, Long> highest = new HashMap<>();
    int at = 0;
    while (!stop.get()) {
      try {
        for (GroupPartitionState s : clients.get(at).consumerGroups().describe(TOPIC, GROUP)) {
          if (s.committedOffset() < 0) continue;
          Long before = highest.get(s.partitionId());
          if (before != null && s.committedOffset() < before) regressions.incrementAndGet();
          highest.merge(s.partitionId(), s.committedOffset(), Math::max);
          samples.incrementAndGet();
        }
      } catch (TalosException e) {
        at = (at + 1) % clients.size();
      }
      sleep(500);
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
