package io.talos.bench.reliability;

import java.io.PrintStream;
import java.time.LocalTime;
import java.time.temporal.ChronoUnit;

/** Progress lines on stderr (the report goes to stdout). Thread-safe. */
final class Progress {
  private final PrintStream out;

  Progress(PrintStream out) {
    this.out = out;
  }

  /** The stream the notes go to (for code that prints its own progress lines). */
  PrintStream out() {
    return out;
  }

  synchronized void note(String line) {
    out.println("[" + LocalTime.now().truncatedTo(ChronoUnit.SECONDS) + "] " + line);
  }
}
