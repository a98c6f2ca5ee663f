package io.talos.server.scheduling;

/**
 * How busy the machine's CPUs were, and how much of them this process used, since the previous
 * sample: what {@link ThreadSlicePolicy} decides on. One caller at a time (each sample consumes
 * the interval since the previous one).
 */
public interface CpuUse {

  /**
   * Both as fractions of the whole machine's CPU time in the interval (0 to 1: 0.5 on a 2-core
   * machine is one core's worth); NaN where not known.
   *
   * @param machineBusy CPU time spent by every process (and the kernel) on all cores
   * @param process CPU time spent by this process
   */
  record Sample(double machineBusy, double process) {}

  Sample sample();
}
