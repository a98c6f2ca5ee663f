package io.talos.client.consumer.internals;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

/**
 * The balancing rule of the Talos SDK 2.0.2's {@code TalosConsumer}, reproduced exactly so that a
 * group can mix both consumers: every worker applies it to the same view (the live workers and
 * the partitions each holds, from {@code queryWorker}) and they converge to ⌊P/W⌋ or ⌈P/W⌉
 * partitions each.
 *
 * <ol>
 *   <li>Targets: with W workers and P partitions, {@code P mod W} targets of ⌊P/W⌋+1 and the rest
 *       ⌊P/W⌋, sorted descending; with one worker [P]; with P &lt; W, P targets of 1.</li>
 *   <li>Workers sorted by partitions held, descending, then by worker id, descending (the SDK's
 *       {@code WorkerPair.compareTo}); a worker's target is the one at its position (none, so no
 *       change, if the position is beyond the targets).</li>
 *   <li>Holding more than the target: release the first {@code held - target} of the partitions
 *       it holds. Fewer: lock {@code target - held} partitions chosen at random among the idle
 *       ones (held by no live worker). Each worker takes one step per check; a few checks
 *       converge.</li>
 * </ol>
 *
 * <p>Stateless and thread-safe (the {@link Random} passed in is used by the caller's thread).
 */
public final class GroupBalancer {
  private GroupBalancer() {}

  /** What one worker should do now. */
  public record Decision(List<Integer> toLock, List<Integer> toRelease) {
    public boolean isEmpty() {
      return toLock.isEmpty() && toRelease.isEmpty();
    }
  }

  /** The SDK's target list for {@code partitions} over {@code workers}. */
  public static List<Integer> targets(int partitions, int workers) {
    List<Integer> targets = new ArrayList<>();
    if (workers == 1) {
      targets.add(partitions);
    } else if (partitions < workers) {
      for (int i = 0; i < partitions; i++) targets.add(1);
    } else {
      int min = partitions / workers;
      int remainder = partitions % workers;
      for (int i = 0; i < remainder; i++) targets.add(min + 1);
      for (int i = 0; i < workers - remainder; i++) targets.add(min);
    }
    targets.sort(Collections.reverseOrder());
    return targets;
  }

  /**
   * @param self this worker's id; a view without it yields no change
   * @param partitions the topic's partition count
   * @param workers live workers and the partitions each holds, as queryWorker answers
   * @param held the partitions this worker holds, in the order it took them
   */
  public static Decision decide(String self, int partitions, Map<String, List<Integer>> workers,
      List<Integer> held, Random random) {
    if (!workers.containsKey(self) || partitions <= 0) return new Decision(List.of(), List.of());
    List<Integer> targets = targets(partitions, workers.size());
    List<Map.Entry<String, List<Integer>>> order = new ArrayList<>(workers.entrySet());
    order.sort(Comparator.<Map.Entry<String, List<Integer>>>comparingInt(e -> e.getValue().size())
        .reversed().thenComparing(Map.Entry::getKey, Comparator.reverseOrder()));
    int index = 0;
    while (!order.get(index).getKey().equals(self)) index++;
    if (index >= targets.size()) return new Decision(List.of(), List.of());
    int target = targets.get(index);
    int has = held.size();
    if (has > target) {
      return new Decision(List.of(), List.copyOf(held.subList(0, has - target)));
    }
    if (has < target) {
      Set<Integer> taken = new TreeSet<>();
      workers.values().forEach(taken::addAll);
      taken.addAll(held);
      List<Integer> idle = new ArrayList<>();
      for (int p = 0; p < partitions; p++) {
        if (!taken.contains(p)) idle.add(p);
      }
      List<Integer> lock = new ArrayList<>();
      for (int n = target - has; n > 0 && !idle.isEmpty(); n--) {
        lock.add(idle.remove(random.nextInt(idle.size())));
      }
      return new Decision(lock, List.of());
    }
    return new Decision(List.of(), List.of());
  }
}
