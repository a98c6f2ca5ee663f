package io.talos.bench.load;

import io.talos.client.TalosClient;
import io.talos.client.consumer.ConsumedMessage;
import io.talos.client.consumer.SimpleConsumer;
import io.talos.client.producer.SimpleProducer;
import io.talos.server.scheduling.ThreadSlice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.LongConsumer;
import java.util.function.ToLongFunction;
import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Scenario 4 (and its Kafka half in scenario 5): a fixed, low rate of messages to one partition;
 * the acknowledgement latency of each put and the end-to-end latency (send to a consumer in the
 * same process having it). Latencies are measured from each message's intended send time, so a
 * slow acknowledgement that delays the next sends is counted against them too (no coordinated
 * omission). The intended time travels in the first 8 bytes of the payload.
 *
 * <p>The warm-up and the measured window are two runs of the schedule: the measured one starts
 * once every warm-up message is acknowledged and consumed. A generator with a fixed number of synchronous
 * senders falls behind while a cold server (interpreted code, compilations competing for the
 * CPU) answers slower than the rate needs, and the backlog drains only as fast as the spare
 * capacity allows; carried into the window, it counted the warm-up's slowness as seconds-long
 * "stalls" of a server that was by then answering in a millisecond.
 */
final class LatencyScenario {
  /**
   * @param gc the server's GC pauses in the measured window, or null when not known
   * @param generator the generator JVM's own stops in the measured window, or null when not known
   * @param hiccups how late a thread of the generator woke, asking to wake every 1 ms, in the window
   * @param steal the CPU time the host took from this machine in the window (closed)
   * @param beats the stand-stills of this machine's CPUs in the window (closed)
   * @param late of the puts acknowledged after more than {@link #STALL_NANOS}, how many were in
   *     flight during a stop of the server or of the generator
   * @param lateBySecond the seconds of the window in which most late puts were sent, for the report
   */
  record Figures(Histogram put, Histogram e2e, long messages, GcLog.Pauses gc, GcLog.Pauses generator,
      Histogram hiccups, StealMeter steal, CpuHeartbeats beats, LatePuts.Attribution late, String lateBySecond) {}

  /** A put acknowledged later than this counts as a stall in the report. */
  static final long STALL_NANOS = 20_000_000L;

  private LatencyScenario() {}

  static String durabilityText(BenchContext ctx) {
    return ctx.durability.equals("sync")
        ? "fsync before acknowledging (Talos storage.durability=sync, Kafka log.flush.interval.messages=1)"
        : "acknowledged once in the OS page cache (Talos storage.durability=flush; Kafka acks=all on one broker,"
            + " no log.flush.*), no fsync on either";
  }

  /**
   * @param longPollMs the Talos consumer's long-poll wait (GetMessageRequest.maxWaitMs): a fetch that
   *     finds nothing is held by the server until the next append or this long; 0 busy-polls
   *     instead, pausing {@code pollMicros} after each empty fetch
   * @param pollMicros pause after an empty fetch that the server did not hold (busy poll, or a
   *     server with long poll off)
   */
  static void run(BenchContext ctx, int rate, int size, double warmupSeconds, double seconds, long longPollMs,
      long pollMicros, int inflight, int generatorSliceUs) throws Exception {
    ctx.report.heading("Scenario 4" + (ctx.kafka ? " and 5" : "") + ": latency at a fixed low rate");
    ctx.report.text(String.format(Locale.ROOT, "%,d messages/s of %d bytes to one partition for %s s (after %s s"
        + " warm-up, not counted). Talos: one SimpleProducer put per message, sent at its time by one of %d"
        + " threads (the SDK's put is synchronous; Kafka's producer keeps up to 5 requests in flight), a consumer thread"
        + " fetching behind it (%s). Kafka: KafkaProducer"
        + " acks=all, linger.ms=0 (send at once, as its EndToEndLatency tool), a KafkaConsumer polling the"
        + " partition (fetch.min.bytes=1, fetch.max.wait.ms=500: the broker holds a fetch that finds nothing until a record"
        + " arrives, its long poll). Latency from the intended send time, in ms; the measured window starts once every"
        + " warm-up message is acknowledged and consumed, so a backlog the warm-up left (a cold JVM answering slower"
        + " than the rate) is not counted in it. Durability on both: %s.",
        rate, size,
        SyncScenario.fmt(seconds), SyncScenario.fmt(warmupSeconds), inflight, consumerText(longPollMs, pollMicros),
        durabilityText(ctx)));
    if (generatorSliceUs > 0) {
      ctx.report.text("The load generator's threads ran with a scheduler slice of " + generatorSliceUs + " us"
          + (ThreadSlice.unavailableReason() != null ? " asked for, not given (" + ThreadSlice.unavailableReason() + ")"
          : " (--generator-slice-us), for both systems") + ".");
    }
    GcLog generatorLog = generatorLog(ctx);
    Figures talos;
    Figures kafka = null;
    try (TalosNode node = ctx.startTalos(); TalosClient client = node.client()) {
      SyncScenario.warmUp(ctx, client, BenchContext.payload(100));
      node.resetMemoryPeaks();
      // set when the measured window starts (after the warm-up has drained); profiled from then
      AtomicLong measureStart = new AtomicLong(Long.MAX_VALUE);
      try (AutoCloseable profile = ctx.profile(node, "s4-latency", measureStart::get, seconds)) {
        talos = onGeneratorThread(generatorSliceUs, () -> talos(ctx, client, node.gcLog(), generatorLog, rate, size,
            warmupSeconds, seconds, longPollMs, pollMicros, inflight, measureStart));
      }
      ctx.report.memory("4 latency", "Talos", node.memory());
      keepLog(ctx, node.gcLog(), "talos-gc.log");
    }
    if (ctx.kafka) {
      try (KafkaNode node = ctx.startKafka()) {
        node.process().memory().resetPeaks();
        kafka = onGeneratorThread(generatorSliceUs,
            () -> kafka(ctx, node, generatorLog, rate, size, warmupSeconds, seconds));
        ctx.report.memory("5 (4 on Kafka)", "Kafka", node.process().memory().snapshot());
      }
    }
    Table t = kafka != null
        ? new Table("Scenario 4 vs 5: latency (ms)", "figure", "Talos", "Kafka 4.3.1", "Talos/Kafka")
        : new Table("Scenario 4: latency (ms)", "figure", "Talos");
    String[] names = {"P50", "P99", "P999", "max"};
    double[] pcts = {50, 99, 99.9, 100};
    for (int which = 0; which < 2; which++) {
      for (int i = 0; i < names.length; i++) {
        Histogram a = which == 0 ? talos.put : talos.e2e;
        String name = (which == 0 ? "put ack " : "end to end ") + names[i];
        double va = a.getValueAtPercentile(pcts[i]);
        if (kafka == null) {
          t.row(name, Table.ms(va));
        } else {
          double vb = (which == 0 ? kafka.put : kafka.e2e).getValueAtPercentile(pcts[i]);
          t.row(name, Table.ms(va), Table.ms(vb), Table.ratio(va, vb));
        }
      }
    }
    if (kafka != null) {
      t.row("puts acknowledged after more than 20 ms", Table.count(stalls(talos.put)), Table.count(stalls(kafka.put)), "");
      t.row(LATE_IN_GC, count(talos.late.inGcPause()), count(kafka.late.inGcPause()), "");
      t.row(LATE_IN_OTHER_STOP, count(talos.late.inOtherStop()), count(kafka.late.inOtherStop()), "");
      t.row(LATE_IN_GENERATOR_STOP, count(talos.late.inGeneratorStop()), count(kafka.late.inGeneratorStop()), "");
      t.row(LATE_IN_HOST_HOLD, count(talos.late.inHostHold()), count(kafka.late.inHostHold()), "");
      t.row(LATE_IN_CPU_STALL, count(talos.late.inCpuStall()), count(kafka.late.inCpuStall()), "");
      t.row(LATE_BY_SECOND, talos.lateBySecond, kafka.lateBySecond, "");
      t.row("generator stalls over 20 ms", Table.count(stalls(talos.hiccups)), Table.count(stalls(kafka.hiccups)), "");
      t.row("generator's longest stall", Table.ms(talos.hiccups.getMaxValue()), Table.ms(kafka.hiccups.getMaxValue()),
          "");
      t.row(STOLEN, stolen(talos.steal, StealMeter::totalMillis), stolen(kafka.steal, StealMeter::totalMillis), "");
      t.row(STOLEN_WORST, stolen(talos.steal, StealMeter::worstSecondMillis),
          stolen(kafka.steal, StealMeter::worstSecondMillis), "");
      t.row(STOLEN_HOLD, stolen(talos.steal, StealMeter::longestHoldMillis),
          stolen(kafka.steal, StealMeter::longestHoldMillis), "");
      t.row(STANDSTILL, standstill(talos.beats), standstill(kafka.beats), "");
      t.row("messages measured", Table.count(talos.messages), Table.count(kafka.messages), "");
    } else {
      t.row("puts acknowledged after more than 20 ms", Table.count(stalls(talos.put)));
      t.row(LATE_IN_GC, count(talos.late.inGcPause()));
      t.row(LATE_IN_OTHER_STOP, count(talos.late.inOtherStop()));
      t.row(LATE_IN_GENERATOR_STOP, count(talos.late.inGeneratorStop()));
      t.row(LATE_IN_HOST_HOLD, count(talos.late.inHostHold()));
      t.row(LATE_IN_CPU_STALL, count(talos.late.inCpuStall()));
      t.row(LATE_BY_SECOND, talos.lateBySecond);
      t.row("generator stalls over 20 ms", Table.count(stalls(talos.hiccups)));
      t.row("generator's longest stall", Table.ms(talos.hiccups.getMaxValue()));
      t.row(STOLEN, stolen(talos.steal, StealMeter::totalMillis));
      t.row(STOLEN_WORST, stolen(talos.steal, StealMeter::worstSecondMillis));
      t.row(STOLEN_HOLD, stolen(talos.steal, StealMeter::longestHoldMillis));
      t.row(STANDSTILL, standstill(talos.beats));
      t.row("messages measured", Table.count(talos.messages));
    }
    ctx.report.table(t);
    ctx.report.text("Generator stalls: a thread of the load generator asks to wake every 1 ms throughout the"
        + " measured window; a wake later than 20 ms is a stall of the machine or of the generator's own JVM, which"
        + " delays the sends and acknowledgements it measures whatever the server does. CPU stolen by the host: the"
        + " time this virtual machine's CPUs had work but its host ran something else (steal in /proc/stat, summed"
        + " over the CPUs); every thread on a stolen CPU stops at once, server and generator alike, so a run with"
        + " seconds of heavy steal was disturbed from outside. A hold: one CPU's steal grew by " + StealMeter.HOLD_MIN_MS
        + " ms or more in consecutive samples " + TimeUnit.NANOSECONDS.toMillis(StealMeter.PERIOD_NANOS) + " ms apart"
        + " (the kernel adds a stolen stretch when the CPU runs again, in ticks of 10 ms); a late put in flight"
        + " during one waited for the host, whatever the server did, as timers and threads queued on that CPU"
        + " waited the whole stretch. A stand-still: a thread kept on one CPU, asking to wake every 1 ms with a short"
        + " scheduler slice (busy neighbours cannot hold it back), woke " + HiccupMeter.STALL_MIN_NANOS / 1_000_000
        + " ms late or more: that CPU ran nothing for that long (the host took it, whether or not it counts that as"
        + " steal), or the generator's own JVM was stopped (such late puts are counted with the generator's stops,"
        + " before); n/a where a pinned thread with that slice cannot be had (not Linux, a kernel before 6.12). A put"
        + " counts as in flight during a hold or a stand-still also when it was in flight within as long again after"
        + " one: what queued up meanwhile (due sends, requests) is worked off afterwards, on a"
        + " machine still busy.");
    if (talos.gc != null) {
      ctx.report.text("Talos server stops in the measured window (-Xlog:gc,safepoint): " + talos.gc.describe()
          + ". A late put was in flight during a stop when the time from its intended send to its acknowledgement"
          + " overlaps it (the log gives each stop's end on the wall clock, to the millisecond, and a GC's stop"
          + " includes the wait for every thread to reach it).");
    }
    keepLog(ctx, generatorLog, "generator-gc.log");
    if (talos.generator != null) {
      ctx.report.text("Generator stops in the measured window (its own -Xlog:gc,safepoint): Talos "
          + talos.generator.describe() + (kafka != null && kafka.generator != null ? "; Kafka "
          + kafka.generator.describe() : "") + ". The generator's JVM times the puts: while it is stopped, no put is"
          + " sent and no acknowledgement is taken, whatever the server does. So the generator collects its heap just"
          + " before each window, and (with bin/talos's default heap) its young generation holds more than a window"
          + " allocates: a GC pause of the generator in a window means a smaller heap or a longer window. The late"
          + " puts in flight during no stop of either, nor of the machine (above), waited for something else: a core,"
          + " or the server's own work.");
    }
  }

  /** How the Talos consumer waits for new messages, for the report. */
  static String consumerText(long longPollMs, long pollMicros) {
    return longPollMs > 0
        ? "long poll: a fetch that finds nothing asks the server to hold it up to " + longPollMs
            + " ms (GetMessageRequest.maxWaitMs), answered as soon as a message is appended"
        : "busy poll: fetches again " + pollMicros + " µs after a fetch that found nothing";
  }

  private static final String LATE_IN_GC = "of them, in flight during a server GC pause";
  private static final String LATE_BY_SECOND = "late puts by second of the window they were sent in (the busiest "
      + LatePuts.TOP_SECONDS + ")";
  private static final String LATE_IN_OTHER_STOP = "of the others, in flight during another stop of the server (1 ms or more)";
  private static final String LATE_IN_GENERATOR_STOP =
      "of the others, in flight during a stop of the generator's JVM (1 ms or more)";
  private static final String STOLEN = "CPU stolen by the host in the window, ms (all CPUs)";
  private static final String STOLEN_WORST = "most stolen in one second, ms";
  private static final String STOLEN_HOLD = "longest hold of one CPU by the host, ms (" + StealMeter.HOLD_MIN_MS
      + " ms of steal or more)";
  private static final String LATE_IN_HOST_HOLD = "of the others, in flight while the host held a CPU of this machine";

  private static final String LATE_IN_CPU_STALL = "of the others, in flight while a CPU of this machine stood still";
  private static final String STANDSTILL = "longest stand-still of one CPU, ms (" + HiccupMeter.STALL_MIN_NANOS / 1_000_000
      + " ms or more)";

  /** The longest stand-still for the table; n/a where not measured. */
  private static String standstill(CpuHeartbeats beats) {
    return LatePuts.known(beats) ? Table.ms(beats.longestNanos()) : "n/a";
  }

  /** A steal figure for the table; n/a where not counted. */
  private static String stolen(StealMeter steal, ToLongFunction<StealMeter> figure) {
    if (!steal.available()) return "n/a";
    return Table.count(figure.applyAsLong(steal));
  }

  /** A count for the table; n/a where not known (negative). */
  private static String count(long countOrUnknown) {
    return countOrUnknown < 0 ? "n/a" : Table.count(countOrUnknown);
  }

  /**
   * Copies a GC log from the work directory (deleted at the end) to beside the results, as
   * {@code <results>-<name>}, and names the copy in the report: the report sums the stops up, the
   * log tells what each collection did.
   */
  private static void keepLog(BenchContext ctx, GcLog log, String name) {
    if (log == null || !Files.exists(log.file())) return;
    Path copy = besideResults(ctx, name);
    try {
      Files.copy(log.file(), copy, StandardCopyOption.REPLACE_EXISTING);
      ctx.report.text("_GC and safepoint log kept: `" + copy.getFileName() + "`._");
    } catch (IOException e) {
      ctx.report.text("_The GC log " + log.file() + " could not be kept: " + e.getMessage() + "._");
    }
  }

  /** {@code <results>-<name>}: a file kept beside the report, named after it. */
  private static Path besideResults(BenchContext ctx, String name) {
    Path results = ctx.report.file();
    return results.resolveSibling(results.getFileName().toString().replaceAll("\\.md$", "") + "-" + name);
  }

  /** This JVM's own GC log, started now in the work directory; null (and said in the report) if it cannot be. */
  private static GcLog generatorLog(BenchContext ctx) {
    try {
      return GcLog.startInThisJvm(ctx.workDir.resolve("generator-gc.log"));
    } catch (javax.management.JMException | RuntimeException e) {
      ctx.report.text("_The generator's own GC log could not be started (" + e + "); its stops are not counted._");
      return null;
    }
  }

  /** Stops the window's meters that were started (null: not started); the figures are then complete. */
  private static void closeMeters(HiccupMeter hiccups, CpuHeartbeats beats, StealMeter steal)
      throws InterruptedException {
    try {
      if (hiccups != null) hiccups.close();
      if (beats != null) beats.close();
    } finally {
      if (steal != null) steal.close();
    }
  }

  /** Values of {@code h} above {@link #STALL_NANOS}. */
  static long stalls(Histogram h) {
    return h.getTotalCount() - h.getCountBetweenValues(0, STALL_NANOS);
  }

  /**
   * The send and acknowledgement times of the late puts (at most {@link #MAX}; the rest are counted
   * by the histogram only), to be matched against the server's GC pauses, whose log has wall-clock
   * times: a put's times are taken on the monotonic clock and placed on the wall clock by one
   * reading of both, taken when the collector is made. Not thread-safe (the caller locks).
   */
  static final class LatePuts {
    static final int MAX = 100_000;
    static final int TOP_SECONDS = 3;
    private final long wallOriginMillis;
    private final long nanoOrigin;
    private long[] sent = new long[4096];
    private long[] acked = new long[sent.length];
    private int size;

    LatePuts() {
      this(System.currentTimeMillis(), System.nanoTime());
    }

    /** @param wallOriginMillis the wall clock at the monotonic instant {@code nanoOrigin} */
    LatePuts(long wallOriginMillis, long nanoOrigin) {
      this.wallOriginMillis = wallOriginMillis;
      this.nanoOrigin = nanoOrigin;
    }

    void add(long sentNanos, long ackedNanos) {
      if (size == MAX) return;
      if (size == sent.length) {
        sent = Arrays.copyOf(sent, Math.min(MAX, size * 2));
        acked = Arrays.copyOf(acked, sent.length);
      }
      sent[size] = sentNanos;
      acked[size] = ackedNanos;
      size++;
    }

    int size() {
      return size;
    }

    /**
     * Writes the late puts to {@code file}, one per line in the order recorded, tab-separated: the
     * intended send and the acknowledgement on the monotonic clock (ns; {@code System.nanoTime},
     * which on Linux is CLOCK_MONOTONIC, the clock a kernel trace can be told to use), the send on
     * the wall clock (ms since the epoch, as in GC logs), the second of the window it was sent in,
     * its latency (ms), and the stop it was in flight during ({@link Cause#label}).
     *
     * @param causes as {@link #causes} returned them
     */
    void write(Path file, long windowStartNanos, Cause[] causes) throws IOException {
      StringBuilder b = new StringBuilder(
          "sent_monotonic_ns\tacked_monotonic_ns\tsent_wall_ms\twindow_second\tlatency_ms\tin_flight_during\n");
      for (int i = 0; i < size; i++) {
        b.append(sent[i]).append('\t').append(acked[i]).append('\t').append(wallMillis(sent[i])).append('\t')
            .append(Math.floorDiv(sent[i] - windowStartNanos, 1_000_000_000L)).append('\t')
            .append(String.format(Locale.ROOT, "%.3f", (acked[i] - sent[i]) / 1e6)).append('\t')
            .append(causes[i].label).append('\n');
      }
      Files.writeString(file, b);
    }

    /**
     * How many late puts waited for a stop of the server, of the generator, or of the machine;
     * each is counted once, in the first that applies. -1 where not known (no timed log, a log
     * without its safepoints, no steal counters, no heartbeats).
     *
     * @param inGcPause in flight during a GC pause of the server
     * @param inOtherStop of the others, in flight during another safepoint of the server of at
     *     least {@link GcLog#STOP_MIN_MS}
     * @param inGeneratorStop of the others, in flight during a stop of the generator's JVM (a
     *     collection or a safepoint) of at least {@link GcLog#STOP_MIN_MS}
     * @param inHostHold of the others, in flight while the host held a CPU of this machine ({@link
     *     StealMeter.Hold})
     * @param inCpuStall of the others, in flight while a CPU of this machine stood still ({@link
     *     CpuHeartbeats})
     */
    record Attribution(long inGcPause, long inOtherStop, long inGeneratorStop, long inHostHold, long inCpuStall) {}

    /** The first stop a late put was in flight during, in the order {@link Attribution} counts them. */
    enum Cause {
      SERVER_GC("server-gc"), SERVER_STOP("server-safepoint"), GENERATOR_STOP("generator-stop"),
      HOST_HOLD("host-steal"), CPU_STALL("cpu-standstill"), NONE("-");

      /** As the late-puts file writes it. */
      final String label;

      Cause(String label) {
        this.label = label;
      }
    }

    /**
     * The {@link #TOP_SECONDS} seconds after {@code windowStartNanos} in which most late puts were
     * sent, busiest first, e.g. {@code "12 s: 150, 25 s: 20, 3 s: 2"}; {@code "-"} when none was
     * late. One stall of the server makes one busy second; late puts spread thin over the window
     * are scheduling, not a stall.
     */
    String busiestSeconds(long windowStartNanos) {
      if (size == 0) return "-";
      java.util.Map<Long, Integer> bySecond = new java.util.TreeMap<>();
      for (int i = 0; i < size; i++) bySecond.merge(Math.floorDiv(sent[i] - windowStartNanos, 1_000_000_000L), 1, Integer::sum);
      return bySecond.entrySet().stream()
          .sorted(java.util.Map.Entry.<Long, Integer>comparingByValue().reversed())
          .limit(TOP_SECONDS)
          .map(e -> e.getKey() + " s: " + e.getValue())
          .collect(java.util.stream.Collectors.joining(", "));
    }

    /**
     * Each late put's first stop, in the order recorded.
     *
     * @param server the server's stops in the window, or null when not known
     * @param generator the generator's stops in the window, or null when not known
     * @param steal the window's steal (closed), or null when not known
     * @param beats the window's CPU heartbeats (closed), or null when not known
     */
    Cause[] causes(GcLog.Pauses server, GcLog.Pauses generator, StealMeter steal, CpuHeartbeats beats) {
      List<StealMeter.Hold> holds = known(steal) ? steal.holds() : List.of();
      List<HiccupMeter.Stall> standstills = known(beats) ? beats.stalls() : List.of();
      Cause[] causes = new Cause[size];
      for (int i = 0; i < size; i++) {
        long from = wallMillis(sent[i]);
        long to = wallMillis(acked[i]);
        int at = i;
        if (known(server) && server.gcOverlaps(from, to)) {
          causes[i] = Cause.SERVER_GC;
        } else if (stopsKnown(server) && server.otherStopOverlaps(from, to)) {
          causes[i] = Cause.SERVER_STOP;
        } else if (known(generator) && generator.anyStopOverlaps(from, to)) {
          causes[i] = Cause.GENERATOR_STOP;
        } else if (holds.stream().anyMatch(h -> h.overlaps(sent[at], acked[at]))) {
          causes[i] = Cause.HOST_HOLD;
        } else if (standstills.stream().anyMatch(st -> st.overlaps(sent[at], acked[at]))) {
          causes[i] = Cause.CPU_STALL;
        } else {
          causes[i] = Cause.NONE;
        }
      }
      return causes;
    }

    /** {@code causes}, as {@link #causes} returned them for the same arguments, counted. */
    static Attribution attribute(Cause[] causes, GcLog.Pauses server, GcLog.Pauses generator, StealMeter steal,
        CpuHeartbeats beats) {
      long[] n = new long[Cause.values().length];
      for (Cause c : causes) n[c.ordinal()]++;
      return new Attribution(known(server) ? n[Cause.SERVER_GC.ordinal()] : -1,
          stopsKnown(server) ? n[Cause.SERVER_STOP.ordinal()] : -1,
          known(generator) ? n[Cause.GENERATOR_STOP.ordinal()] : -1,
          known(steal) ? n[Cause.HOST_HOLD.ordinal()] : -1,
          known(beats) ? n[Cause.CPU_STALL.ordinal()] : -1);
    }

    private static boolean known(GcLog.Pauses stops) {
      return stops != null && stops.timed();
    }

    /** Whether the log has its safepoints too, not only its collections. */
    private static boolean stopsKnown(GcLog.Pauses server) {
      return known(server) && !server.stops().isEmpty();
    }

    private static boolean known(StealMeter steal) {
      return steal != null && steal.available();
    }

    private static boolean known(CpuHeartbeats beats) {
      return beats != null && beats.available();
    }

    private long wallMillis(long nanos) {
      return wallOriginMillis + Math.floorDiv(nanos - nanoOrigin, 1_000_000L);
    }
  }

  private static Histogram histogram() {
    return new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
  }

  private static byte[] stamped(byte[] template, long intendedNanos) {
    byte[] b = template.clone();
    ByteBuffer.wrap(b).putLong(0, intendedNanos);
    return b;
  }

  private static long stamp(byte[] payload) {
    return ByteBuffer.wrap(payload).getLong(0);
  }

  /**
   * Runs {@code body} on a new thread that first asks for a scheduler slice of {@code sliceUs}
   * (0: the kernel's default), and returns its result. The threads the body starts (senders,
   * reader, meters, Kafka's client threads) get the same slice: Linux gives a new thread its
   * creator's. The servers were started before, from another thread, and keep their own.
   */
  private static Figures onGeneratorThread(int sliceUs, Callable<Figures> body) throws Exception {
    FutureTask<Figures> run = new FutureTask<>(body);
    new Thread(ThreadSlice.around(sliceUs, run), "s4-generator").start();
    try {
      return run.get();
    } catch (ExecutionException e) {
      if (e.getCause() instanceof Exception cause) throw cause;
      if (e.getCause() instanceof Error cause) throw cause;
      throw e;
    }
  }

  private static Figures talos(BenchContext ctx, TalosClient client, GcLog gcLog, GcLog generatorLog, int rate,
      int size, double warmupSeconds, double seconds, long longPollMs, long pollMicros, int inflight,
      AtomicLong measureStart) throws Exception {
    String topic = "s4-latency";
    client.admin().createTopic(topic, 1);
    SimpleProducer producer = client.producer(topic, 0);
    SimpleConsumer consumer = client.consumer(topic, 0);
    byte[] template = BenchContext.payload(Math.max(8, size));
    Histogram put = histogram();
    Histogram e2e = histogram();
    LatePuts late = new LatePuts();
    long warmupCount = (long) (warmupSeconds * rate);
    long total = warmupCount + (long) (seconds * rate);
    long interval = 1_000_000_000L / rate;
    // measureStart: set when the measured run of the schedule starts; messages intended before it
    // are warm-up
    AtomicLong consumed = new AtomicLong();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Thread reader = new Thread(() -> {
      long next = 0;
      try {
        while (consumed.get() < total && failure.get() == null) {
          SimpleConsumer.Fetched fetched = consumer.fetch(next, 1000, longPollMs);
          List<ConsumedMessage> got = fetched.messages();
          long now = System.nanoTime();
          if (got.isEmpty()) {
            // the server held it (long poll): fetch again at once; else pause before the next
            if (longPollMs == 0 || !fetched.serverWaited(longPollMs)) LockSupport.parkNanos(pollMicros * 1000);
            continue;
          }
          for (ConsumedMessage m : got) {
            long intended = stamp(m.payload());
            if (intended >= measureStart.get()) {
              e2e.recordValue(Math.min(now - intended, e2e.getHighestTrackableValue()));
            }
          }
          next = got.get(got.size() - 1).offset() + 1;
          consumed.addAndGet(got.size());
        }
      } catch (RuntimeException e) {
        failure.compareAndSet(null, e);
      }
    }, "s4-talos-reader");
    reader.setDaemon(true);
    reader.start();
    ctx.progress.start("s4 talos latency", warmupSeconds + seconds, () -> String.format(Locale.ROOT,
        "%,d consumed of %,d", consumed.get(), total));
    // the SDK's producer is synchronous: up to `inflight` puts at once (threads taking the next
    // due message), as Kafka's producer keeps up to 5 requests in flight
    ExecutorService senders = Executors.newFixedThreadPool(inflight);
    AtomicLong outstanding = new AtomicLong();
    Function<Boolean, LongConsumer> send = measured -> intended -> {
      outstanding.incrementAndGet();
      senders.execute(() -> {
        try {
          producer.put(List.of(stamped(template, intended)));
          long done = System.nanoTime();
          if (measured) {
            synchronized (put) {
              put.recordValue(Math.min(done - intended, put.getHighestTrackableValue()));
              if (done - intended > STALL_NANOS) late.add(intended, done);
            }
          }
        } catch (RuntimeException e) {
          failure.compareAndSet(null, e);
        } finally {
          outstanding.decrementAndGet();
        }
      });
    };
    sendOnSchedule(System.nanoTime() + 10_000_000L, warmupCount, interval, failure, send.apply(false));
    awaitWarmup(() -> outstanding.get() == 0 && consumed.get() >= warmupCount, failure);
    CpuHeartbeats beats = new CpuHeartbeats("s4-talos-heartbeat");
    HiccupMeter hiccups = null;
    StealMeter steal = null;
    long start;
    long gcFrom;
    long generatorFrom;
    try { // the meters' threads (one per CPU, waking every ms) must not outlive a failed window
      collectBeforeWindow();
      start = System.nanoTime() + 10_000_000L;
      if (failure.get() == null) measureStart.set(start); // else no window: nothing to profile
      hiccups = new HiccupMeter(start, "s4-talos-hiccups");
      beats.recordFrom(start);
      steal = new StealMeter("s4-talos-steal");
      gcFrom = gcLog != null ? gcLog.position() : -1;
      generatorFrom = generatorLog != null ? generatorLog.position() : -1;
      sendOnSchedule(start, total - warmupCount, interval, failure, send.apply(true));
      senders.shutdown();
      senders.awaitTermination(60, TimeUnit.SECONDS);
      reader.join(30_000);
    } finally {
      closeMeters(hiccups, beats, steal);
    }
    ctx.progress.stop();
    if (failure.get() != null) ctx.report.text("_s4 talos failed: " + failure.get() + "_");
    GcLog.Pauses gc = gcFrom >= 0 ? gcLog.pausesSince(gcFrom) : null;
    return figures(ctx, "talos", put, e2e, gc, generatorLog, generatorFrom, hiccups, steal, beats, late, start);
  }

  /**
   * The figures of one system's window, its late puts matched against the server's stops ({@code
   * gc}, null when not known) and the generator's since {@code generatorFrom} (-1: not known). The
   * late puts are also kept beside the results, one per line (see {@link LatePuts#write}).
   */
  private static Figures figures(BenchContext ctx, String system, Histogram put, Histogram e2e, GcLog.Pauses gc,
      GcLog generatorLog, long generatorFrom, HiccupMeter hiccups, StealMeter steal, CpuHeartbeats beats, LatePuts late,
      long windowStartNanos) throws IOException {
    GcLog.Pauses generator = generatorFrom >= 0 ? generatorLog.pausesSince(generatorFrom) : null;
    LatePuts.Attribution attribution;
    String bySecond;
    synchronized (put) { // the senders' callbacks add to the late puts under it
      LatePuts.Cause[] causes = late.causes(gc, generator, steal, beats);
      attribution = LatePuts.attribute(causes, gc, generator, steal, beats);
      bySecond = late.busiestSeconds(windowStartNanos);
      if (late.size() > 0) {
        Path file = besideResults(ctx, system + "-late-puts.tsv");
        try {
          late.write(file, windowStartNanos, causes);
          ctx.report.text("_" + system + "'s late puts, one per line: `" + file.getFileName() + "`._");
        } catch (IOException e) {
          ctx.report.text("_" + system + "'s late puts could not be written to " + file + ": " + e.getMessage() + "._");
        }
      }
    }
    return new Figures(put, e2e, put.getTotalCount(), gc, generator, hiccups.lateness(), steal, beats, attribution,
        bySecond);
  }

  /**
   * Hands {@code send} the intended times {@code start}, {@code start + interval}, ... ({@code
   * count} of them), each when it is due (a late one at once), until one fails.
   */
  private static void sendOnSchedule(long start, long count, long interval, AtomicReference<Throwable> failure,
      LongConsumer send) {
    for (long i = 0; i < count && failure.get() == null; i++) {
      long intended = start + i * interval;
      long wait;
      while ((wait = intended - System.nanoTime()) > 0) LockSupport.parkNanos(wait);
      send.accept(intended);
    }
  }

  /**
   * Collects the generator's own heap between the warm-up and the measured window, while no put is
   * in flight: the window then starts with an empty young generation, and with the bench JVM's
   * young generation (bin/talos gives it 3 GiB) larger than a window allocates (about 1 GB in 30 s
   * at 1,000 puts/s), the generator does not collect during it. Its young pauses were 11-15 ms on a
   * loaded machine, added to every put in flight, on either system; the window is there to time the
   * servers. A window that still sees one (a smaller heap, a longer window) shows it in the
   * generator-stop rows.
   */
  static void collectBeforeWindow() {
    System.gc();
  }

  /**
   * Waits (at most a minute) until the warm-up is over: every message acknowledged and consumed,
   * so that neither a sender nor the consumer starts the measured window behind; or one failed.
   */
  private static void awaitWarmup(BooleanSupplier done, AtomicReference<Throwable> failure) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!done.getAsBoolean() && failure.get() == null) {
      if (System.nanoTime() > deadline) {
        failure.compareAndSet(null, new IllegalStateException("the warm-up's messages were not all acknowledged"
            + " and consumed within 60 s"));
        return;
      }
      LockSupport.parkNanos(1_000_000L);
    }
  }

  private static Figures kafka(BenchContext ctx, KafkaNode node, GcLog generatorLog, int rate, int size,
      double warmupSeconds, double seconds) throws Exception {
    String topic = "s4-latency";
    node.createTopic(topic, 1);
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, node.bootstrap());
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    Properties c = new Properties();
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, node.bootstrap());
    c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    c.put(ConsumerConfig.FETCH_MIN_BYTES_CONFIG, "1");
    byte[] template = BenchContext.payload(Math.max(8, size));
    Histogram put = histogram();
    LatePuts late = new LatePuts();
    Histogram e2e = histogram();
    long warmupCount = (long) (warmupSeconds * rate);
    long total = warmupCount + (long) (seconds * rate);
    long interval = 1_000_000_000L / rate;
    AtomicLong measureStart = new AtomicLong(Long.MAX_VALUE);
    AtomicLong consumed = new AtomicLong();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    HiccupMeter hiccups = null;
    CpuHeartbeats beats = null;
    StealMeter steal = null;
    long generatorFrom = -1;
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p);
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c)) {
      TopicPartition tp = new TopicPartition(topic, 0);
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      consumer.poll(Duration.ZERO);
      producer.send(new ProducerRecord<>(topic, 0, null, stamped(template, 0))).get(60, TimeUnit.SECONDS);
      long expected = total + 1; // the first record above, then the schedule
      Thread reader = new Thread(() -> {
        try {
          while (consumed.get() < expected && failure.get() == null) {
            var records = consumer.poll(Duration.ofMillis(100));
            long now = System.nanoTime();
            for (ConsumerRecord<byte[], byte[]> r : records) {
              long intended = stamp(r.value());
              if (intended >= measureStart.get()) {
                e2e.recordValue(Math.min(now - intended, e2e.getHighestTrackableValue()));
              }
            }
            consumed.addAndGet(records.count());
          }
        } catch (RuntimeException e) {
          failure.compareAndSet(null, e);
        }
      }, "s5-kafka-reader");
      reader.setDaemon(true);
      reader.start();
      ctx.progress.start("s5 kafka latency", warmupSeconds + seconds, () -> String.format(Locale.ROOT,
          "%,d consumed of %,d", consumed.get(), expected));
      Function<Boolean, LongConsumer> send = measured -> intended ->
          producer.send(new ProducerRecord<>(topic, 0, null, stamped(template, intended)), (md, e) -> {
            long done = System.nanoTime();
            if (e != null) {
              failure.compareAndSet(null, e);
            } else if (measured) {
              synchronized (put) {
                put.recordValue(Math.min(done - intended, put.getHighestTrackableValue()));
                if (done - intended > STALL_NANOS) late.add(intended, done);
              }
            }
          });
      sendOnSchedule(System.nanoTime() + 10_000_000L, warmupCount, interval, failure, send.apply(false));
      producer.flush(); // every warm-up record acknowledged
      awaitWarmup(() -> consumed.get() >= warmupCount + 1, failure);
      beats = new CpuHeartbeats("s5-kafka-heartbeat");
      try { // as in the Talos window
        collectBeforeWindow();
        long start = System.nanoTime() + 10_000_000L;
        measureStart.set(start);
        hiccups = new HiccupMeter(start, "s5-kafka-hiccups");
        beats.recordFrom(start);
        steal = new StealMeter("s5-kafka-steal");
        generatorFrom = generatorLog != null ? generatorLog.position() : -1;
        sendOnSchedule(start, total - warmupCount, interval, failure, send.apply(true));
        producer.flush();
        reader.join(30_000);
      } finally {
        closeMeters(hiccups, beats, steal);
      }
    }
    ctx.progress.stop();
    if (failure.get() != null) ctx.report.text("_s5 kafka latency failed: " + failure.get() + "_");
    return figures(ctx, "kafka", put, e2e, null, generatorLog, generatorFrom, hiccups, steal, beats, late,
        measureStart.get());
  }
}
