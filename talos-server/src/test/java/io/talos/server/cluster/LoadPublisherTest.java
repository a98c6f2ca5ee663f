package io.talos.server.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.server.ManualClock;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The load's moving average and when it is written to ZooKeeper, stepped with a manual clock. */
class LoadPublisherTest {
  private static final LoadPublisher.Settings SETTINGS = new LoadPublisher.Settings(true, 10_000, 5_000, 20);

  private final ManualClock clock = new ManualClock(1_000_000);
  private final AtomicLong requests = new AtomicLong();
  private final AtomicReference<Double> factor = new AtomicReference<>(1.0);
  private final List<Double> published = new ArrayList<>();
  private final AtomicBoolean failing = new AtomicBoolean();

  private LoadPublisher publisher(double floor) {
    return new LoadPublisher(SETTINGS, requests::get, factor::get, floor, (load, shedding) -> {
      assertTrue(shedding, "the node's shedding setting goes with the load");
      if (failing.get()) throw new IOException("ZooKeeper unavailable");
      published.add(load);
    }, clock);
  }

  /** {@code seconds} one-second steps at {@code perSec} requests/s. */
  private void run(LoadPublisher p, int seconds, long perSec) {
    for (int i = 0; i < seconds; i++) {
      clock.advanceMs(1_000);
      requests.addAndGet(perSec);
      p.runOnce();
    }
  }

  @Test
  void shouldPublishASteadyLoadOnceThenOnlyChangesAboveTheThresholdAtMostOncePerInterval() {
    LoadPublisher p = publisher(10);
    run(p, 4, 1_000);
    assertEquals(List.of(), published, "nothing before the interval since joining");
    run(p, 1, 1_000);
    assertEquals(1, published.size(), "published when the interval passed");
    run(p, 60, 1_000);
    assertEquals(1_000, p.load(), 2, "the average converged on the rate");
    int afterRamp = published.size();
    assertTrue(afterRamp <= 13, "at most one publication per 5 s: " + published);
    double last = published.get(afterRamp - 1);
    assertTrue(last > 800, "the last publication is near the rate: " + published);
    run(p, 60, 1_050); // +5%: under the 20% threshold
    assertEquals(afterRamp, published.size(), "a small change is not published: " + published);
    run(p, 1, 1_500);
    assertEquals(afterRamp, published.size(), "one busy second moves the average by 4%: not published");
    run(p, 4, 3_000);
    assertEquals(afterRamp + 1, published.size(), "a lasting change is published: " + published);
  }

  @Test
  void shouldScaleTheLoadToTheNodesFullWeight() {
    LoadPublisher p = publisher(10);
    factor.set(0.5); // it sheds half: serving 500/s, it would serve 1000/s at full weight
    run(p, 100, 500);
    assertEquals(1_000, p.load(), 1);
    assertTrue(p.published() > 800, "published at full weight (unscaled it would be 500): " + published);
  }

  @Test
  void shouldNotPublishChangesBelowTheFloorAndRetryAFailedWrite() {
    LoadPublisher p = publisher(100);
    run(p, 60, 15); // 15/s: within 20% of the floor 100
    assertEquals(List.of(), published, "noise under the floor is never written");
    failing.set(true);
    run(p, 60, 500);
    assertEquals(List.of(), published);
    assertEquals(0, p.published());
    failing.set(false);
    run(p, 1, 500);
    assertEquals(1, published.size(), "written on the next step once ZooKeeper answers");
    assertEquals(published.get(0), p.published());
  }
}
