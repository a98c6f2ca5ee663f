package io.talos.bench.load;

/**
 * The daemon thread of a meter of the measured window ({@link HiccupMeter}, {@link StealMeter}):
 * runs the meter's step (a sleep, then a sample) over and over until {@link #stop()}. Tests step a
 * meter by hand instead and start no loop.
 */
final class MeterLoop {
  private final Thread thread;
  private volatile boolean running = true;

  /** Starts a daemon thread named {@code name} that runs {@code step} until stopped. */
  MeterLoop(String name, Runnable step) {
    this.thread = new Thread(() -> {
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
