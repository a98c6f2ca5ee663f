package io.talos.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GcLogTest {
  private static final String EARLY = """
      [0.012s][info][gc] Using G1
      [1.500s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 24M->4M(256M) 9.000ms
      """;
  private static final String WINDOW = """
      [5.100s][info][gc] GC(1) Pause Young (Normal) (G1 Evacuation Pause) 40M->9M(256M) 2.345ms
      [5.200s][info][gc] GC(2) Pause Young (Concurrent Start) (G1 Humongous Allocation) 60M->10M(256M) 3.500ms
      [5.210s][info][gc] GC(3) Concurrent Mark Cycle
      [5.300s][info][gc] GC(3) Pause Remark 12M->12M(256M) 1.155ms
      [5.400s][info][gc] GC(3) Pause Cleanup 12M->12M(256M) 0.100ms
      [5.500s][info][gc] GC(3) Concurrent Mark Cycle 290.123ms
      """;

  @Test
  void shouldCountOnlyThePausesLoggedAfterThePosition(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("gc.log");
    GcLog log = new GcLog(file);
    assertEquals(0, log.position(), "no log yet");
    Files.writeString(file, EARLY);
    long from = log.position();
    Files.writeString(file, EARLY + WINDOW);

    GcLog.Pauses p = log.pausesSince(from);

    assertEquals(4, p.count(), "young, young, remark, cleanup; the concurrent cycle is not a pause");
    assertEquals(3.5, p.maxMs(), 1e-9);
    assertEquals(2.345 + 3.5 + 1.155 + 0.1, p.totalMs(), 1e-9);
    assertEquals(5, log.pausesSince(0).count());
  }

  @Test
  void shouldSayWhenThereWasNoPause() {
    assertEquals("no GC pause", GcLog.parse("[1.0s][info][gc] Using G1\n").describe());
  }
}
