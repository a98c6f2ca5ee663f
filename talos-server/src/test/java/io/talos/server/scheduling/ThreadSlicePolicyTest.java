package io.talos.server.scheduling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.Deque;
import org.junit.jupiter.api.Test;

/** The decision alone, stepped with given CPU samples (no kernel involved: see ThreadSliceTest). */
class ThreadSlicePolicyTest {

  /** Answers the queued samples in order. */
  private static final class Samples implements CpuUse {
    final Deque<Sample> queue = new ArrayDeque<>();
    int taken;

    Samples add(double machineBusy, double process) {
      queue.add(new Sample(machineBusy, process));
      return this;
    }

    @Override
    public Sample sample() {
      taken++;
      return queue.remove();
    }
  }

  private static ThreadSlicePolicy contended(Samples samples) {
    return new ThreadSlicePolicy(100, ThreadSlicePolicy.When.CONTENDED, 0.9, 0.35, samples, 1000);
  }

  @Test
  void theSliceOnlyWhileOtherWorkFillsTheMachine() {
    Samples samples = new Samples()
        .add(0.95, 0.10)  // others hold the cores: slice
        .add(0.90, 0.35)  // both thresholds met exactly: slice
        .add(0.89, 0.10)  // the machine has room: default
        .add(1.00, 0.36)  // this server fills it: default
        .add(1.00, 0.20)  // slice again
        .add(Double.NaN, 0.10) // unknown: default
        .add(1.00, Double.NaN);
    ThreadSlicePolicy policy = contended(samples);
    assertEquals(0, policy.currentUs(), "before any sample");
    int[] expected = {100, 100, 0, 0, 100, 0, 0};
    for (int want : expected) assertEquals(want, policy.runOnce());
    assertEquals(4, policy.switches());
    assertEquals(expected.length, samples.taken);
  }

  @Test
  void alwaysAndNoSliceNeverSample() {
    Samples none = new Samples();
    ThreadSlicePolicy always = new ThreadSlicePolicy(200, ThreadSlicePolicy.When.ALWAYS, 0.9, 0.35, none, 1000);
    assertEquals(200, always.currentUs());
    assertEquals(200, always.runOnce());
    ThreadSlicePolicy off = new ThreadSlicePolicy(0, ThreadSlicePolicy.When.CONTENDED, 0.9, 0.35, none, 1000);
    assertEquals(0, off.runOnce());
    off.start(); // nothing to sample: no thread
    off.close();
    assertEquals(0, none.taken);
    assertEquals(0, ThreadSlicePolicy.NONE.currentUs());
  }

  @Test
  void refusesSettingsItCannotUse() {
    Samples s = new Samples();
    assertEquals("thread slice 99 us must be 0 or between 100 and 100000", assertThrows(IllegalArgumentException.class,
        () -> new ThreadSlicePolicy(99, ThreadSlicePolicy.When.CONTENDED, 0.9, 0.35, s, 1000)).getMessage());
    assertEquals("machineBusyMin (1.5) and processMax (0.35) must be fractions between 0 and 1",
        assertThrows(IllegalArgumentException.class,
            () -> new ThreadSlicePolicy(100, ThreadSlicePolicy.When.CONTENDED, 1.5, 0.35, s, 1000)).getMessage());
    assertEquals("checkIntervalMs must be at least 1, got 0", assertThrows(IllegalArgumentException.class,
        () -> new ThreadSlicePolicy(100, ThreadSlicePolicy.When.CONTENDED, 0.9, 0.35, s, 0)).getMessage());
    assertThrows(NullPointerException.class,
        () -> new ThreadSlicePolicy(100, ThreadSlicePolicy.When.CONTENDED, 0.9, 0.35, null, 1000));
  }

  @Test
  void theJvmSamplerSeesThisProcessWork() {
    OsCpuUse cpu = new OsCpuUse();
    cpu.sample(); // the interval starts here
    long until = System.nanoTime() + 500_000_000L;
    long spins = 0;
    while (System.nanoTime() < until) spins++; // one core's worth of this process for half a second
    CpuUse.Sample s = cpu.sample();
    assertTrue(spins > 0);
    int cores = Runtime.getRuntime().availableProcessors();
    assertTrue(s.process() > 0.3 / cores && s.process() <= 1, "this process's share: " + s.process());
    assertTrue(s.machineBusy() >= s.process() - 0.05 && s.machineBusy() <= 1, "machine: " + s.machineBusy());
  }
}
