package io.talos.server.scheduling;

import java.util.List;
import java.util.stream.Collectors;

/**
 * A mergeable put: merges with other RecordingPuts, logs each batch as "batch [a, b]" and
 * acknowledges each of its tasks once. A batch headed by a put made {@link #throwing} throws
 * before acknowledging any.
 */
final class RecordingPut extends RecordingTask implements MergeableTask<RecordingPut> {
  final long sizeBytes;

  RecordingPut(String name, Object key, int priority, long deadlineMs, long sizeBytes,
      List<String> log) {
    super(name, key, priority, deadlineMs, log);
    this.sizeBytes = sizeBytes;
  }

  @Override
  public long sizeBytes() {
    return sizeBytes;
  }

  @Override
  public boolean canMergeWith(Task next) {
    return next instanceof RecordingPut;
  }

  @Override
  public void runBatch(List<RecordingPut> batch) {
    if (batch.get(0) != this) throw new AssertionError("runBatch called on " + this + ", not on the head");
    if (onRun != null) onRun.run();
    if (throwOnRun != null) throw throwOnRun;
    log.add("batch " + batch.stream().map(p -> p.name).collect(Collectors.toList()));
    for (RecordingPut put : batch) put.answers.incrementAndGet();
  }

  @Override
  public void run() {
    throw new AssertionError("the pool must call runBatch on a mergeable task, not run");
  }
}
