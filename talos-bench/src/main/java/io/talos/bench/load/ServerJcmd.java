package io.talos.bench.load;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What {@code jcmd} tells about the server JVM's memory: the native memory tracking summary
 * (committed bytes per category; the server must run with {@code -XX:NativeMemoryTracking=summary})
 * and the class histogram of the heap (which forces a full GC, so only between measurements).
 * Each answer is also kept verbatim in a file for whoever reads the run afterwards.
 */
final class ServerJcmd {
  private static final Pattern NMT_CATEGORY =
      Pattern.compile("^-\\s+(.+?) \\(reserved=(\\d+)KB, committed=(\\d+)KB\\)");
  private static final Pattern NMT_TOTAL = Pattern.compile("^Total: reserved=(\\d+)KB, committed=(\\d+)KB");
  private static final Pattern HISTO_ROW = Pattern.compile("^\\s*\\d+:\\s+(\\d+)\\s+(\\d+)\\s+(\\S+)");

  /** One row of the class histogram. */
  record ClassBytes(String className, long instances, long bytes) {}

  private final long pid;

  ServerJcmd(long pid) {
    this.pid = pid;
  }

  /**
   * Committed KiB per native memory category, "Total" first, in jcmd's order; empty when the JVM
   * does not track native memory.
   */
  Map<String, Long> nativeMemoryCommittedKb(Path saveTo) throws IOException, InterruptedException {
    return parseNativeMemory(run(saveTo, "VM.native_memory", "summary"));
  }

  /** Committed KiB per category of a {@code VM.native_memory summary} answer, "Total" first. */
  static Map<String, Long> parseNativeMemory(String out) {
    Map<String, Long> committed = new LinkedHashMap<>();
    for (String line : out.split("\n")) {
      Matcher t = NMT_TOTAL.matcher(line.trim());
      if (t.find()) {
        committed.put("Total", Long.parseLong(t.group(2)));
        continue;
      }
      Matcher m = NMT_CATEGORY.matcher(line.trim());
      if (m.find()) committed.put(m.group(1).trim(), Long.parseLong(m.group(3)));
    }
    return committed;
  }

  /** The {@code top} classes with the most bytes on the heap (after the full GC the command forces). */
  List<ClassBytes> classHistogram(Path saveTo, int top) throws IOException, InterruptedException {
    return parseHistogram(run(saveTo, "GC.class_histogram"), top);
  }

  /** The first {@code top} rows of a {@code GC.class_histogram} answer (jcmd sorts them by bytes). */
  static List<ClassBytes> parseHistogram(String out, int top) {
    List<ClassBytes> rows = new ArrayList<>();
    for (String line : out.split("\n")) {
      Matcher m = HISTO_ROW.matcher(line);
      if (m.find() && rows.size() < top) {
        rows.add(new ClassBytes(m.group(3), Long.parseLong(m.group(1)), Long.parseLong(m.group(2))));
      }
    }
    return rows;
  }

  private String run(Path saveTo, String... command) throws IOException, InterruptedException {
    Path jcmdBin = Path.of(System.getProperty("java.home"), "bin", "jcmd");
    List<String> cmd = new ArrayList<>();
    cmd.add(Files.isExecutable(jcmdBin) ? jcmdBin.toString() : "jcmd");
    cmd.add(Long.toString(pid));
    cmd.addAll(List.of(command));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    byte[] bytes = p.getInputStream().readAllBytes();
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IOException("jcmd " + String.join(" ", command) + " did not finish in 120 s");
    }
    String out = new String(bytes, StandardCharsets.UTF_8);
    if (saveTo != null) {
      Files.createDirectories(saveTo.getParent());
      Files.writeString(saveTo, out, StandardCharsets.UTF_8);
    }
    if (p.exitValue() != 0) {
      throw new IOException("jcmd " + String.join(" ", command) + " failed (exit " + p.exitValue() + "): " + out.strip());
    }
    return out;
  }
}
