package io.talos.bench.reliability;

import io.talos.server.storage.BlockToAppend;
import io.talos.server.storage.Durability;
import io.talos.server.storage.LogConfig;
import io.talos.server.storage.PartitionLog;
import io.talos.server.storage.PartitionLogs;
import io.talos.server.storage.StoredBlock;
import java.io.IOException;
import java.net.URI;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;

/**
 * Scenario 2, power cut: one writer thread per partition appends numbered blocks to the partition
 * logs (the server's storage code, on the local file system) and records every acknowledged
 * offset; at a random moment the power goes ({@link PowerCutFileSystem}: every file is cut back
 * to its last fsynced length, and every write in flight fails); the logs are opened again (the
 * recovery a restarting server does) and the next cycle writes on. At the end every partition is
 * read from its start.
 *
 * <p>At {@code sync} nothing acknowledged may be lost and no offset may be handed out twice. At
 * {@code flush} losses are expected (an acknowledgement only promises the OS page cache, see
 * docs/storage-format.md): that variant shows the check can fail.
 */
final class PowerCut {
  record Options(String durability, int cycles, int partitions, long minRunMs, long maxRunMs, long seed) {}

  private final Options o;
  private final java.nio.file.Path work;
  private final Progress progress;

  PowerCut(Options o, java.nio.file.Path work, Progress progress) {
    this.o = o;
    this.work = work;
    this.progress = progress;
  }

  Tally run() throws Exception {
    Durability durability = Durability.valueOf(o.durability().toUpperCase(java.util.Locale.ROOT));
    // small segments and index intervals: cuts land in sealed-segment indexes and fresh segments too
    LogConfig config = LogConfig.builder().durability(durability).segmentBytes(16 * 1024).indexIntervalBytes(512).build();
    Random random = new Random(o.seed());
    AckLedger ledger = new AckLedger();
    long[] nextSeq = new long[o.partitions()];
    long startMs = System.currentTimeMillis();
    Path root = new Path(work.toAbsolutePath().toUri().toString(), "powercut");
    for (int cycle = 1; cycle <= o.cycles(); cycle++) {
      RawLocalFileSystem raw = newRaw();
      PowerCutFileSystem fs = new PowerCutFileSystem(raw);
      List<PartitionLog> logs = open(fs, root, config);
      AtomicBoolean stop = new AtomicBoolean();
      List<Thread> writers = new ArrayList<>();
      for (int p = 0; p < o.partitions(); p++) {
        int partition = p;
        long seed = random.nextLong();
        Thread t = new Thread(() -> write(logs.get(partition), partition, nextSeq, ledger, stop, new Random(seed)),
            "writer-" + p);
        writers.add(t);
        t.start();
      }
      Thread.sleep(o.minRunMs() + (long) (random.nextDouble() * (o.maxRunMs() - o.minRunMs())));
      fs.powerCut();
      stop.set(true);
      for (Thread t : writers) t.join(60_000);
      // the old logs are abandoned as a machine that lost power abandons them: no close
      if (cycle % 20 == 0 || cycle == o.cycles()) {
        progress.note("power cut " + cycle + "/" + o.cycles() + ": " + ledger.acknowledged() + " acknowledged so far");
      }
    }
    RawLocalFileSystem raw = newRaw();
    List<PartitionLog> logs = open(raw, root, config);
    AckLedger.Check total = AckLedger.Check.ZERO;
    for (int p = 0; p < o.partitions(); p++) {
      total = total.plus(ledger.verify(p, readAll(logs.get(p), p), new HashSet<>()));
      logs.get(p).close();
    }
    long seconds = (System.currentTimeMillis() - startMs) / 1000;
    return new Tally("2 power cut", "local, " + o.durability() + ", storage code, " + o.partitions() + " partitions",
        o.cycles(), ledger.acknowledged(), total.readBack(), total.lost() + ledger.reusedOffsets(), total.duplicated(),
        total.reordered(), total.refused(), "cut after " + o.minRunMs() + "-" + o.maxRunMs()
        + " ms of appends per cycle, 16 KiB segments; offsets handed out twice: " + ledger.reusedOffsets() + "; "
        + seconds + " s");
  }

  private static RawLocalFileSystem newRaw() throws IOException {
    return (RawLocalFileSystem) PartitionLogs.fileSystemFor(URI.create("file:///"), new Configuration());
  }

  private List<PartitionLog> open(FileSystem fs, Path root, LogConfig config) throws IOException {
    List<PartitionLog> logs = new ArrayList<>();
    for (int p = 0; p < o.partitions(); p++) {
      logs.add(PartitionLog.open(fs, new Path(root, String.valueOf(p)), config, Clock.systemUTC()));
    }
    return logs;
  }

  /** Appends one-message blocks (each a numbered payload) until stopped or the power is gone. */
  private static void write(PartitionLog log, int partition, long[] nextSeq, AckLedger ledger, AtomicBoolean stop,
      Random random) {
    while (!stop.get()) {
      int n = 1 + random.nextInt(4);
      List<BlockToAppend> blocks = new ArrayList<>(n);
      long first;
      synchronized (nextSeq) {
        first = nextSeq[partition];
        nextSeq[partition] += n;
      }
      for (int i = 0; i < n; i++) {
        blocks.add(new BlockToAppend(1, 0, 16, -1, AckLedger.payload(partition, first + i)));
      }
      long offset;
      try {
        offset = log.append(blocks, System.currentTimeMillis());
      } catch (IOException | RuntimeException e) {
        return; // the power is gone
      }
      for (int i = 0; i < n; i++) ledger.ack(partition, offset + i, first + i);
    }
  }

  /** Every record from the log's start, in the order served (one message per block). */
  static ReadBack readAll(PartitionLog log, int partition) throws Exception {
    ReadBack reads = new ReadBack();
    long next = log.startOffset();
    while (next < log.endOffset()) {
      List<StoredBlock> blocks = log.read(next, 1000, 1 << 20);
      for (StoredBlock b : blocks) reads.add(b.startOffset(), AckLedger.seqOf(b.payload(), partition));
      next = blocks.get(blocks.size() - 1).nextOffset();
    }
    return reads;
  }
}
