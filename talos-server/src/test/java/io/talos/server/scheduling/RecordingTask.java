package io.talos.server.scheduling;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A task that writes what happens to it into a shared log ("run a", "expire a", "fail a: msg")
 * and counts its answers. Optionally throws from run, or runs a hook first (to act while running).
 */
class RecordingTask implements Task {
  final String name;
  final Object key;
  final int priority;
  final long deadlineMs;
  final List<String> log;
  final AtomicInteger answers = new AtomicInteger();
  final AtomicInteger fails = new AtomicInteger();
  volatile Throwable failure;
  RuntimeException throwOnRun;
  Runnable onRun;

  RecordingTask(String name, Object key, int priority, long deadlineMs, List<String> log) {
    this.name = name;
    this.key = key;
    this.priority = priority;
    this.deadlineMs = deadlineMs;
    this.log = log;
  }

  RecordingTask throwing(RuntimeException e) {
    this.throwOnRun = e;
    return this;
  }

  RecordingTask onRun(Runnable hook) {
    this.onRun = hook;
    return this;
  }

  @Override
  public Object key() {
    return key;
  }

  @Override
  public int priority() {
    return priority;
  }

  @Override
  public long deadlineMs() {
    return deadlineMs;
  }

  @Override
  public void run() {
    if (onRun != null) onRun.run();
    if (throwOnRun != null) throw throwOnRun;
    log.add("run " + name);
    answers.incrementAndGet();
  }

  @Override
  public void expire() {
    log.add("expire " + name);
    answers.incrementAndGet();
  }

  @Override
  public void fail(Throwable cause) {
    log.add("fail " + name + ": " + cause.getMessage());
    failure = cause;
    fails.incrementAndGet();
    answers.incrementAndGet();
  }

  @Override
  public String toString() {
    return name;
  }
}
