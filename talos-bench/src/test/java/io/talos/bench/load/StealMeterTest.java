package io.talos.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class StealMeterTest {
  @Test
  void shouldSumTheWindowsStealAndFindItsWorstPeriod() throws Exception {
    AtomicLong counter = new AtomicLong(5_000); // steal before the window is not counted
    StealMeter meter = new StealMeter(counter::get, nanos -> { }, null);
    counter.addAndGet(10);
    meter.step();
    counter.addAndGet(200); // a second in which the host took 200 ms
    meter.step();
    meter.step(); // nothing stolen
    counter.addAndGet(30); // after the last period: counted by close
    meter.close();

    assertTrue(meter.available());
    assertEquals(240, meter.totalMillis());
    assertEquals(200, meter.worstPeriodMillis());
  }

  @Test
  void shouldReportNothingWhereTheMachineCountsNoSteal() throws Exception {
    StealMeter meter = new StealMeter(() -> -1, nanos -> { }, "steal-test");
    meter.step();
    meter.close();
    assertFalse(meter.available());
    assertEquals(0, meter.totalMillis());
    assertEquals(0, meter.worstPeriodMillis());
  }

  @Test
  void shouldReadStealFromTheCpuLineInTicksOfTenMilliseconds() {
    assertEquals(620_420, StealMeter.parseStealMillis("cpu  3720437 826 667819 3533276 32018 0 80524 62042 0 0"));
    assertEquals(-1, StealMeter.parseStealMillis("cpu  3720437 826 667819 3533276 32018 0 80524"), "no steal field");
    assertEquals(-1, StealMeter.parseStealMillis("intr 1 2 3 4 5 6 7 8 9"), "not the cpu line");
  }

  @Test
  void shouldStopItsThreadAtOnceWhenClosed() throws Exception {
    AtomicLong counter = new AtomicLong();
    StealMeter meter = new StealMeter(counter::get, java.util.concurrent.locks.LockSupport::parkNanos, "steal-test");
    long start = System.nanoTime();
    meter.close();
    assertTrue(System.nanoTime() - start < StealMeter.PERIOD_NANOS, "close does not wait out the period");
  }
}
