package io.talos.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.talos.bench.load.LatencyScenario.LatePuts.Attribution;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LatePutsTest {
  @Test
  void shouldCountTheLatePutsInFlightDuringAPause() {
    long wall = 1_000_000L;
    long nano = 5_000_000_000L;
    LatencyScenario.LatePuts late = new LatencyScenario.LatePuts(wall, nano);
    // a pause of 10 ms that ended 100 ms after the origin
    // and a safepoint of 3 ms, not for GC, that ended 200 ms after it; and one of 0.2 ms at 300 ms
    GcLog.Pauses p = new GcLog.Pauses(List.of(new GcLog.Pause(wall + 100, 10)),
        List.of(new GcLog.Stop("G1CollectForAllocation", 0.1, new GcLog.Pause(wall + 100, 10.1)),
            new GcLog.Stop("HandshakeAllThreads", 2.5, new GcLog.Pause(wall + 200, 3)),
            new GcLog.Stop("Cleanup", 0.1, new GcLog.Pause(wall + 300, 0.2))));
    late.add(nano + 85_000_000L, nano + 110_000_000L); // waited through the GC
    late.add(nano + 95_000_000L, nano + 120_000_000L); // sent during it
    late.add(nano + 40_000_000L, nano + 65_000_000L); // before
    late.add(nano + 180_000_000L, nano + 205_000_000L); // through the other stop
    late.add(nano + 290_000_000L, nano + 315_000_000L); // through a stop too short to count

    assertEquals(new Attribution(2, 1, -1, -1, -1), attribution(late, p, null, null, null));
    // the generator's JVM stopped 4 ms for a collection ending at 310 ms (the last put), 2 ms for a
    // safepoint ending at 60 ms (the put before the server's GC) and 2 ms ending at 105 ms (the two
    // puts through the server's GC, which count for the server only); 0.3 ms at 200 ms is too short
    GcLog.Pauses generator = new GcLog.Pauses(List.of(new GcLog.Pause(wall + 310, 4)),
        List.of(new GcLog.Stop("G1CollectForAllocation", 0.1, new GcLog.Pause(wall + 310, 4.2)),
            new GcLog.Stop("Deoptimize", 1.5, new GcLog.Pause(wall + 60, 2)),
            new GcLog.Stop("HandshakeAllThreads", 1.5, new GcLog.Pause(wall + 105, 2)),
            new GcLog.Stop("Cleanup", 0.1, new GcLog.Pause(wall + 200, 0.3))));
    assertEquals(new Attribution(2, 1, 2, -1, -1), attribution(late, p, generator, null, null));
    // without the server's log (Kafka's broker), only the generator's stops are known
    assertEquals(new Attribution(-1, -1, 4, -1, -1), attribution(late, null, generator, null, null));
    // a server log without safepoint lines knows its GCs only
    GcLog.Pauses gcOnly = new GcLog.Pauses(p.list(), List.of());
    assertEquals(new Attribution(2, -1, 2, -1, -1), attribution(late, gcOnly, generator, null, null));
  }

  @Test
  void shouldCountTheOthersInFlightWhileTheHostHeldACpu() throws Exception {
    long wall = 1_000_000L;
    long nano = 5_000_000_000L;
    LatencyScenario.LatePuts late = new LatencyScenario.LatePuts(wall, nano);
    late.add(nano + 85_000_000L, nano + 110_000_000L); // through the server's GC, and through the hold
    late.add(nano + 150_000_000L, nano + 190_000_000L); // through the hold only
    late.add(nano + 400_000_000L, nano + 425_000_000L); // through nothing known
    GcLog.Pauses server = new GcLog.Pauses(List.of(new GcLog.Pause(wall + 100, 10)),
        List.of(new GcLog.Stop("G1CollectForAllocation", 0.1, new GcLog.Pause(wall + 100, 10.1))));
    // CPU 1 held 100 ms, seen by the sample at 200 ms
    long[] steal = {0, 0};
    java.util.concurrent.atomic.AtomicLong now = new java.util.concurrent.atomic.AtomicLong(nano + 190_000_000L);
    StealMeter meter = new StealMeter(steal::clone, now::get, now::addAndGet, null);
    steal[1] += 100;
    meter.step();
    meter.close();

    assertEquals(new Attribution(1, 0, -1, 1, -1), attribution(late, server, null, meter, null));
    assertEquals(List.of(LatencyScenario.LatePuts.Cause.SERVER_GC, LatencyScenario.LatePuts.Cause.HOST_HOLD,
        LatencyScenario.LatePuts.Cause.NONE), List.of(late.causes(server, null, meter, null)));
    StealMeter none = new StealMeter(() -> null, now::get, now::addAndGet, null);
    none.close();
    assertEquals(new Attribution(1, 0, -1, -1, -1), attribution(late, server, null, none, null),
        "no steal counters: not known");
  }

  @Test
  void shouldCountTheOthersInFlightWhileACpuStoodStill() throws Exception {
    long nano = 5_000_000_000L;
    LatencyScenario.LatePuts late = new LatencyScenario.LatePuts(1_000_000L, nano);
    late.add(nano + 100_000_000L, nano + 160_000_000L); // through the stand-still
    late.add(nano + 300_000_000L, nano + 325_000_000L); // after it
    // a heartbeat due at 110 ms woke at 150 ms
    long[] now = {nano + 109_000_000L};
    HiccupMeter beat = new HiccupMeter(() -> now[0], nanos -> now[0] += nanos + 40_000_000L, nano, null);
    beat.step();
    CpuHeartbeats beats = new CpuHeartbeats(List.of(beat));

    assertEquals(List.of(LatencyScenario.LatePuts.Cause.CPU_STALL, LatencyScenario.LatePuts.Cause.NONE),
        List.of(late.causes(null, null, null, beats)));
    assertEquals(new Attribution(-1, -1, -1, -1, 1), attribution(late, null, null, null, beats));
    assertEquals(40, beats.longestNanos() / 1_000_000);
  }

  /** The late puts' causes counted, as the report does. */
  private static Attribution attribution(LatencyScenario.LatePuts late, GcLog.Pauses server,
      GcLog.Pauses generator, StealMeter steal, CpuHeartbeats beats) {
    return LatencyScenario.LatePuts.attribute(late.causes(server, generator, steal, beats), server, generator, steal,
        beats);
  }

  @Test
  void shouldNameTheSecondsWithTheMostLatePuts() {
    long nano = 7_000_000_000L;
    LatencyScenario.LatePuts late = new LatencyScenario.LatePuts(0, nano);
    assertEquals("-", late.busiestSeconds(nano));
    for (int i = 0; i < 5; i++) late.add(nano + 12_100_000_000L + i * 1_000_000L, nano + 12_300_000_000L);
    for (int i = 0; i < 2; i++) late.add(nano + 25_000_000_000L, nano + 25_030_000_000L);
    late.add(nano + 3_999_000_000L, nano + 4_030_000_000L);
    late.add(nano + 29_000_000_000L, nano + 29_030_000_000L);

    assertEquals("12 s: 5, 25 s: 2, 3 s: 1", late.busiestSeconds(nano));
  }

  @Test
  void shouldWriteEachLatePutWithBothClocks(@TempDir Path dir) throws Exception {
    long wall = 1_700_000_000_000L;
    long nano = 9_000_000_000L;
    LatencyScenario.LatePuts late = new LatencyScenario.LatePuts(wall, nano);
    late.add(nano + 2_500_000_000L, nano + 2_524_250_000L);
    late.add(nano + 500_000_000L, nano + 530_000_000L);
    Path file = dir.resolve("late.tsv");

    late.write(file, nano + 1_000_000_000L, new LatencyScenario.LatePuts.Cause[] {
        LatencyScenario.LatePuts.Cause.HOST_HOLD, LatencyScenario.LatePuts.Cause.NONE});

    assertEquals(List.of(
        "sent_monotonic_ns\tacked_monotonic_ns\tsent_wall_ms\twindow_second\tlatency_ms\tin_flight_during",
        "11500000000\t11524250000\t1700000002500\t1\t24.250\thost-steal",
        "9500000000\t9530000000\t1700000000500\t-1\t30.000\t-"), Files.readAllLines(file));
  }
}
