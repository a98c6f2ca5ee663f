package io.talos.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class TableTest {
  @Test
  void shouldRenderMarkdownWithRightAlignedNumberColumns() {
    Table t = new Table("Scenario X", "figure", "Talos", "Kafka").row("P99 ms", "1.23", "2.46");
    assertEquals("**Scenario X**\n\n| figure | Talos | Kafka |\n|---|---:|---:|\n| P99 ms | 1.23 | 2.46 |\n",
        t.toMarkdown());
  }

  @Test
  void shouldRejectARowOfTheWrongWidth() {
    Table t = new Table("", "a", "b");
    assertThrows(IllegalArgumentException.class, () -> t.row("only one"));
  }

  @Test
  void shouldFormatNumbersTheSameWayEverywhere() {
    assertEquals("12,346", Table.count(12_345.6));
    assertEquals("0.412", Table.ms(412_000));
    assertEquals("2.35", Table.ms(2_350_000));
    assertEquals("17.0", Table.ms(17_000_000));
    assertEquals("250", Table.ms(250_000_000));
    assertEquals("3.68", Table.mbps(3_680_000));
    assertEquals("0.50", Table.ratio(1, 2));
    assertEquals("n/a", Table.ratio(1, 0));
  }
}
