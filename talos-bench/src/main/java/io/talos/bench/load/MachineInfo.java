package io.talos.bench.load;

import io.talos.server.storage.DataDirMount;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * One line about the machine a run measured: CPU model and count, memory, OS, JDK, and the file
 * system the servers' data is on (its options change how long an append can wait).
 */
final class MachineInfo {
  private MachineInfo() {}

  /** @param dataDir where the servers this run starts keep their data; null when it starts none */
  static String describe(Path dataDir) {
    String cpu = "unknown CPU";
    long memKb = -1;
    try {
      for (String l : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
        if (l.startsWith("model name")) {
          cpu = l.substring(l.indexOf(':') + 1).trim();
          break;
        }
      }
      for (String l : Files.readAllLines(Path.of("/proc/meminfo"))) {
        if (l.startsWith("MemTotal:")) memKb = Long.parseLong(l.replaceAll("\\D+", ""));
      }
    } catch (IOException | RuntimeException e) {
      // not Linux: keep the defaults
    }
    return String.format(Locale.ROOT, "Machine: %d cores (%s), %s GiB RAM, %s %s, JDK %s; everything on loopback"
        + " on this one machine (servers, clients, load generator), shared with other work: numbers are noisy,"
        + " compare ratios measured in the same run.%s", Runtime.getRuntime().availableProcessors(), cpu,
        memKb < 0 ? "?" : String.valueOf(Math.round(memKb / 1048576.0)), System.getProperty("os.name"),
        System.getProperty("os.version"), System.getProperty("java.version"),
        dataDir == null ? "" : " Servers' data on " + mount(dataDir) + ".");
  }

  /** E.g. {@code ext4 /dev/vda mounted at / (discard, relatime, rw)}, the options sorted. */
  private static String mount(Path dataDir) {
    return DataDirMount.of(dataDir)
        .map(m -> m.fsType() + " " + m.source() + " mounted at " + m.mountPoint() + " ("
            + String.join(", ", new java.util.TreeSet<>(m.options())) + ")")
        .orElse("a file system this OS does not describe");
  }
}
