package io.talos.server.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

class HealthChecksTest {

  @Test
  void fileDescriptorCheckFailsAtTheConfiguredPercentageOfTheLimit() throws Exception {
    assertNull(HealthChecks.fileDescriptors(() -> 89, () -> 100, 90).call());
    String problem = HealthChecks.fileDescriptors(() -> 90, () -> 100, 90).call();
    assertTrue(problem.contains("90 of 100") && problem.contains("ops.health.fd.used.max.percent"), problem);
    assertNull(HealthChecks.fileDescriptors(() -> -1, () -> -1, 90).call(), "unknown counts: not judged");
    assertTrue(HealthChecks.openFileDescriptors() != 0 && HealthChecks.maxFileDescriptors() != 0);
  }

  @Test
  void aHangingProbeFailsItsCheckAtTheTimeoutAndIsNotStartedAgainWhileItHangs() {
    CountDownLatch release = new CountDownLatch(1);
    int[] probes = {0};
    HealthChecks checks = new HealthChecks(100)
        .add("fine", () -> null)
        .add("hangs", () -> {
          probes[0]++;
          release.await();
          return null;
        })
        .add("throws", () -> {
          throw new IllegalStateException("store closed");
        });
    try {
      List<HealthChecks.Result> first = checks.run();
      assertEquals(List.of("fine", "hangs", "throws"), first.stream().map(HealthChecks.Result::name).toList());
      assertTrue(first.get(0).ok());
      assertTrue(first.get(1).problem().contains("no answer within 100 ms"), first.get(1).problem());
      assertTrue(first.get(2).problem().contains("store closed"), first.get(2).problem());
      List<HealthChecks.Result> second = checks.run();
      assertTrue(second.get(1).problem().contains("previous probe has not answered"), second.get(1).problem());
      assertEquals(1, probes[0]);
    } finally {
      release.countDown();
      checks.close();
    }
  }
}
