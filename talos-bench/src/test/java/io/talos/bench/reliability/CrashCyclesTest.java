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
    return run(storage, durability, dir, "simple");
  }

  private Tally run(String storage, String durability, Path dir, String producer) throws Exception {
    Tally t = new CrashCycles(new CrashCycles.Options(storage, durability, 3, 4, 300, 1200, 42, "-Xmx256m",
        producer), dir, new Progress(System.err)).run();
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

  /**
   * Idempotent produce: one TalosProducer keeps sending through 3 kill -9 and retries what was not
   * answered; nothing acknowledged is lost and no payload is stored twice, acknowledged or not.
   */
  @Test
  void idempotentTalosProducerRetryingThroughKills() throws Exception {
    Tally t = run("local", "flush", tmp.resolve("talos"), "talos");
    assertEquals(0, t.duplicated(), t.toString());
    assertTrue(t.notes().contains("stored twice (acknowledged or not): 0;"), t.notes());
    assertTrue(t.notes().contains(" 0 failed for good"), t.notes());
  }

  /** The official SDK 2.0.2's SimpleProducer as the producer. */
  @Test
  void officialSdkProducer() throws Exception {
    run("local", "sync", tmp.resolve("sdk"), "sdk");
  }

  @Test
  void hdfs() throws Exception {
    run("hdfs", "flush", tmp.resolve("hdfs"));
  }
}
