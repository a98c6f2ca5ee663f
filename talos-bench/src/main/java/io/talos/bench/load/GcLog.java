package io.talos.bench.load;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.JMException;
import javax.management.ObjectName;

/**
 * A JVM's GC log ({@code -Xlog:gc}, unified logging, one line per collection): the server's, or
 * the load generator's own ({@link #startInThisJvm}). Reads the stop-the-world pauses written
 * after a given position of the file, so that a scenario can count those of its measurement window
 * only (note {@link #position()} when the window starts).
 *
 * <p>A pause line ends with its duration, e.g. {@code [12.3s][info][gc] GC(7) Pause Young (Normal)
 * (G1 Evacuation Pause) 40M->9M(64M) 2.345ms}; G1's concurrent cycle lines ({@code Concurrent Mark
 * Cycle}) are not pauses and are not counted, its {@code Pause Remark} and {@code Pause Cleanup} are.
 * A line decorated with {@code timemillis} ({@code [12.3s][1764320554567ms][info][gc] ...}: the wall
 * clock in ms since the epoch when the pause ended) also says when the pause happened, so that a
 * scenario can tell which of its late requests waited for one.
 *
 * <p>With {@code -Xlog:safepoint} as well, the log has a line for every stop of the JVM's threads
 * (a safepoint), GC or not, with the time it took the threads to reach it: {@code [12.3s]
 * [1764320554567ms][info][safepoint] Safepoint "G1CollectForAllocation", Time since last: 11251383339
 * ns, Reaching safepoint: 143278 ns, Cleanup: 2116 ns, At safepoint: 3212345 ns, Total: 3357739
 * ns}. A request waits for all of it, the reaching included, which the GC's own line leaves out.
 *
 * <p>Not thread-safe.
 */
final class GcLog {
  /** The decorations a server's GC log is written with ({@code -Xlog:gc,safepoint:file=F:DECORATIONS}). */
  static final String DECORATIONS = "timemillis,uptime,level,tags";
  /** A stop shorter than this is not a reason for a late request (there are several a second). */
  static final double STOP_MIN_MS = 1.0;
  private static final Pattern SAFEPOINT = Pattern.compile(
      "\\bSafepoint \"([^\"]*)\",.*Reaching safepoint: (\\d+) ns,.*Total: (\\d+) ns");
  private static final Pattern PAUSE = Pattern.compile("\\bPause .* ([0-9]+(?:\\.[0-9]+)?)ms\\s*$");
  private static final Pattern WALL_CLOCK = Pattern.compile("^(?:\\[[^\\]]*\\])*?\\[(\\d{1,18})ms\\]");

  /**
   * One pause: when it ended (ms since the epoch, -1 when the line has no wall clock) and how long
   * it took.
   */
  record Pause(long endMillis, double ms) {
    Pause {
      if (ms < 0) throw new IllegalArgumentException("a pause of " + ms + " ms");
    }

    /**
     * Whether the pause and the interval [{@code fromMillis}, {@code toMillis}] share an instant,
     * to the log's millisecond: a request in flight then waited for it.
     */
    boolean overlaps(long fromMillis, long toMillis) {
      if (endMillis < 0) return false;
      long start = endMillis - (long) Math.ceil(ms);
      return start <= toMillis && fromMillis <= endMillis;
    }
  }

  /**
   * One safepoint: the operation it was for, how long the threads took to reach it, and the whole
   * stop (reaching included).
   */
  record Stop(String operation, double reachingMs, Pause pause) {
    /** Whether it stopped the threads for a collection (G1's operations, or a requested GC). */
    boolean gc() {
      return operation.startsWith("G1") || operation.contains("GC") || operation.contains("Collect");
    }
  }

  /**
   * Pauses in a part of the log: the collections' own lines ({@code list}) and, when the log has
   * them, every safepoint ({@code stops}, empty otherwise).
   */
  record Pauses(List<Pause> list, List<Stop> stops) {
    int count() {
      return list.size();
    }

    double maxMs() {
      return list.stream().mapToDouble(Pause::ms).max().orElse(0);
    }

    double totalMs() {
      return list.stream().mapToDouble(Pause::ms).sum();
    }

    String describe() {
      String gc = list.isEmpty() ? "no GC pause"
          : String.format(java.util.Locale.ROOT, "%d GC pauses, longest %.1f ms, %.1f ms in all", count(), maxMs(),
              totalMs());
      if (stops.isEmpty()) return gc;
      Stop other = stops.stream().filter(s -> !s.gc()).max(java.util.Comparator.comparingDouble(s -> s.pause().ms()))
          .orElse(null);
      double reaching = stops.stream().mapToDouble(Stop::reachingMs).max().orElse(0);
      return gc + String.format(java.util.Locale.ROOT, "; %d safepoints, the longest wait to reach one %.1f ms, ",
          stops.size(), reaching)
          + (other == null ? "none but for GC"
              : String.format(java.util.Locale.ROOT, "the longest not for GC %.1f ms (%s)", other.pause().ms(),
                  other.operation()));
    }

    /** Whether every pause says when it happened. */
    boolean timed() {
      return list.stream().allMatch(p -> p.endMillis() >= 0)
          && stops.stream().allMatch(s -> s.pause().endMillis() >= 0);
    }

    /**
     * Whether a GC stopped the server during [{@code fromMillis}, {@code toMillis}]: one of its
     * pauses, or the safepoint it took (with the wait to reach it) overlaps.
     */
    boolean gcOverlaps(long fromMillis, long toMillis) {
      return overlaps(true, Stop::gc, 0, fromMillis, toMillis);
    }

    /**
     * Whether a safepoint not for GC, of at least {@link #STOP_MIN_MS}, stopped the server during
     * [{@code fromMillis}, {@code toMillis}].
     */
    boolean otherStopOverlaps(long fromMillis, long toMillis) {
      return overlaps(false, s -> !s.gc(), STOP_MIN_MS, fromMillis, toMillis);
    }

    /**
     * Whether any stop of at least {@link #STOP_MIN_MS}, a collection or another safepoint,
     * overlaps [{@code fromMillis}, {@code toMillis}].
     */
    boolean anyStopOverlaps(long fromMillis, long toMillis) {
      return overlaps(true, s -> true, STOP_MIN_MS, fromMillis, toMillis);
    }

    /**
     * Whether a stop of at least {@code minMs} overlaps the interval: a collection's own line (if
     * {@code gcLines}) or a safepoint that {@code which} accepts.
     */
    private boolean overlaps(boolean gcLines, Predicate<Stop> which, double minMs, long fromMillis, long toMillis) {
      if (gcLines && list.stream().anyMatch(p -> p.ms() >= minMs && p.overlaps(fromMillis, toMillis))) return true;
      return stops.stream()
          .anyMatch(s -> which.test(s) && s.pause().ms() >= minMs && s.pause().overlaps(fromMillis, toMillis));
    }
  }

  private final Path file;

  GcLog(Path file) {
    this.file = file;
  }

  /**
   * Starts logging this JVM's collections and safepoints to {@code file}, with {@link
   * #DECORATIONS}, as {@code jcmd PID VM.log} would (the JVM's diagnostic command, through its
   * MBean): the generator's own stops delay the sends and acknowledgements it times, whatever the
   * server does. Logging goes on until the JVM exits.
   *
   * @throws JMException if this JVM has no such command (not HotSpot) or refused it
   */
  static GcLog startInThisJvm(Path file) throws JMException {
    ManagementFactory.getPlatformMBeanServer().invoke(new ObjectName("com.sun.management:type=DiagnosticCommand"),
        "vmLog", new Object[] {new String[] {"output=" + file.toAbsolutePath(), "what=gc,safepoint",
            "decorators=" + DECORATIONS}}, new String[] {String[].class.getName()});
    return new GcLog(file);
  }

  Path file() {
    return file;
  }

  /** The log's length now (0 if it does not exist yet). */
  long position() {
    try {
      return Files.exists(file) ? Files.size(file) : 0;
    } catch (IOException e) {
      return 0;
    }
  }

  /** The pauses logged from byte {@code from} to the end. */
  Pauses pausesSince(long from) throws IOException {
    if (!Files.exists(file)) return new Pauses(List.of(), List.of());
    byte[] bytes;
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
      long start = Math.min(from, f.length());
      bytes = new byte[(int) Math.min(Integer.MAX_VALUE - 16, f.length() - start)];
      f.seek(start);
      f.readFully(bytes);
    }
    return parse(new String(bytes, StandardCharsets.UTF_8));
  }

  /** The pauses of the lines of {@code text}. */
  static Pauses parse(String text) {
    List<Pause> list = new ArrayList<>();
    List<Stop> stops = new ArrayList<>();
    for (String line : text.split("\n")) {
      Matcher sp = SAFEPOINT.matcher(line);
      if (sp.find()) {
        stops.add(new Stop(sp.group(1), Long.parseLong(sp.group(2)) / 1e6,
            new Pause(endMillis(line), Long.parseLong(sp.group(3)) / 1e6)));
        continue;
      }
      Matcher m = PAUSE.matcher(line);
      if (!m.find()) continue;
      list.add(new Pause(endMillis(line), Double.parseDouble(m.group(1))));
    }
    return new Pauses(List.copyOf(list), List.copyOf(stops));
  }

  /** The line's {@code timemillis} decoration (ms since the epoch), or -1. */
  private static long endMillis(String line) {
    Matcher m = WALL_CLOCK.matcher(line);
    return m.find() ? Long.parseLong(m.group(1)) : -1;
  }
}
