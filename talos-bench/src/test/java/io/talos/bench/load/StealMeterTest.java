package io.talos.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class StealMeterTest {
  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

  /** Two CPUs' counters and a clock that the test moves one period per step. */
  private static final class Machine {
    final long[] steal = {5_000, 7_000}; // steal before the window is not counted
    final AtomicLong now = new AtomicLong(1_000 * MS);

    StealMeter meter() {
      return new StealMeter(steal::clone, now::get, nanos -> now.addAndGet(nanos), null);
    }
  }

  @Test
  void shouldSumTheWindowsStealAndFindItsWorstSecond() throws Exception {
    Machine m = new Machine();
    StealMeter meter = m.meter();
    m.steal[0] += 10;
    meter.step();
    for (int i = 0; i < 99; i++) meter.step(); // the rest of the first second: nothing stolen
    for (int i = 0; i < 10; i++) { // in the second second, the host takes 20 ms of each CPU per 100 ms
      m.steal[i % 2] += 20;
      for (int j = 0; j < 10; j++) meter.step();
    }
    m.steal[1] += 30; // after the last period: counted by close
    meter.close();

    assertTrue(meter.available());
    assertEquals(240, meter.totalMillis());
    assertEquals(200, meter.worstSecondMillis());
  }

  @Test
  void shouldPlaceEachHoldOfOneCpuAroundTheSamplesThatSawIt() throws Exception {
    Machine m = new Machine();
    StealMeter meter = m.meter();
    meter.step(); // at 1,010 ms
    m.steal[0] += 100; // CPU 0 held 100 ms: counted in one piece when it runs again
    meter.step(); // seen at 1,020 ms
    m.steal[0] += 10; // the tick after
    m.steal[1] += 10; // one tick on the other CPU: too little to be a hold
    meter.step(); // 1,030 ms
    meter.step();
    m.steal[1] += 30;
    meter.step(); // 1,050 ms
    meter.close(); // at 1,050 ms: the hold still growing is closed too

    assertEquals(List.of(
        new StealMeter.Hold(0, 110, (1_010 - 100 - 10) * MS, 1_030 * MS),
        new StealMeter.Hold(1, 30, (1_040 - 30 - 10) * MS, 1_050 * MS)), meter.holds());
    assertEquals(110, meter.longestHoldMillis());
    assertTrue(meter.holds().get(0).overlaps(950 * MS, 960 * MS), "a put in flight within the stretch");
    assertFalse(meter.holds().get(0).overlaps(880 * MS, 899 * MS), "a put acknowledged before it");
    assertTrue(meter.holds().get(0).overlaps(1_100 * MS, 1_125 * MS), "a put sent into the backlog it left");
    assertFalse(meter.holds().get(0).overlaps(1_141 * MS, 1_165 * MS), "a put sent after as long again");
  }

  @Test
  void shouldReportNothingWhereTheMachineCountsNoSteal() throws Exception {
    StealMeter meter = new StealMeter(() -> null, System::nanoTime, nanos -> { }, "steal-test");
    meter.step();
    meter.close();
    assertFalse(meter.available());
    assertEquals(0, meter.totalMillis());
    assertEquals(0, meter.worstSecondMillis());
    assertEquals(List.of(), meter.holds());
  }

  @Test
  void shouldReadEachCpusStealInTicksOfTenMilliseconds() {
    assertEquals(List.of(620_420L, 10L), toList(parse("cpu  3720438 826 667819 3533276 32018 0 80524 62043 0 0\n"
        + "cpu0 3720437 826 667819 3533276 32018 0 80524 62042 0 0\ncpu1 1 2 3 4 5 6 7 1 0 0\nintr 1 2 3\n"
        + "cpu7 1 2 3 4 5 6 7 9 0 0\n")));
    assertNull(parse("cpu0 3720437 826 667819 3533276 32018 0 80524\n"), "no steal field");
    assertNull(parse("cpu  1 2 3 4 5 6 7 8 9\nintr 1\n"), "the machine's line, not a CPU's");
    assertNull(parse(""), "no CPU line");
    assertEquals(List.of(10L), toList(parse("cpu0 1 2 3 4 5 6 7 1 0 0\ncpu1 1 2 3 4 5 6 7 1")), "a cut-off line ends the list");
    long[] many = parse("cpu0 0 0 0 0 0 0 0 1\n".repeat(40));
    assertEquals(40, many.length);
  }

  private static long[] parse(String text) {
    byte[] b = text.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    return StealMeter.parseStealMillis(b, b.length);
  }

  @Test
  void shouldReadThisMachinesCpusWhereThereIsAProcStat() {
    long[] read = StealMeter.procStatStealMillis();
    if (java.nio.file.Files.exists(java.nio.file.Path.of("/proc/stat"))) {
      assertTrue(read.length >= Runtime.getRuntime().availableProcessors(), "a counter for each CPU at least");
    } else {
      assertNull(read);
    }
  }

  @Test
  void shouldStopItsThreadAtOnceWhenClosed() throws Exception {
    // a sleep of 10 s instead of the period: close must interrupt it, not wait it out
    StealMeter meter = new StealMeter(new long[] {0}::clone, System::nanoTime,
        nanos -> java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(10)), "steal-test");
    Thread.sleep(20); // the thread is asleep by now
    long start = System.nanoTime();
    meter.close();
    assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(1), "close does not wait out the sleep");
  }

  @Test
  void shouldStartAHoldAtItsLongestStretch() throws Exception {
    Machine m = new Machine();
    StealMeter meter = m.meter();
    meter.step(); // 1,010 ms
    m.steal[0] += 10;
    meter.step(); // 1,020 ms: a little, placed from 990 ms
    m.steal[0] += 100;
    meter.step(); // 1,030 ms: a stretch of 100 ms that ended after 1,020 ms began by 910 ms
    meter.close();

    assertEquals(List.of(new StealMeter.Hold(0, 110, (1_020 - 100 - 10) * MS, 1_030 * MS)), meter.holds());
  }

  private static List<Long> toList(long[] a) {
    return java.util.Arrays.stream(a).boxed().toList();
  }
}
