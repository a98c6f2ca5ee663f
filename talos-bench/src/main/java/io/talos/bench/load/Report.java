package io.talos.bench.load;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;

/**
 * The results of one invocation: markdown printed to stdout as it is produced and rewritten to
 * {@code <out>/results-<UTC time>.md} (and {@code <out>/latest.md}) after every table, so a run cut
 * short still leaves what it measured.
 */
final class Report {
  private final PrintStream out;
  private final Path file;
  private final Path latest;
  private final StringBuilder markdown = new StringBuilder();
  private final List<Object[]> memoryRows = new ArrayList<>();

  Report(Path outDir, PrintStream out) throws IOException {
    this.out = out;
    Files.createDirectories(outDir);
    String stamp = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss").withZone(ZoneOffset.UTC).format(Instant.now());
    this.file = outDir.resolve("results-" + stamp + ".md");
    this.latest = outDir.resolve("latest.md");
  }

  Path file() {
    return file;
  }

  void heading(String text) {
    append("\n#### " + text + "\n\n");
  }

  void text(String text) {
    append(text + "\n\n");
  }

  void table(Table table) {
    append(table.toMarkdown() + "\n");
  }

  /** Remembers a process's memory in a scenario, for {@link #memoryTable}. */
  void memory(String scenario, String system, MemorySampler.Memory m) {
    if (m == null) return; // a remote server: not measured
    memoryRows.add(new Object[] {scenario, system, m.rssMiB(), m.hwmMiB(), m.heapUsedMiB(), m.heapCommittedMiB()});
  }

  Table memoryTable() {
    Table t = new Table("Server memory per scenario (MiB; RSS sampled every 200 ms, heap by jstat every 500 ms)",
        "scenario", "server", "peak RSS", "VmHWM", "peak heap used", "peak heap committed");
    for (Object[] r : memoryRows) t.row(r);
    return t;
  }

  String markdown() {
    return markdown.toString();
  }

  private void append(String s) {
    markdown.append(s);
    out.print(s);
    out.flush();
    try {
      Files.writeString(file, markdown, StandardCharsets.UTF_8);
      Files.writeString(latest, markdown, StandardCharsets.UTF_8);
    } catch (IOException e) {
      out.println("(cannot write " + file + ": " + e.getMessage() + ")");
    }
  }
}
