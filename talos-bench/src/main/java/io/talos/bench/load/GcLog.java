package io.talos.bench.load;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The server's GC log ({@code -Xlog:gc}, unified logging, one line per collection): the
 * stop-the-world pauses written after a given position of the file, so that a scenario can count
 * those of its measurement window only (note {@link #position()} when the window starts).
 *
 * <p>A pause line ends with its duration, e.g. {@code [12.3s][info][gc] GC(7) Pause Young (Normal)
 * (G1 Evacuation Pause) 40M->9M(64M) 2.345ms}; G1's concurrent cycle lines ({@code Concurrent Mark
 * Cycle}) are not pauses and are not counted, its {@code Pause Remark} and {@code Pause Cleanup} are.
 * A line decorated with {@code timemillis} ({@code [12.3s][1764320554567ms][info][gc] ...}: the wall
 * clock in ms since the epoch when the pause ended) also says when the pause happened, so that a scenario can tell which
 * of its late requests waited for one.
 *
 * <p>Not thread-safe.
 */
final class GcLog {
  /** The decorations a server's GC log is written with ({@code -Xlog:gc:file=F:DECORATIONS}). */
  static final String DECORATIONS = "timemillis,uptime,level,tags";
  private static final Pattern PAUSE = Pattern.compile("\\bPause .* ([0-9]+(?:\\.[0-9]+)?)ms\\s*$");
  private static final Pattern WALL_CLOCK = Pattern.compile("^(?:\\[[^\\]]*\\])*?\\[(\\d{1,18})ms\\]");

  /**
   * One pause: when it ended (ms since the epoch, -1 when the line has no wall clock) and how long
   * it took.
   */
  record Pause(long endMillis, double ms) {
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

  /** Pauses in a part of the log. */
  record Pauses(int count, double maxMs, double totalMs, List<Pause> list) {
    String describe() {
      return count == 0 ? "no GC pause"
          : String.format(java.util.Locale.ROOT, "%d GC pauses, longest %.1f ms, %.1f ms in all", count, maxMs, totalMs);
    }

    /** Whether every pause says when it happened. */
    boolean timed() {
      return list.stream().allMatch(p -> p.endMillis() >= 0);
    }

    /** Whether a pause overlaps [{@code fromMillis}, {@code toMillis}]. */
    boolean anyOverlaps(long fromMillis, long toMillis) {
      for (Pause p : list) {
        if (p.overlaps(fromMillis, toMillis)) return true;
      }
      return false;
    }
  }

  private final Path file;

  GcLog(Path file) {
    this.file = file;
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
    if (!Files.exists(file)) return new Pauses(0, 0, 0, List.of());
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
    double max = 0;
    double total = 0;
    List<Pause> list = new ArrayList<>();
    for (String line : text.split("\n")) {
      Matcher m = PAUSE.matcher(line);
      if (!m.find()) continue;
      double ms = Double.parseDouble(m.group(1));
      list.add(new Pause(endMillis(line), ms));
      max = Math.max(max, ms);
      total += ms;
    }
    return new Pauses(list.size(), max, total, List.copyOf(list));
  }

  /** The line's {@code timemillis} decoration (ms since the epoch), or -1. */
  private static long endMillis(String line) {
    Matcher m = WALL_CLOCK.matcher(line);
    return m.find() ? Long.parseLong(m.group(1)) : -1;
  }
}
