package io.talos.server;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code talos server --exit-with PID}: this node ends itself once process {@code PID} is gone. A
 * process that starts nodes as children (the sandbox of {@code bin/talos sandbox}) passes its own
 * pid, so its nodes do not outlive it when it is killed without a chance to stop them (SIGKILL,
 * OOM killer): they would otherwise keep running, holding their ports, against mini clusters that
 * died with it.
 *
 * <p>Each {@link #runOnce} asks whether the process is alive: in a server, through the {@link
 * ProcessHandle} taken when the watch started, which also compares the process's start time, so a
 * later process that got the same pid is not taken for it. Once it is gone: {@code exit} runs, which in a
 * server is {@link System#exit} (the shutdown hook closes the node) guarded by {@link
 * Runtime#halt} after {@link #HALT_AFTER_MS}, because the storage and ZooKeeper a sandbox node
 * would close against may have died with its parent and a clean close would then wait out their
 * timeouts.
 *
 * <p>Without the option nothing is watched: {@code bin/talos server} is unaffected.
 *
 * <p>Thread-safety: {@link #runOnce} is called by one thread (the watch's own, or a test).
 */
public final class ExitWithProcess {
  private static final Logger LOG = LoggerFactory.getLogger(ExitWithProcess.class);
  /** How often the watched process is checked. */
  static final long CHECK_INTERVAL_MS = 1_000;
  /** How long the clean close may take after the watched process is gone before the JVM halts. */
  static final long HALT_AFTER_MS = 10_000;

  private final long pid;
  private final LongPredicate alive;
  private final Runnable exit;
  private boolean exited;

  /**
   * @param pid the process to outlive not
   * @param alive whether a pid is a live process
   * @param exit what ends this process
   */
  ExitWithProcess(long pid, LongPredicate alive, Runnable exit) {
    this.pid = pid;
    this.alive = alive;
    this.exit = exit;
  }

  /**
   * One check.
   *
   * @return true if the watched process is gone (and {@code exit} was run, once)
   */
  boolean runOnce() {
    if (exited) return true;
    if (alive.test(pid)) return false;
    exited = true;
    LOG.warn("Process {} (--exit-with) is gone: shutting this node down", pid);
    exit.run();
    return true;
  }

  /**
   * Watches {@code pid} on a daemon thread of its own, every {@link #CHECK_INTERVAL_MS}; exits the
   * JVM (code 0, clean close through the shutdown hooks; halted with code 1 after {@link
   * #HALT_AFTER_MS}) once it is gone.
   *
   * @throws IllegalArgumentException if {@code pid} is not a live process now
   */
  static void start(long pid) {
    ProcessHandle watched = (pid > 0 ? ProcessHandle.of(pid) : java.util.Optional.<ProcessHandle>empty())
        .filter(ProcessHandle::isAlive)
        .orElseThrow(() -> new IllegalArgumentException("--exit-with " + pid + ": no such live process"));
    ExitWithProcess watch = new ExitWithProcess(pid, p -> watched.isAlive(), () -> {
      Thread halt = new Thread(() -> {
        try {
          Thread.sleep(HALT_AFTER_MS);
        } catch (InterruptedException e) {
          return;
        }
        LOG.warn("Clean shutdown not done {} ms after process {} was gone: halting", HALT_AFTER_MS, pid);
        Runtime.getRuntime().halt(1);
      }, "talos-exit-with-halt");
      halt.setDaemon(true);
      halt.start();
      // System.exit waits for the shutdown hooks: never on the watch's own thread's behalf.
      new Thread(() -> System.exit(0), "talos-exit-with").start();
    });
    ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "talos-exit-with-watch");
      t.setDaemon(true);
      return t;
    });
    timer.scheduleWithFixedDelay(() -> {
      if (watch.runOnce()) timer.shutdown();
    }, CHECK_INTERVAL_MS, CHECK_INTERVAL_MS, TimeUnit.MILLISECONDS);
  }
}
