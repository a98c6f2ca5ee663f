package io.talos.bench.load;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A result table rendered as GitHub markdown, numbers right-aligned. Cells are strings; use the
 * static formatters for numbers so that every table prints them the same way.
 */
final class Table {
  private final String title;
  private final List<String> header;
  private final List<List<String>> rows = new ArrayList<>();

  Table(String title, String... header) {
    this.title = title;
    this.header = List.of(header);
  }

  Table row(Object... cells) {
    if (cells.length != header.size()) {
      throw new IllegalArgumentException("row has " + cells.length + " cells, header " + header.size());
    }
    List<String> r = new ArrayList<>();
    for (Object c : cells) r.add(String.valueOf(c));
    rows.add(r);
    return this;
  }

  int rowCount() {
    return rows.size();
  }

  String title() {
    return title;
  }

  /** Markdown: a bold title line, then the table; columns after the first right-aligned. */
  String toMarkdown() {
    StringBuilder sb = new StringBuilder();
    if (title != null && !title.isEmpty()) sb.append("**").append(title).append("**\n\n");
    sb.append('|');
    for (String h : header) sb.append(' ').append(h).append(" |");
    sb.append("\n|");
    for (int i = 0; i < header.size(); i++) sb.append(i == 0 ? "---|" : "---:|");
    sb.append('\n');
    for (List<String> r : rows) {
      sb.append('|');
      for (String c : r) sb.append(' ').append(c).append(" |");
      sb.append('\n');
    }
    return sb.toString();
  }

  /** An integer with thousands separators: 12,345. */
  static String count(double v) {
    return String.format(Locale.ROOT, "%,d", Math.round(v));
  }

  /** Milliseconds from nanoseconds, 3 significant digits below 10 ms: 0.412, 2.35, 17. */
  static String ms(double nanos) {
    double ms = nanos / 1e6;
    if (ms < 1) return String.format(Locale.ROOT, "%.3f", ms);
    if (ms < 10) return String.format(Locale.ROOT, "%.2f", ms);
    if (ms < 100) return String.format(Locale.ROOT, "%.1f", ms);
    return String.format(Locale.ROOT, "%.0f", ms);
  }

  /** MB/s (10^6 bytes) with 2 decimals below 10, else 1. */
  static String mbps(double bytesPerSecond) {
    double mb = bytesPerSecond / 1e6;
    return String.format(Locale.ROOT, mb < 10 ? "%.2f" : "%.1f", mb);
  }

  /** A ratio a/b with 2 decimals, or n/a. */
  static String ratio(double a, double b) {
    if (b == 0 || Double.isNaN(a) || Double.isNaN(b)) return "n/a";
    return String.format(Locale.ROOT, "%.2f", a / b);
  }
}
