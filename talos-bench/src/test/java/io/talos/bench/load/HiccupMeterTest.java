package io.talos.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class HiccupMeterTest {
  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

  /** A clock that the sleeps advance: each by the period plus what {@link #late} says. */
  private static final class SteppedClock {
    long now = 1_000 * MS;
    long late;

    void sleep(long nanos) {
      now += nanos + late;
      late = 0;
    }
  }

  @Test
  void shouldRecordHowLateEachWakeIsFromTheWindowOn() throws Exception {
    SteppedClock clock = new SteppedClock();
    HiccupMeter meter = new HiccupMeter(() -> clock.now, clock::sleep, clock.now + 100 * MS, null);
    for (int i = 0; i < 2; i++) {
      clock.late = 50 * MS; // due before the window: not recorded
      meter.step();
    }
    meter.step(); // the first due in the window, on time
    clock.late = 30 * MS;
    meter.step(); // a stall of 30 ms
    clock.late = 2 * MS;
    meter.step();
    meter.close();

    assertEquals(3, meter.lateness().getTotalCount(), "the three wakes due in the window");
    assertEquals(1, LatencyScenario.stalls(meter.lateness()), "one wake more than 20 ms late");
    assertEquals(30 * MS, meter.lateness().getMaxValue(), 30 * MS / 1000.0);
  }

  @Test
  void shouldKeepEachWakeTenMillisecondsLateOrMoreAsAStall() throws Exception {
    SteppedClock clock = new SteppedClock();
    HiccupMeter meter = new HiccupMeter(() -> clock.now, clock::sleep, clock.now, null);
    meter.step(); // due at 1,001 ms, on time
    clock.late = 9 * MS;
    meter.step(); // due at 1,002 ms, 9 ms late: not a stall
    clock.late = 40 * MS;
    meter.step(); // due at 1,012 ms, woke at 1,052 ms
    meter.close();

    assertEquals(java.util.List.of(new HiccupMeter.Stall(-1, 1_012 * MS, 1_052 * MS)), meter.stalls());
    assertEquals(40 * MS, meter.stalls().get(0).nanos());
    assertEquals(true, meter.stalls().get(0).overlaps(1_000 * MS, 1_020 * MS), "a put sent before, acknowledged within");
    assertEquals(true, meter.stalls().get(0).overlaps(1_060 * MS, 1_085 * MS), "a put sent into its backlog");
    assertEquals(false, meter.stalls().get(0).overlaps(1_093 * MS, 1_120 * MS), "a put sent after as long again");
  }

  @Test
  void shouldRecordFromTheInstantItIsToldLater() throws Exception {
    SteppedClock clock = new SteppedClock();
    HiccupMeter meter = new HiccupMeter(() -> clock.now, clock::sleep, Long.MAX_VALUE, null);
    clock.late = 30 * MS;
    meter.step(); // before the window is known: not recorded
    meter.recordFrom(clock.now);
    clock.late = 30 * MS;
    meter.step();
    meter.close();

    assertEquals(1, meter.lateness().getTotalCount());
    assertEquals(1, meter.stalls().size());
  }

  @Test
  void shouldKeepAPinnedMetersThreadOnItsCpu() throws Exception {
    java.util.List<Integer> cpus = CpuAffinity.allowedCpus();
    org.junit.jupiter.api.Assumptions.assumeFalse(cpus.isEmpty(), "CPU affinity is known on Linux only");
    int cpu = cpus.get(cpus.size() - 1);
    org.junit.jupiter.api.Assumptions.assumeTrue(slicesApply(), "a kernel that applies a chosen slice (6.12+)");
    // pinned() reads the thread's affinity back: non-null means the thread may run on `cpu` alone
    HiccupMeter meter = HiccupMeter.pinned(cpu, System.nanoTime(), "hiccup-test-pinned");
    org.junit.jupiter.api.Assertions.assertNotNull(meter, "pinned to CPU " + cpu);
    Thread.sleep(30);
    meter.close();
    assertEquals(true, meter.lateness().getTotalCount() > 0, "wakes recorded while running");
    org.junit.jupiter.api.Assertions.assertNull(HiccupMeter.pinned(100_000, System.nanoTime(), "hiccup-test-none"),
        "no such CPU");
  }

  /** Whether this machine applies a chosen scheduler slice, tried on a thread of its own. */
  static boolean slicesApply() throws InterruptedException {
    boolean[] applied = new boolean[1];
    Thread t = new Thread(() -> applied[0] = io.talos.server.scheduling.ThreadSlice.setForCurrentThread(
        HiccupMeter.PINNED_SLICE_US));
    t.start();
    t.join();
    return applied[0];
  }

  @Test
  void shouldStopItsThreadWhenClosed() throws Exception {
    HiccupMeter meter = new HiccupMeter(System.nanoTime(), "hiccup-test");
    Thread.sleep(30);
    meter.close();
    long count = meter.lateness().getTotalCount();
    Thread.sleep(10);
    assertEquals(count, meter.lateness().getTotalCount(), "no wake recorded after close");
    assertEquals(true, count > 0, "wakes recorded while running");
  }
}
