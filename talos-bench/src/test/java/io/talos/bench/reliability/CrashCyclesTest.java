package io.talos.bench.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Scenario 1, short form: 3 SIGKILL cycles of a real server process per storage. */
class CrashCyclesTest {
  @TempDir Path tmp;

  private Tally run(String storage, String durability, Path dir) throws Exception {
    Tally t = new CrashCycles(new CrashCycles.Options(storage, durability, 3, 4, 300, 1200, 42, "-Xmx256m"),
        dir, new Progress(System.err)).run();
    System.out.println(t);
    assertTrue(t.acknowledged() > 0, "something was acknowledged: " + t);
    assertEquals(t.acknowledged(), t.readBack(), "every acknowledged message read back: " + t);
    assertTrue(t.clean(), t.toString());
    return t;
  }

  @Test
  void localSync() throws Exception {
    run("local", "sync", tmp.resolve("sync"));
  }

  @Test
  void localFlush() throws Exception {
    run("local", "flush", tmp.resolve("flush"));
  }

  @Test
  void hdfs() throws Exception {
    run("hdfs", "flush", tmp.resolve("hdfs"));
  }
}
