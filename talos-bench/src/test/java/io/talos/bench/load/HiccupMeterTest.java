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
