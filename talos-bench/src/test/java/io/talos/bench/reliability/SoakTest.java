package io.talos.bench.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Scenario 6, short form: a 6 s probe of the maximum, then 2 minutes at half of it. */
class SoakTest {
  @TempDir Path tmp;

  @Test
  void memoryDescriptorsAndThreadsStayFlat() throws Exception {
    Soak.Result r = new Soak(new Soak.Options(120, 6, 10, 4, Soak.DEFAULT_BATCH, Soak.DEFAULT_JVM), tmp, new Progress(System.err)).run();
    System.out.println(r.tally());
    assertTrue(r.maxPerSecond() > 0, "a maximum measured: " + r.tally());
    assertTrue(r.tally().acknowledged() > 0, r.tally().toString());
    assertEquals(r.tally().acknowledged(), r.tally().readBack(), r.tally().toString());
    assertTrue(r.tally().clean(), r.tally().toString());
    assertTrue(Math.abs(r.rssDriftPercent()) <= 10, "RSS within 10% after warm-up: " + r.tally());
    assertTrue(r.fdDrift() <= 16, "file descriptors flat: " + r.tally());
    assertTrue(r.threadDrift() <= 16, "threads flat: " + r.tally());
  }
}
