package io.talos.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
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

  @Test
  void shouldPlaceAPauseOnTheWallClockWhenTheLineSaysWhen() {
    GcLog.Pauses p = GcLog.parse("""
        [12.000s][1764320400000ms][info][gc] Using G1
        [13.050s][1764320401050ms][info][gc       ] GC(4) Pause Young (Normal) (G1 Evacuation Pause) 331M->29M(512M) 19.600ms
        [13.050s][1764320401050ms][info][safepoint] Safepoint "G1CollectForAllocation", Time since last: 11251383339 ns, \
        Reaching safepoint: 5143278 ns, Cleanup: 2116 ns, At safepoint: 19712345 ns, Total: 24857739 ns
        [14.000s][1764320402000ms][info][safepoint] Safepoint "Cleanup", Time since last: 949000000 ns, \
        Reaching safepoint: 3000000 ns, Cleanup: 69189 ns, At safepoint: 10991 ns, Total: 3080180 ns
        """);
    long end = 1764320401050L;

    assertEquals(1, p.count());
    assertTrue(p.timed());
    assertEquals(end, p.list().get(0).endMillis());
    assertEquals(2, p.stops().size());
    assertEquals(5.143278, p.stops().get(0).reachingMs(), 1e-9);
    assertTrue(p.stops().get(0).gc());
    assertFalse(p.stops().get(1).gc());
    assertTrue(p.gcOverlaps(end - 24, end - 22), "acknowledged while the threads were being stopped for it");
    assertTrue(p.otherStopOverlaps(end + 948, end + 960), "the cleanup safepoint");
    assertFalse(p.otherStopOverlaps(end - 30, end), "a GC is not another stop");
    assertTrue(p.gcOverlaps(end - 30, end - 15), "sent before the pause, acknowledged during it");
    assertTrue(p.gcOverlaps(end - 5, end + 20), "sent during the pause");
    assertFalse(p.gcOverlaps(end - 60, end - 26), "acknowledged before the stop began (25 ms before its end)");
    assertFalse(p.gcOverlaps(end + 1, end + 40), "sent after it ended");
    assertFalse(GcLog.parse(WINDOW).timed(), "uptime alone does not say when");
  }

  /** A JVM logging as the benchmark's server does collects once; its log says when. */
  @Test
  void shouldReadWhenAPauseEndedFromARealJvmLog() throws Exception {
    String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    long before = System.currentTimeMillis();
    Process p = new ProcessBuilder(javaBin, "-Xmx32m", "-XX:+UseG1GC", "-Xlog:gc,safepoint:stdout:" + GcLog.DECORATIONS,
        "-cp", System.getProperty("java.class.path"), Collect.class.getName()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.waitFor(), out);
    long after = System.currentTimeMillis();

    GcLog.Pauses pauses = GcLog.parse(out);

    assertTrue(pauses.count() >= 1, out);
    assertTrue(pauses.timed(), out);
    for (GcLog.Pause pause : pauses.list()) {
      assertTrue(pause.endMillis() >= before && pause.endMillis() <= after, out);
    }
    assertTrue(pauses.stops().stream().anyMatch(GcLog.Stop::gc), "the collection's safepoint: " + out);
  }

  @Test
  void shouldStartTheLogOfItsOwnJvm(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("own-gc.log");
    String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    long before = System.currentTimeMillis();
    // a JVM started without -Xlog, which turns its own log on
    Process p = new ProcessBuilder(javaBin, "-Xmx256m", "-XX:+UseG1GC", "-cp", System.getProperty("java.class.path"),
        LogItself.class.getName(), file.toString()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.waitFor(), out);
    long after = System.currentTimeMillis();

    GcLog.Pauses pauses = new GcLog(file).pausesSince(0);

    String log = Files.readString(file);
    assertTrue(log.contains("Pause Full (System.gc())"), log);
    assertTrue(pauses.count() >= 1, log);
    assertTrue(pauses.timed(), log);
    for (GcLog.Pause pause : pauses.list()) {
      assertTrue(pause.endMillis() >= before && pause.endMillis() <= after, log);
      assertTrue(pauses.anyStopOverlaps(pause.endMillis(), pause.endMillis()), log);
    }
  }

  /** Main class of the JVM above. */
  static final class Collect {
    public static void main(String[] args) {
      System.gc();
    }
  }

  /** Main class of the JVM above: logs its own stops to the file it is given, then collects once. */
  static final class LogItself {
    public static void main(String[] args) throws Exception {
      GcLog.startInThisJvm(Path.of(args[0]));
      System.gc();
    }
  }
}
