package io.talos.client.cli;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * Tabular output of the CLI: a header line, then one line per row, either tab-separated (for
 * {@code cut} and {@code awk}) or aligned by a printf format (for people). Rows are printed as
 * they come, so a long listing streams. Not thread-safe.
 */
final class Table {
  private final PrintStream out;
  private final String format;

  private Table(PrintStream out, String format) {
    this.out = out;
    this.format = format;
  }

  /** Cells separated by one tab; prints the header now. */
  static Table tabSeparated(PrintStream out, String... header) {
    Table t = new Table(out, null);
    t.row((Object[]) header);
    return t;
  }

  /**
   * Cells laid out by {@code format}, one {@code %s} conversion per column (numbers print as with
   * {@code %d}); prints the header now.
   */
  static Table aligned(PrintStream out, String format, String... header) {
    Table t = new Table(out, format);
    t.row((Object[]) header);
    return t;
  }

  Table row(Object... cells) {
    if (format == null) {
      out.println(Arrays.stream(cells).map(String::valueOf).collect(Collectors.joining("\t")));
    } else {
      out.printf(format + "%n", cells);
    }
    return this;
  }
}
