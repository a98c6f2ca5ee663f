package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code talos server --exit-with PID}: a node started by a sandbox does not outlive it. */
class ExitWithProcessTest {
  @Test
  void shouldExitOnceWhenTheWatchedProcessIsGone() {
    AtomicBoolean alive = new AtomicBoolean(true);
    AtomicInteger exits = new AtomicInteger();
    ExitWithProcess watch = new ExitWithProcess(42, pid -> {
      assertEquals(42, pid);
      return alive.get();
    }, exits::incrementAndGet);
    for (int i = 0; i < 3; i++) assertFalse(watch.runOnce());
    assertEquals(0, exits.get(), "nothing while the process lives");
    alive.set(false);
    assertTrue(watch.runOnce());
    assertTrue(watch.runOnce());
    assertEquals(1, exits.get(), "exit runs once");
  }

  /**
   * A real server process watching a stand-in for the sandbox ({@code sleep}): SIGKILL of the
   * stand-in, and the server shuts itself down cleanly within a few seconds.
   */
  @Test
  void shouldShutAServerDownWhenTheProcessItWatchesIsKilled(@TempDir Path dir) throws Exception {
    Process parent = new ProcessBuilder("sleep", "600").start();
    Process node = null;
    try {
      Files.writeString(dir.resolve("talos.properties"), String.join("\n", "server.port=0", "server.ops.port=0",
          "server.data.dir=data", ""));
      Path out = dir.resolve("node.out");
      node = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
          "-Dlog4j.configuration=log4j-server.properties", "-Dtalos.log.dir=" + dir.resolve("logs"),
          "-cp", System.getProperty("java.class.path"), TalosServerMain.class.getName(),
          "--conf", dir.resolve("talos.properties").toString(), "--exit-with", Long.toString(parent.pid()))
          .directory(dir.toFile()).redirectErrorStream(true).redirectOutput(out.toFile()).start();
      long deadline = System.currentTimeMillis() + 120_000;
      while (!Files.readString(out).lines().toList().contains("READY")) {
        assertTrue(node.isAlive(), "the node exited before it was ready:\n" + Files.readString(out));
        assertTrue(System.currentTimeMillis() < deadline, "not ready after 120 s:\n" + Files.readString(out));
        Thread.sleep(50);
      }
      assertTrue(node.isAlive());
      parent.destroyForcibly(); // SIGKILL
      long killedAt = System.nanoTime();
      assertTrue(parent.waitFor(10, TimeUnit.SECONDS));
      assertTrue(node.waitFor(30, TimeUnit.SECONDS), "the node outlived its parent by 30 s");
      long exitMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
      System.out.println("ExitWithProcessTest: the node exited " + exitMs + " ms after its parent's SIGKILL, code "
          + node.exitValue());
      String output = Files.readString(out);
      assertEquals(0, node.exitValue(), output);
      assertTrue(output.contains("is gone: shutting this node down") && output.contains("stopped cleanly"), output);
      assertTrue(exitMs < ExitWithProcess.CHECK_INTERVAL_MS + ExitWithProcess.HALT_AFTER_MS, exitMs + " ms");
    } finally {
      parent.destroyForcibly();
      if (node != null) node.destroyForcibly();
    }
  }

  @Test
  void shouldRefuseToStartWatchingAProcessThatIsNotRunning(@TempDir Path dir) throws Exception {
    Process gone = new ProcessBuilder("true").start();
    assertTrue(gone.waitFor(10, TimeUnit.SECONDS));
    ServerCommandLineTest.Result r = ServerCommandLineTest.server(dir, "--port", "0", "-Dserver.ops.port=0",
        "--data-dir", dir.resolve("data").toString(), "--exit-with", Long.toString(gone.pid()));
    assertEquals(1, r.exitCode(), r.stdout() + r.stderr());
    assertEquals(List.of("talos server: --exit-with " + gone.pid() + ": no such live process"), r.stderrLines(),
        r.stderr());
  }
}
