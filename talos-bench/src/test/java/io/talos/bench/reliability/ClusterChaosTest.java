package io.talos.bench.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Scenario 7, short form: 3 faults (kill -9 or SIGSTOP of a random node) of a 3-node sandbox. */
class ClusterChaosTest {
  @TempDir Path tmp;

  @Test
  void shouldLoseNothingAcknowledgedThroughKillsAndPausesOfNodes() throws Exception {
    Tally t = new ClusterChaos(new ClusterChaos.Options(3, 3, 7, "-Xmx256m -XX:TieredStopAtLevel=1"), tmp,
        new Progress(System.err)).run();
    System.out.println(t);
    assertTrue(t.acknowledged() > 0, "something was acknowledged: " + t);
    assertEquals(t.acknowledged(), t.readBack(), "every acknowledged message read back: " + t);
    assertTrue(t.clean(), t.toString());
    assertTrue(t.notes().contains("acknowledged but not delivered to the group: 0;"), t.notes());
    assertTrue(t.notes().contains("committed offsets that went back: 0 "), t.notes());
    assertTrue(t.notes().contains(" 0 not retriable"), t.notes());
  }
}
