package io.talos.bench.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Scenario 2, short form: 20 power cuts at sync lose nothing; at flush the same check finds losses. */
class PowerCutTest {
  @TempDir Path tmp;

  @Test
  void syncLosesNothingAcknowledged() throws Exception {
    Tally t = new PowerCut(new PowerCut.Options("sync", 20, 4, 20, 200, 7), tmp, new Progress(System.err)).run();
    System.out.println(t);
    assertTrue(t.acknowledged() > 0, t.toString());
    assertEquals(t.acknowledged(), t.readBack(), t.toString());
    assertTrue(t.clean(), t.toString());
  }

  /** flush promises the page cache only: the check must see the loss (it can fail). */
  @Test
  void flushLosesAcknowledgedRecordsAndTheCheckSeesIt() throws Exception {
    Tally t = new PowerCut(new PowerCut.Options("flush", 5, 4, 50, 200, 7), tmp, new Progress(System.err)).run();
    System.out.println(t);
    assertTrue(t.lost() > 0, "a power cut at flush loses acknowledged records: " + t);
  }
}
