package io.talos.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The sampler's jstat runs quiet (C1 only, a small serial heap, lowest CPU priority where nice
 * exists) and still reads the measured JVM's heap.
 */
class MemorySamplerTest {
  @Test
  void jstatRunsQuietAndReadsTheHeap() throws Exception {
    long self = ProcessHandle.current().pid();
    List<String> cmd = MemorySampler.jstatCommand(self);
    assertTrue(cmd.containsAll(MemorySampler.JSTAT_JVM_OPTIONS), cmd.toString());
    assertTrue(cmd.contains("-J-XX:TieredStopAtLevel=1"), cmd.toString());
    assertEquals(List.of("-gc", Long.toString(self), "500"), cmd.subList(cmd.size() - 3, cmd.size()));

    try (MemorySampler sampler = new MemorySampler(self)) {
      long deadline = System.nanoTime() + 20_000_000_000L;
      while (sampler.snapshot().peakHeapUsedKb() <= 0 && System.nanoTime() < deadline) Thread.sleep(100);
      assertTrue(sampler.snapshot().peakHeapUsedKb() > 0, "jstat with these options reads the heap");
      assertTrue(sampler.snapshot().peakHeapCommittedKb() >= sampler.snapshot().peakHeapUsedKb());
      Process jstat = sampler.jstatProcess();
      assertNotNull(jstat);
      Path stat = Path.of("/proc", Long.toString(jstat.pid()), "stat");
      assumeTrue(Files.exists(Path.of("/usr/bin/nice")) && Files.exists(stat), "needs nice and /proc");
      String s = Files.readString(stat);
      String[] afterComm = s.substring(s.lastIndexOf(')') + 2).split(" ");
      assertEquals("19", afterComm[16], "jstat's nice value"); // field 19 of /proc/<pid>/stat
    }
  }
}
