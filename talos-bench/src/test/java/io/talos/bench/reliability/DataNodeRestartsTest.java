package io.talos.bench.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Scenario 4, short form: 2 DataNode stop/restart cycles of a MiniDFSCluster under produce. */
class DataNodeRestartsTest {
  @TempDir Path tmp;

  @Test
  void noFalseAcknowledgementAndTheWriterRecoversByItself() throws Exception {
    Tally t = new DataNodeRestarts(new DataNodeRestarts.Options(2, 2, 2, 4, 2000, 2000, 3, "-Xmx256m"), tmp,
        new Progress(System.err)).run();
    System.out.println(t);
    assertTrue(t.acknowledged() > 0, t.toString());
    assertEquals(t.acknowledged(), t.readBack(), "no false acknowledgement: " + t);
    assertTrue(t.clean(), t.toString());
    assertTrue(t.notes().contains("after the last restart: 4/4"), "every partition acknowledges again: " + t);
  }
}
