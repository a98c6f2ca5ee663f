package io.talos.bench.load;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class RoundsTest {
  @Test
  void shouldTakeTheMiddleValueOrTheMeanOfTheTwoMiddleOnes() {
    assertEquals(2.0, Rounds.median(new double[] {3, 1, 2}));
    assertEquals(2.5, Rounds.median(new double[] {4, 1, 2, 3}));
    assertEquals(7.0, Rounds.median(new double[] {7}));
  }

  @Test
  void shouldShowMediansWithRangesAndTheMedianOfThePerRoundRatios() {
    Table t = new Table("", "figure", "Talos", "Kafka", "Talos/Kafka");
    // per-round ratios 2.0, 1.0, 4.0: their median is 2.00, not median(Talos)/median(Kafka) = 1.5
    Rounds.row(t, "produce", new double[] {200, 300, 400}, new double[] {100, 300, 100}, true);
    assertTrue(t.toMarkdown().contains("| produce | 300 (200-400) | 100 (100-300) | 2.00 (1.00-4.00) |"),
        t.toMarkdown());
  }

  @Test
  void shouldShowOneRoundAsPlainFiguresAndTalosAloneWithoutKafka() {
    Table one = new Table("", "figure", "Talos", "Kafka", "Talos/Kafka");
    Rounds.row(one, "produce", new double[] {3_000_000}, new double[] {2_000_000}, false);
    assertTrue(one.toMarkdown().contains("| produce | 3.00 | 2.00 | 1.50 |"), one.toMarkdown());
    Table alone = new Table("", "figure", "Talos");
    Rounds.row(alone, "produce", new double[] {5, 7}, new double[0], true);
    assertTrue(alone.toMarkdown().contains("| produce | 6 (5-7) |"), alone.toMarkdown());
  }

  @Test
  void shouldPickEachRoundsFigure() {
    List<List<Double>> rounds = List.of(List.of(1.0, 10.0), List.of(2.0, 20.0));
    assertArrayEquals(new double[] {10, 20}, Rounds.figures(rounds, 1, r -> r));
  }
}
