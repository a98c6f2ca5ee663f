package io.talos.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

class CpuHeartbeatsTest {
  @Test
  void shouldRunOneThreadOnEachCpuOfTheMachine() throws Exception {
    Assumptions.assumeFalse(CpuAffinity.allowedCpus().isEmpty(), "CPU affinity is known on Linux only");
    Assumptions.assumeTrue(HiccupMeterTest.slicesApply(), "a kernel that applies a chosen slice (6.12+)");
    CpuHeartbeats beats = new CpuHeartbeats("heartbeat-test");
    beats.recordFrom(System.nanoTime());
    try {
      assertTrue(beats.available());
      Set<String> names = Thread.getAllStackTraces().keySet().stream().map(Thread::getName)
          .filter(n -> n.startsWith("heartbeat-test-cpu")).collect(Collectors.toSet());
      assertEquals(CpuAffinity.allowedCpus().stream().map(c -> "heartbeat-test-cpu" + c).collect(Collectors.toSet()),
          names);
    } finally {
      beats.close();
    }
  }
}
