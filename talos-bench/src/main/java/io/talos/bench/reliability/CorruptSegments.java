package io.talos.bench.reliability;

import io.talos.server.storage.BlockToAppend;
import io.talos.server.storage.CorruptRecordException;
import io.talos.server.storage.Durability;
import io.talos.server.storage.LogConfig;
import io.talos.server.storage.NextOffsetStore;
import io.talos.server.storage.OffsetOutOfRangeException;
import io.talos.server.storage.PartitionDataMissingException;
import io.talos.server.storage.PartitionLog;
import io.talos.server.storage.PartitionLogs;
import io.talos.server.storage.StoredBlock;
import io.talos.server.storage.TailCache;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.URI;
import java.nio.file.Files;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;

/**
 * Scenario 3, torn and corrupt segments: a partition log (the server's storage code on the local
 * file system, with the next offset recorded as the server records it in its metadata store) gets
 * a few hundred acknowledged one-message records over several segments, is closed or abandoned (a
 * crash), and then one file is damaged: a byte flipped or the file truncated, in the tail or the
 * middle, of the newest segment, a sealed segment or a sealed segment's index. The log is opened
 * again and every acknowledged offset is read.
 *
 * <p>Required: no acknowledged record before the damage is lost; no offset serves other bytes
 * than were acknowledged there (wrong data); damage in the middle of the log is refused with a
 * clear error ({@link CorruptRecordException} on the read, or {@link PartitionDataMissingException}
 * on the open), not skipped; only a torn tail of the newest segment is cut back. Every record is
 * 65 bytes (49-byte header, 16-byte payload), so a byte position names its offset.
 */
final class CorruptSegments {
  static final int RECORD_BYTES = 49 + 16;

  record Options(int cases, long seed) {}

  /** Damage of one case. */
  enum Target { NEWEST_LOG, SEALED_LOG, SEALED_INDEX }

  enum Kind { FLIP_TAIL, FLIP_MIDDLE, TRUNCATE_TAIL, TRUNCATE_MIDDLE }

  /** What one case found. */
  record Outcome(long acknowledged, long readBack, long lostBeforeDamage, long wrongData, long refused,
      long cutBack, long reusedOffsets, boolean refusedOpen) {}

  private final Options o;
  private final java.nio.file.Path work;
  private final Progress progress;

  CorruptSegments(Options o, java.nio.file.Path work, Progress progress) {
    this.o = o;
    this.work = work;
    this.progress = progress;
  }

  Tally run() throws Exception {
    Random random = new Random(o.seed());
    long ack = 0, readBack = 0, lost = 0, wrong = 0, refused = 0, cutBack = 0, reused = 0, refusedOpens = 0;
    Map<String, long[]> byDamage = new ConcurrentHashMap<>();
    long startMs = System.currentTimeMillis();
    for (int c = 0; c < o.cases(); c++) {
      Target target = Target.values()[c % Target.values().length];
      Kind kind = Kind.values()[(c / Target.values().length) % Kind.values().length];
      boolean closed = random.nextBoolean();
      Outcome out = runCase(work.resolve("case-" + c), target, kind, closed, random);
      ack += out.acknowledged();
      readBack += out.readBack();
      lost += out.lostBeforeDamage();
      wrong += out.wrongData();
      refused += out.refused();
      cutBack += out.cutBack();
      reused += out.reusedOffsets();
      if (out.refusedOpen()) refusedOpens++;
      long[] k = byDamage.computeIfAbsent(target + "/" + kind, x -> new long[2]);
      k[0]++;
      if (out.lostBeforeDamage() > 0 || out.wrongData() > 0) k[1]++;
      deleteTree(work.resolve("case-" + c));
    }
    long seconds = (System.currentTimeMillis() - startMs) / 1000;
    progress.note("corrupt segments: " + o.cases() + " cases by damage (cases, cases with loss): "
        + byDamage.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()[0] + "/" + e.getValue()[1]).sorted().toList());
    return new Tally("3 torn and corrupt segments", "local, storage code, 1 partition, log closed or crashed",
        o.cases(), ack, readBack, lost + wrong, 0, 0, refused, "flip/truncate x tail/middle x newest log/sealed log/"
        + "sealed index; wrong data served: " + wrong + "; acknowledged records after the damage cut back as a torn tail: "
        + cutBack + "; offsets handed out again after the cut: " + reused + "; opens refused (data missing): "
        + refusedOpens + "; " + seconds + " s");
  }

  Outcome runCase(java.nio.file.Path dirPath, Target target, Kind kind, boolean closed, Random random) throws Exception {
    RawLocalFileSystem fs = (RawLocalFileSystem) PartitionLogs.fileSystemFor(URI.create("file:///"), new Configuration());
    Path dir = new Path(dirPath.toAbsolutePath().toUri().toString());
    LogConfig config = LogConfig.builder().durability(Durability.FLUSH).segmentBytes(4096).indexIntervalBytes(256).build();
    RecordedNextOffset nextOffsets = new RecordedNextOffset();
    PartitionLog log = PartitionLog.open(fs, dir, config, Clock.systemUTC(), TailCache.DISABLED, nextOffsets, "t", 0, false);
    int records = 200 + random.nextInt(200);
    long[] seqAt = new long[records];
    for (int i = 0; i < records; i++) {
      long offset = log.append(List.of(new BlockToAppend(1, 0, 16, -1, AckLedger.payload(0, i))), System.currentTimeMillis());
      seqAt[(int) offset] = i;
    }
    if (closed) {
      log.close();
    } else {
      log.awaitSeals(); // then abandoned, as by a crash: the newest segment has no index, the rolled ones have
    }

    List<java.nio.file.Path> logs = listSorted(dirPath, ".log");
    java.nio.file.Path newest = Files.size(logs.get(logs.size() - 1)) == 0 && logs.size() > 1
        ? logs.get(logs.size() - 2) // closed: skip the empty new active segment
        : logs.get(logs.size() - 1);
    java.nio.file.Path file;
    switch (target) {
      case NEWEST_LOG -> file = newest;
      case SEALED_LOG -> file = logs.get(random.nextInt(logs.indexOf(newest)));
      default -> {
        List<java.nio.file.Path> indexes = listSorted(dirPath, ".index");
        indexes.removeIf(p -> !Files.exists(p.resolveSibling(p.getFileName().toString().replace(".index", ".log")))
            || p.getFileName().toString().startsWith(newest.getFileName().toString().replace(".log", "")));
        file = indexes.get(random.nextInt(indexes.size()));
      }
    }
    long size = Files.size(file);
    long base = Long.parseLong(file.getFileName().toString().substring(0, 20));
    long pos = switch (kind) {
      case FLIP_TAIL, TRUNCATE_TAIL -> Math.max(0, size - 1 - random.nextInt((int) Math.min(size, RECORD_BYTES)));
      default -> random.nextInt((int) Math.max(1, size * 3 / 4));
    };
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      if (kind == Kind.FLIP_TAIL || kind == Kind.FLIP_MIDDLE) {
        f.seek(pos);
        int b = f.read();
        f.seek(pos);
        f.write(b ^ (1 << random.nextInt(8)));
      } else {
        f.setLength(pos);
      }
    }
    // the first offset whose bytes were touched; an index holds no record
    long damaged = target == Target.SEALED_INDEX ? Long.MAX_VALUE : base + pos / RECORD_BYTES;

    PartitionLog reopened;
    try {
      reopened = PartitionLog.open(fs, dir, config, Clock.systemUTC(), TailCache.DISABLED, nextOffsets, "t", 0, false);
    } catch (PartitionDataMissingException e) {
      // refused as a whole, with a clear error: nothing served, nothing wrong
      return new Outcome(records, 0, 0, 0, records, 0, 0, true);
    }
    long readBack = 0, lostBefore = 0, wrong = 0, refused = 0, cutBack = 0;
    for (long offset = 0; offset < records; offset++) {
      try {
        List<StoredBlock> got = reopened.read(offset, 1, 0);
        if (got.isEmpty()) throw new OffsetOutOfRangeException("", offset, reopened.startOffset(), reopened.endOffset());
        StoredBlock b = got.get(0);
        if (b.startOffset() == offset && AckLedger.seqOf(b.payload(), 0) == seqAt[(int) offset]) {
          readBack++;
        } else {
          wrong++;
        }
      } catch (CorruptRecordException e) {
        if (offset < damaged) lostBefore++;
        else refused++;
      } catch (OffsetOutOfRangeException e) {
        if (offset < damaged) lostBefore++;
        else cutBack++;
      }
    }
    long reused = 0;
    if (reopened.endOffset() < records) {
      reused = records - reopened.endOffset(); // the next appends get offsets acknowledged before
    }
    reopened.close();
    return new Outcome(records, readBack, lostBefore, wrong, refused, cutBack, reused, false);
  }

  private static List<java.nio.file.Path> listSorted(java.nio.file.Path dir, String suffix) throws IOException {
    try (Stream<java.nio.file.Path> s = Files.list(dir)) {
      return new ArrayList<>(s.filter(p -> p.getFileName().toString().endsWith(suffix))
          .sorted(Comparator.comparing(p -> p.getFileName().toString())).toList());
    }
  }

  static void deleteTree(java.nio.file.Path dir) throws IOException {
    if (!Files.exists(dir)) return;
    try (Stream<java.nio.file.Path> s = Files.walk(dir)) {
      for (java.nio.file.Path p : s.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
    }
  }

  /** The next offset as the server's metadata store records it, in memory. */
  static final class RecordedNextOffset implements NextOffsetStore {
    private long next;

    @Override
    public synchronized long nextOffset(String topicResourceName, int partitionId) {
      return next;
    }

    @Override
    public synchronized void raiseNextOffset(String topicResourceName, int partitionId, long nextOffset) {
      next = Math.max(next, nextOffset);
    }
  }
}
