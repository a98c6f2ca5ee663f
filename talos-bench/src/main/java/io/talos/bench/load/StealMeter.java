package io.talos.bench.load;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * CPU time the hypervisor took from this virtual machine during a measurement window: the
 * "steal" the kernel counts in {@code /proc/stat} while a virtual CPU had work but its host ran
 * something else. A stolen stretch stops every thread on that CPU (server, generator, GC) at once,
 * and neither the generator's {@link HiccupMeter} nor any process on the guest can tell it from
 * their own slowness: a timer due on that CPU fires only when the host gives it back, so the
 * generator's sends and the server's threads queued there wait the whole stretch (traced: one CPU
 * held for 100 ms, every put of those 100 ms acknowledged late, the other CPU running all along).
 * The report prints it beside the latencies, and the late puts in flight while the host held a
 * CPU are counted apart, so that a run disturbed from outside reads as such.
 *
 * <p>Samples each CPU's cumulative steal every {@link #PERIOD_NANOS}, from construction until
 * {@link #close()}: the total over the window, the most in one second, and each {@link Hold}: a CPU
 * whose steal grew by at least {@link #HOLD_MIN_MS} over consecutive samples. The kernel counts
 * steal in ticks of 10 ms ({@code USER_HZ}), and adds a stretch when the CPU runs again, in one
 * piece: each growth is placed from its amount before the sample preceding it (plus one period
 * of slack for the kernel's next tick) to the sample that saw it, which covers the stretch
 * itself, and a hold spans its growths from the earliest such start to the last sample.
 * Where the counters are not available (not Linux) it reports nothing ({@link #available()} false).
 * A {@link MeterLoop} runs {@link #step()}; {@link #close()} stops it, takes a last sample and
 * makes the figures safe to read from the closing thread.
 */
final class StealMeter implements AutoCloseable {
  static final long PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
  /**
   * The least growth of one CPU's steal that counts as a hold: two ticks, so at least 10 ms were
   * really stolen (a counter in whole ticks grows by one for anything from a few µs to 20 ms).
   */
  static final long HOLD_MIN_MS = 20;
  private static final long SECOND_NANOS = TimeUnit.SECONDS.toNanos(1);
  private static final Path PROC_STAT = Path.of("/proc/stat");
  /**
   * Ticks per second of the {@code /proc/stat} counters: USER_HZ, 100 on every Linux
   * architecture the JDK runs on (the kernel converts its own HZ to it for user space).
   */
  private static final long USER_HZ = 100;

  /**
   * One CPU taken by the host: its steal grew by {@code stolenMs} in samples that place the stretch
   * within [{@code fromNanos}, {@code toNanos}] ({@link System#nanoTime()}).
   */
  record Hold(int cpu, long stolenMs, long fromNanos, long toNanos) {
    /**
     * Whether [{@code fromNanos}, {@code toNanos}] shares an instant with the hold's interval or
     * with as long again as the stolen time after it (the backlog the hold left, as {@link
     * HiccupMeter.Stall#overlaps}).
     */
    boolean overlaps(long fromNanos, long toNanos) {
      return this.fromNanos <= toNanos && fromNanos <= this.toNanos + TimeUnit.MILLISECONDS.toNanos(stolenMs);
    }
  }

  private final Supplier<long[]> stealMillis;
  private final LongSupplier clock;
  private final LongConsumer sleep;
  private final MeterLoop loop;
  private final long[] first;
  private long[] last;
  private long lastNanos;
  private final long startNanos;
  /** Per CPU, the hold growing now (its start and amount so far), or none (amount 0). */
  private final long[] openFrom;
  private final long[] openMs;
  private final long[] openTo;
  private final List<Hold> holds = new ArrayList<>();
  private long secondIndex;
  private long secondMillis;
  private long worstSecond;

  /** Starts measuring now, from {@code /proc/stat}. */
  StealMeter(String name) {
    this(StealMeter::procStatStealMillis, System::nanoTime, LockSupport::parkNanos, name);
  }

  /**
   * @param stealMillis each CPU's cumulative steal, in ms; null when unknown
   * @param clock nanosecond clock, that of the late puts ({@link System#nanoTime()})
   * @param sleep sleeps about the nanoseconds given
   * @param name the thread's name, or null for no thread (the caller calls {@link #step()})
   */
  StealMeter(Supplier<long[]> stealMillis, LongSupplier clock, LongConsumer sleep, String name) {
    this.stealMillis = stealMillis;
    this.clock = clock;
    this.sleep = sleep;
    this.first = stealMillis.get();
    this.startNanos = clock.getAsLong();
    this.lastNanos = startNanos;
    this.last = first;
    int cpus = first == null ? 0 : first.length;
    openFrom = new long[cpus];
    openMs = new long[cpus];
    openTo = new long[cpus];
    this.loop = name == null || first == null ? null : new MeterLoop(name, this::step);
  }

  /** Sleeps one period, then samples. */
  void step() {
    sleep.accept(PERIOD_NANOS);
    sample();
  }

  private void sample() {
    if (first == null) return;
    long[] now = stealMillis.get();
    long at = clock.getAsLong();
    if (now == null || now.length != first.length) return;
    long sum = 0;
    for (int cpu = 0; cpu < now.length; cpu++) {
      long grew = now[cpu] - last[cpu];
      sum += grew;
      if (grew > 0) {
        // the stretch counted now ended after the previous sample and lasted `grew`: a later,
        // longer one may have begun before the first one counted in this hold
        long from = lastNanos - TimeUnit.MILLISECONDS.toNanos(grew) - PERIOD_NANOS;
        openFrom[cpu] = openMs[cpu] == 0 ? from : Math.min(openFrom[cpu], from);
        openMs[cpu] += grew;
        openTo[cpu] = at;
      } else {
        closeHold(cpu);
      }
    }
    long index = (at - startNanos) / SECOND_NANOS;
    if (index != secondIndex) {
      secondIndex = index;
      secondMillis = 0;
    }
    secondMillis += sum;
    worstSecond = Math.max(worstSecond, secondMillis);
    last = now;
    lastNanos = at;
  }

  private void closeHold(int cpu) {
    if (openMs[cpu] >= HOLD_MIN_MS) holds.add(new Hold(cpu, openMs[cpu], openFrom[cpu], openTo[cpu]));
    openMs[cpu] = 0;
  }

  /** Stops the thread and takes the window's last sample. */
  @Override
  public void close() throws InterruptedException {
    if (loop != null) loop.stop();
    sample();
    for (int cpu = 0; cpu < openMs.length; cpu++) closeHold(cpu);
  }

  /** Whether the machine counts steal (read after {@link #close()}). */
  boolean available() {
    return first != null;
  }

  /** CPU time stolen over the window, all CPUs, ms (read after {@link #close()}). */
  long totalMillis() {
    if (!available()) return 0;
    long sum = 0;
    for (int cpu = 0; cpu < first.length; cpu++) sum += last[cpu] - first[cpu];
    return sum;
  }

  /** The most stolen in one second of the window, all CPUs, ms (read after {@link #close()}). */
  long worstSecondMillis() {
    return worstSecond;
  }

  /** Each time the host held one CPU for {@link #HOLD_MIN_MS} or more, in order (read after {@link #close()}). */
  List<Hold> holds() {
    return List.copyOf(holds);
  }

  /** The longest hold of one CPU, ms; 0 when none (read after {@link #close()}). */
  long longestHoldMillis() {
    return holds.stream().mapToLong(Hold::stolenMs).max().orElse(0);
  }

  /**
   * Each CPU's cumulative steal from {@code /proc/stat}, ms, or null where there is none. Read a
   * hundred times a second on a machine under measurement, so into one reused buffer and parsed
   * without building strings: the file is 1-2 KiB on a small machine (its per-CPU lines come first
   * and are all this reads), the kernel writes it anew on each open.
   */
  static long[] procStatStealMillis() {
    byte[] buf = READ_BUFFER.get();
    try (FileChannel ch = FileChannel.open(PROC_STAT, StandardOpenOption.READ)) {
      ByteBuffer b = ByteBuffer.wrap(buf);
      while (b.hasRemaining() && ch.read(b) > 0) {
        // the per-CPU lines of a large machine may not fit: parse what fits, as far as whole lines go
      }
      return parseStealMillis(buf, b.position());
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  private static final ThreadLocal<byte[]> READ_BUFFER = ThreadLocal.withInitial(() -> new byte[64 * 1024]);

  /**
   * The steal of each {@code cpuN} line in the first {@code length} bytes of {@code /proc/stat}
   * ({@code cpuN user nice system idle iowait irq softirq steal ...}, in USER_HZ ticks), in ms, in
   * the lines' order; a line cut off by {@code length} ends the list. Null when there is no such
   * line or one has no steal field (kernels before 2.6.11).
   */
  static long[] parseStealMillis(byte[] text, int length) {
    long[] ms = new long[16];
    int cpus = 0;
    int i = 0;
    while (i < length) {
      int end = i;
      while (end < length && text[end] != '\n') end++;
      if (end == length) break; // a cut-off line
      if (end - i > 3 && text[i] == 'c' && text[i + 1] == 'p' && text[i + 2] == 'u' && isDigit(text[i + 3])) {
        long steal = field(text, i, end, 8);
        if (steal < 0) return null;
        if (cpus == ms.length) ms = Arrays.copyOf(ms, cpus * 2);
        ms[cpus++] = steal * 1000 / USER_HZ;
      } else if (cpus > 0) {
        break; // past the per-CPU lines
      }
      i = end + 1;
    }
    return cpus == 0 ? null : Arrays.copyOf(ms, cpus);
  }

  /** The {@code index}th space-separated field of the line [from, to) as a number, or -1 if it has none. */
  private static long field(byte[] text, int from, int to, int index) {
    int i = from;
    for (int f = 0; f < index; f++) {
      while (i < to && text[i] != ' ') i++;
      while (i < to && text[i] == ' ') i++;
    }
    if (i == to || !isDigit(text[i])) return -1;
    long v = 0;
    while (i < to && isDigit(text[i])) v = v * 10 + (text[i++] - '0');
    return v;
  }

  private static boolean isDigit(byte b) {
    return b >= '0' && b <= '9';
  }
}
