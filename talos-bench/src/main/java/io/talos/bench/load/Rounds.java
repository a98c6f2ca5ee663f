package io.talos.bench.load;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * Figures measured in several rounds, each system on a fresh server per round with the order
 * alternating: a row shows each system's median over the rounds with its range, and the median of
 * the rounds' ratios with their range. On this kind of machine identical runs differ by up to 2x
 * (the VM hands memory freed a while ago back to its host, so whichever server writes into page
 * cache right after another one deleted its data runs faster), so one round, or a fixed order,
 * cannot settle a ratio.
 */
final class Rounds {
  private Rounds() {}

  /** Whether Kafka goes first in round {@code round} (1-based): in even rounds, when Kafka runs at all. */
  static boolean kafkaFirst(BenchContext ctx, int round) {
    return ctx.kafka && round % 2 == 0;
  }

  /** The text that says how several rounds are run, for a report. */
  static String describe(int rounds) {
    return String.format(Locale.ROOT, "%d rounds, each system on a fresh server per round, the order"
        + " alternating (Talos first in odd rounds, Kafka first in even ones): each figure is the median of"
        + " the rounds, and each ratio the median of the rounds' ratios with their lowest and highest in"
        + " brackets (identical runs on one machine have differed by up to 2x).", rounds);
  }

  /** Figure {@code index} of every round. */
  static <F> double[] figures(List<List<F>> rounds, int index, ToDoubleFunction<F> figure) {
    return rounds.stream().mapToDouble(r -> figure.applyAsDouble(r.get(index))).toArray();
  }

  /**
   * One row: Talos's median (range), and when Kafka ran ({@code kafka} not empty, one value per
   * round like {@code talos}) Kafka's and the median (range) of the rounds' ratios.
   *
   * @param count records (a count) rather than bytes per second
   */
  static void row(Table t, String name, double[] talos, double[] kafka, boolean count) {
    String fa = format(median(talos), count) + spread(talos, count);
    if (kafka.length == 0) {
      t.row(name, fa);
      return;
    }
    double[] ratios = new double[talos.length];
    for (int i = 0; i < talos.length; i++) ratios[i] = kafka[i] == 0 ? Double.NaN : talos[i] / kafka[i];
    String ratio = talos.length == 1 ? Table.ratio(talos[0], kafka[0])
        : String.format(Locale.ROOT, "%.2f (%.2f-%.2f)", median(ratios), min(ratios), max(ratios));
    t.row(name, fa, format(median(kafka), count) + spread(kafka, count), ratio);
  }

  static double median(double[] v) {
    double[] s = v.clone();
    Arrays.sort(s);
    return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  }

  private static String format(double v, boolean count) {
    return count ? Table.count(v) : Table.mbps(v);
  }

  private static String spread(double[] v, boolean count) {
    return v.length == 1 ? "" : " (" + format(min(v), count) + "-" + format(max(v), count) + ")";
  }

  private static double min(double[] v) {
    return Arrays.stream(v).min().orElse(Double.NaN);
  }

  private static double max(double[] v) {
    return Arrays.stream(v).max().orElse(Double.NaN);
  }
}
