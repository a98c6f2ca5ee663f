package io.talos.server.cluster;

import java.util.List;

/**
 * How a node's measured load scales its share of the ring: the traffic factor of each ACTIVE
 * member, a pure function of the members as the view lists them, so every node that applies the
 * same view computes the same factors (and so the same map).
 *
 * <p>The rule, in order:
 * <ol>
 *   <li>If any ACTIVE member does not take part in shedding ({@link NodeInfo#loadShedding()} false:
 *       {@code cluster.assignment.load.shedding.enabled=false}, or a node of a release that
 *       publishes no load), every factor is 1: the map is the capacity-only map. So one node is
 *       enough to turn shedding off for the whole cluster, and a mixed cluster never disagrees.
 *   <li>Each member's load per unit of capacity is {@code max(load / capacity, floorPerSec)}: loads
 *       below the floor count as the floor, so an idle or lightly used cluster (a few probe
 *       requests) never sheds.
 *   <li>{@code mean} is the mean of those over the ACTIVE members; a member at or below the mean
 *       has factor 1, one above it {@code mean / its load}.
 *   <li>That is rounded to the nearest multiple of {@code 1 / steps} and clamped to {@code
 *       [minPercent / 100, 1]}: a few levels only, so small changes of load move nothing.
 * </ol>
 * Equal loads give factor 1 everywhere: exactly the capacity-only map. The arithmetic is IEEE
 * double in a fixed order (members sorted by id), the same in every JVM.
 *
 * <p>{@code minPercent}, {@code steps} and {@code floorPerSec} are part of the map: every node must
 * be configured alike (as {@code cluster.assignment.vnodes.per.capacity}).
 *
 * @param minPercent the smallest factor, in percent of the node's full weight (1-100)
 * @param steps factors are multiples of {@code 1 / steps} (1 = no shedding above the minimum)
 * @param floorPerSec loads per unit of capacity below this (requests/s) count as this
 */
public record LoadFactors(int minPercent, int steps, long floorPerSec) {
  /** Capacity only: every factor 1 (what a cluster without shedding uses). */
  public static final LoadFactors NONE = new LoadFactors(100, 1, 0);

  public LoadFactors {
    if (minPercent < 1 || minPercent > 100) throw new IllegalArgumentException("minPercent must be 1-100: " + minPercent);
    if (steps < 1) throw new IllegalArgumentException("steps must be >= 1: " + steps);
    if (floorPerSec < 0) throw new IllegalArgumentException("floorPerSec must be >= 0: " + floorPerSec);
  }

  /** The factor of each of {@code active} (ACTIVE members, sorted by id), in the same order. */
  public double[] factors(List<NodeInfo> active) {
    double[] factors = new double[active.size()];
    java.util.Arrays.fill(factors, 1.0);
    if (minPercent == 100 || active.isEmpty() || !active.stream().allMatch(NodeInfo::loadShedding)) return factors;
    double[] perCapacity = new double[active.size()];
    double sum = 0;
    for (int i = 0; i < active.size(); i++) {
      NodeInfo n = active.get(i);
      perCapacity[i] = Math.max(n.load() / n.capacity(), floorPerSec);
      sum += perCapacity[i];
    }
    double mean = sum / active.size();
    double min = minPercent / 100.0;
    for (int i = 0; i < active.size(); i++) {
      if (perCapacity[i] <= mean || perCapacity[i] <= 0) continue;
      double quantized = Math.round(mean / perCapacity[i] * steps) / (double) steps;
      factors[i] = Math.min(1.0, Math.max(min, quantized));
    }
    return factors;
  }
}
