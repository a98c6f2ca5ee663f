package io.talos.bench.load;

import java.util.function.BooleanSupplier;

/**
 * The daemon thread of a meter of the measured window ({@link HiccupMeter}, {@link StealMeter}):
 * runs the meter's setup once, then (if the setup succeeded) its step (a sleep, then a sample) over
 * and over until {@link #stop()}. Tests step a meter by hand instead and start no loop.
 */
final class MeterLoop {
  private final Thread thread;
  private volatile boolean running = true;

  /** Starts a daemon thread named {@code name} that runs {@code step} until stopped. */
  MeterLoop(String name, Runnable step) {
    this(name, () -> true, step);
  }

  /** As {@link #MeterLoop(String, Runnable)}, running {@code setup} on the thread first: false ends it. */
  MeterLoop(String name, BooleanSupplier setup, Runnable step) {
    this.thread = new Thread(() -> {
      if (!setup.getAsBoolean()) return;
      while (running) step.run();
    }, name);
    thread.setDaemon(true);
    thread.start();
  }

  /**
   * Ends the loop without waiting out the step's sleep (the sleep is interrupted), and waits for
   * the thread: what it recorded is then safe to read from the calling thread.
   */
  void stop() throws InterruptedException {
    running = false;
    thread.interrupt();
    thread.join();
  }
}
