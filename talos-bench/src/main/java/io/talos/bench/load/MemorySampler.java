package io.talos.bench.load;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Memory of another JVM: resident set from {@code /proc/<pid>/status} (VmRSS sampled every
 * 200 ms, VmHWM the kernel's own high-water mark) and heap from one long-running
 * {@code jstat -gc <pid> 500} (used = S0U+S1U+EU+OU, committed = S0C+S1C+EC+OC). Peaks are kept
 * since the last {@link #resetPeaks}. Reading jstat's output costs the measured JVM nothing
 * (jstat reads its perf-data file).
 *
 * <p>jstat is a JVM of its own, running beside what it measures for the whole run: with its
 * default JIT, a C2 compilation of its sampling code held a core for 16-75 ms in the middle of a
 * latency window, on a machine whose other core was busy, and the generator's threads waited for
 * it (traced). So it runs with the interpreter's quick compiler only ({@link #JSTAT_JVM_OPTIONS}),
 * a small serial heap, and, where {@code nice} exists, at the lowest CPU priority.
 */
final class MemorySampler implements AutoCloseable {
  /** jstat's own JVM: C1 only, one compiler thread, a small serial heap. */
  static final List<String> JSTAT_JVM_OPTIONS = List.of("-J-XX:TieredStopAtLevel=1", "-J-XX:CICompilerCount=1",
      "-J-XX:+UseSerialGC", "-J-Xmx32m");
  private static final Path NICE = Path.of("/usr/bin/nice");

  private final long pid;
  private final ScheduledExecutorService timer;
  private volatile Process jstat;
  private volatile long peakRssKb;
  private volatile long peakHeapUsedKb = -1;
  private volatile long peakHeapCommittedKb = -1;

  MemorySampler(long pid) {
    this.pid = pid;
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "memory-sampler-" + pid);
      t.setDaemon(true);
      return t;
    });
    timer.scheduleAtFixedRate(this::sampleRss, 0, 200, TimeUnit.MILLISECONDS);
    timer.schedule(this::startJstat, 2, TimeUnit.SECONDS);
  }

  /** A snapshot: peaks since the last reset, plus the kernel's high-water mark since start. */
  record Memory(long peakRssKb, long hwmKb, long peakHeapUsedKb, long peakHeapCommittedKb) {
    String rssMiB() {
      return mib(peakRssKb);
    }

    String hwmMiB() {
      return mib(hwmKb);
    }

    String heapUsedMiB() {
      return mib(peakHeapUsedKb);
    }

    String heapCommittedMiB() {
      return mib(peakHeapCommittedKb);
    }

    private static String mib(long kb) {
      return kb < 0 ? "n/a" : String.valueOf(Math.round(kb / 1024.0));
    }
  }

  synchronized void resetPeaks() {
    peakRssKb = 0;
    peakHeapUsedKb = peakHeapUsedKb < 0 ? -1 : 0;
    peakHeapCommittedKb = peakHeapCommittedKb < 0 ? -1 : 0;
    sampleRss();
  }

  Memory snapshot() {
    sampleRss();
    return new Memory(peakRssKb, statusKb("VmHWM:"), peakHeapUsedKb, peakHeapCommittedKb);
  }

  /** The process's thread count now (Threads: of /proc/<pid>/status), -1 once it has exited. */
  long threads() {
    return statusKb("Threads:");
  }

  private void sampleRss() {
    long rss = statusKb("VmRSS:");
    synchronized (this) {
      if (rss > peakRssKb) peakRssKb = rss;
    }
  }

  private long statusKb(String field) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
        if (line.startsWith(field)) {
          return Long.parseLong(line.substring(field.length()).trim().split("\\s+")[0]);
        }
      }
    } catch (IOException | RuntimeException e) {
      // the process has exited, or no /proc: keep what we have
    }
    return -1;
  }

  /** The jstat command sampling {@code pid} every 500 ms, quiet as above. */
  static List<String> jstatCommand(long pid) {
    Path jstatBin = Path.of(System.getProperty("java.home"), "bin", "jstat");
    List<String> cmd = new ArrayList<>();
    if (Files.isExecutable(NICE)) cmd.addAll(List.of(NICE.toString(), "-n", "19"));
    cmd.add(Files.isExecutable(jstatBin) ? jstatBin.toString() : "jstat");
    cmd.addAll(JSTAT_JVM_OPTIONS);
    cmd.addAll(List.of("-gc", Long.toString(pid), "500"));
    return cmd;
  }

  private void startJstat() {
    try {
      Process p = new ProcessBuilder(jstatCommand(pid)).redirectErrorStream(true).start();
      jstat = p;
      Thread reader = new Thread(() -> readJstat(p), "jstat-reader-" + pid);
      reader.setDaemon(true);
      reader.start();
    } catch (IOException e) {
      // no jstat: heap stays n/a
    }
  }

  private void readJstat(Process p) {
    try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
        StandardCharsets.UTF_8))) {
      String[] header = null;
      String line;
      while ((line = r.readLine()) != null) {
        String[] f = line.trim().split("\\s+");
        if (f.length > 0 && f[0].equals("S0C")) {
          header = f;
          continue;
        }
        if (header == null || f.length != header.length) continue;
        double used = 0;
        double committed = 0;
        for (int i = 0; i < header.length; i++) {
          switch (header[i]) {
            case "S0U", "S1U", "EU", "OU" -> used += Double.parseDouble(f[i]);
            case "S0C", "S1C", "EC", "OC" -> committed += Double.parseDouble(f[i]);
            default -> { }
          }
        }
        synchronized (this) {
          peakHeapUsedKb = Math.max(peakHeapUsedKb, (long) used);
          peakHeapCommittedKb = Math.max(peakHeapCommittedKb, (long) committed);
        }
      }
    } catch (IOException | RuntimeException e) {
      // jstat ended
    }
  }

  /** The running jstat, or null (not started yet, or no jstat). */
  Process jstatProcess() {
    return jstat;
  }

  @Override
  public void close() {
    timer.shutdownNow();
    Process p = jstat;
    if (p != null) p.destroy();
  }
}
