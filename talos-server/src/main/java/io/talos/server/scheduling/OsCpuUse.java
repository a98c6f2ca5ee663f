package io.talos.server.scheduling;

import java.lang.management.ManagementFactory;

/**
 * {@link CpuUse} as the JVM's platform bean measures it ({@code com.sun.management}'s {@code
 * getCpuLoad} and {@code getProcessCpuLoad}: on Linux from {@code /proc/stat} and the process's
 * own times, within a container from its cgroup, each since that method's previous call). NaN on a
 * JVM without that bean. The bean is one per JVM and so is its "previous call": several samplers in
 * one JVM (servers embedded in a test) each see the interval since any of them last sampled, a
 * shorter window of the same load. One caller at a time, as {@link CpuUse} says.
 */
public final class OsCpuUse implements CpuUse {
  private final com.sun.management.OperatingSystemMXBean os;

  public OsCpuUse() {
    java.lang.management.OperatingSystemMXBean bean = ManagementFactory.getOperatingSystemMXBean();
    this.os = bean instanceof com.sun.management.OperatingSystemMXBean b ? b : null;
  }

  @Override
  public Sample sample() {
    if (os == null) return new Sample(Double.NaN, Double.NaN);
    return new Sample(fraction(os.getCpuLoad()), fraction(os.getProcessCpuLoad()));
  }

  /** The bean answers a negative value when it has nothing yet. */
  private static double fraction(double load) {
    return load < 0 ? Double.NaN : load;
  }
}
