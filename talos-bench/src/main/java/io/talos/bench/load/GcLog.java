package io.talos.bench.load;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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
 *
 * <p>Not thread-safe.
 */
final class GcLog {
  private static final Pattern PAUSE = Pattern.compile("\\bPause .* ([0-9]+(?:\\.[0-9]+)?)ms\\s*$");

  /** Pauses in a part of the log. */
  record Pauses(int count, double maxMs, double totalMs) {
    String describe() {
      return count == 0 ? "no GC pause"
          : String.format(java.util.Locale.ROOT, "%d GC pauses, longest %.1f ms, %.1f ms in all", count, maxMs, totalMs);
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
    if (!Files.exists(file)) return new Pauses(0, 0, 0);
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
    int count = 0;
    double max = 0;
    double total = 0;
    for (String line : text.split("\n")) {
      Matcher m = PAUSE.matcher(line);
      if (!m.find()) continue;
      double ms = Double.parseDouble(m.group(1));
      count++;
      max = Math.max(max, ms);
      total += ms;
    }
    return new Pauses(count, max, total);
  }
}
