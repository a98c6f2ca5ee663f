package io.talos.server.scheduling;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class BusyRatioTest {
  private static final long MS = 1_000_000L;

  @Test
  void shouldReportLastCompletedWindow() {
    BusyRatio ratio = new BusyRatio(100 * MS, 0);
    ratio.busy(10 * MS);
    ratio.idle(40 * MS);
    assertEquals(0.0, ratio.ratio(99 * MS), "window not complete");
    assertEquals(0.30, ratio.ratio(100 * MS), 1e-9);
    assertEquals(0.30, ratio.ratio(150 * MS), 1e-9, "kept until the next window completes");
    assertEquals(0.0, ratio.ratio(200 * MS), 1e-9, "idle window");
  }

  @Test
  void shouldSplitATaskRunningAcrossWindows() {
    BusyRatio ratio = new BusyRatio(100 * MS, 0);
    ratio.busy(50 * MS);
    assertEquals(0.50, ratio.ratio(100 * MS), 1e-9, "the running part inside the first window");
    ratio.idle(180 * MS);
    assertEquals(0.80, ratio.ratio(200 * MS), 1e-9);
  }

  @Test
  void shouldRestartWindowWhenClockStepsBack() {
    BusyRatio ratio = new BusyRatio(100 * MS, 1_000 * MS);
    ratio.busy(500 * MS);
    ratio.idle(520 * MS);
    assertEquals(0.20, ratio.ratio(600 * MS), 1e-9);
  }
}
