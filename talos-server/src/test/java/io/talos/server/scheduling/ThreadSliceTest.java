package io.talos.server.scheduling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.codahale.metrics.MetricRegistry;
import io.talos.server.frontend.SlicedThreadPool;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The slice requests against the running kernel: each one is read back twice, through {@code
 * sched_getattr} and through the kernel's own per-thread report ({@code /proc/thread-self/sched}).
 * Needs Linux 6.12 or later (custom slices of normal-class threads); skipped elsewhere.
 */
class ThreadSliceTest {

  @BeforeAll
  static void customSlicesExist() {
    assumeTrue(ThreadSlice.unavailableReason() == null, () -> "slices unavailable: " + ThreadSlice.unavailableReason());
    Matcher m = Pattern.compile("^(\\d+)\\.(\\d+)").matcher(System.getProperty("os.version"));
    assumeTrue(m.find() && (Integer.parseInt(m.group(1)) > 6
        || (Integer.parseInt(m.group(1)) == 6 && Integer.parseInt(m.group(2)) >= 12)),
        "custom slices need Linux 6.12 or later, this is " + System.getProperty("os.version"));
  }

  /** The calling thread's slice as the kernel reports it in /proc, in ns. */
  static long procSliceNanos() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/thread-self/sched"))) {
      if (line.startsWith("se.slice")) return Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
    }
    throw new AssertionError("no se.slice line in /proc/thread-self/sched");
  }

  /** Runs {@code body} on a thread of its own (a slice set here must not stay on a test thread). */
  private static <T> T onNewThread(java.util.concurrent.Callable<T> body) throws Exception {
    AtomicReference<Object> out = new AtomicReference<>();
    Thread t = new Thread(() -> {
      try {
        out.set(body.call());
      } catch (Throwable e) {
        out.set(e);
      }
    });
    t.start();
    t.join(10_000);
    if (out.get() instanceof Throwable e) throw new AssertionError(e);
    @SuppressWarnings("unchecked")
    T result = (T) out.get();
    return result;
  }

  @Test
  void aRequestedSliceIsWhatTheKernelThenApplies() throws Exception {
    long[] seen = onNewThread(() -> {
      long before = procSliceNanos();
      boolean applied = ThreadSlice.setForCurrentThread(250);
      return new long[] {before, applied ? 1 : 0, ThreadSlice.ofCurrentThreadNanos(), procSliceNanos()};
    });
    assertTrue(seen[0] != 250_000, "the default slice was already 250 us: the test proves nothing");
    assertEquals(1, seen[1]);
    assertEquals(250_000, seen[2]);
    assertEquals(250_000, seen[3]);
  }

  @Test
  void zeroGivesTheDefaultBack() throws Exception {
    long[] seen = onNewThread(() -> {
      long before = procSliceNanos();
      ThreadSlice.setForCurrentThread(250);
      long during = procSliceNanos();
      return new long[] {before, during, ThreadSlice.setForCurrentThread(0) ? 1 : 0, procSliceNanos()};
    });
    assertEquals(250_000, seen[1]);
    assertEquals(1, seen[2]);
    assertEquals(seen[0], seen[3]);
  }

  @Test
  void aThreadStartedFromASlicedOneGetsTheDefault() throws Exception {
    long[] seen = onNewThread(() -> {
      long before = procSliceNanos();
      ThreadSlice.setForCurrentThread(250);
      return new long[] {before, procSliceNanos(), onNewThread(ThreadSliceTest::procSliceNanos)};
    });
    assertEquals(250_000, seen[1]);
    assertEquals(seen[0], seen[2], "the started thread must not inherit the short slice");
  }

  @Test
  void aroundLetsTheThreadsATaskStartsInheritIt() throws Exception {
    CompletableFuture<long[]> seen = new CompletableFuture<>();
    Thread t = new Thread(ThreadSlice.around(250, () -> {
      try {
        seen.complete(new long[] {procSliceNanos(), onNewThread(ThreadSliceTest::procSliceNanos)});
      } catch (Exception e) {
        seen.completeExceptionally(e);
      }
    }));
    t.start();
    assertEquals(250_000L, seen.get(10, TimeUnit.SECONDS)[0]);
    assertEquals(250_000L, seen.get()[1]);
  }

  @Test
  void keepsTheNiceValue() throws Exception {
    // nice 5 is allowed to anyone; the slice call must not reset it to 0 (which would need a privilege)
    int[] seen = onNewThread(() -> {
      int tid = Integer.parseInt(Path.of("/proc/thread-self").toRealPath().getFileName().toString());
      Process renice = new ProcessBuilder("renice", "-n", "5", "-p", Integer.toString(tid)).start();
      if (renice.waitFor() != 0) return new int[] {-1, 0};
      ThreadSlice.setForCurrentThread(400);
      String stat = Files.readString(Path.of("/proc/thread-self/stat"));
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      return new int[] {Integer.parseInt(f[16]), (int) (procSliceNanos() / 1000)}; // field 19: nice
    });
    assumeTrue(seen[0] != -1, "renice not available");
    assertEquals(5, seen[0]);
    assertEquals(400, seen[1]);
  }

  @Test
  void refusesWhatTheKernelWouldNotTake() {
    for (int bad : new int[] {-1, 99, 100_001}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> ThreadSlice.setForCurrentThread(bad));
      assertEquals("thread slice " + bad + " us must be 0 or between 100 and 100000", e.getMessage());
    }
  }

  /** The slice a task sees on a worker of a pool with {@code config}, in ns. */
  private static long sliceOnAWorker(PoolConfig config) throws Exception {
    TaskPool pool = TaskPool.create(config, Clock.systemUTC(), new MetricRegistry(), true);
    try {
      return sliceOnAWorker(pool);
    } finally {
      pool.close();
    }
  }

  /** The slice the next task sees on a worker of {@code pool}, in ns. */
  private static long sliceOnAWorker(TaskPool pool) throws Exception {
    CompletableFuture<Long> seen = new CompletableFuture<>();
    RecordingTask task = new RecordingTask("t", "p0", 0, Task.NO_DEADLINE, new CopyOnWriteArrayList<>()).onRun(() -> {
      try {
        seen.complete(procSliceNanos());
      } catch (IOException e) {
        seen.completeExceptionally(e);
      }
    });
    assertEquals(Admission.ACCEPTED, pool.submit(task));
    return seen.get(10, TimeUnit.SECONDS);
  }

  @Test
  void aContendedPolicyMovesAWorkerAtItsNextTask() throws Exception {
    double[] use = {1.0, 0.1}; // machine busy, this process: fractions of the machine
    ThreadSlicePolicy slices = new ThreadSlicePolicy(300, ThreadSlicePolicy.When.CONTENDED, 0.9, 0.35,
        () -> new CpuUse.Sample(use[0], use[1]), 1000);
    long defaultSlice = onNewThread(ThreadSliceTest::procSliceNanos);
    TaskPool pool = TaskPool.create(PoolConfig.builder().workers(1).threadSlices(slices).build(), Clock.systemUTC(),
        new MetricRegistry(), true);
    try {
      assertEquals(defaultSlice, sliceOnAWorker(pool), "no sample yet: the default");
      assertEquals(300, slices.runOnce()); // other work fills the machine
      assertEquals(300_000L, sliceOnAWorker(pool));
      use[1] = 0.6; // this process fills it
      assertEquals(0, slices.runOnce());
      assertEquals(defaultSlice, sliceOnAWorker(pool));
      assertEquals(2, slices.switches());
    } finally {
      pool.close();
    }
  }

  @Test
  void taskPoolWorkersAskForTheConfiguredSlice() throws Exception {
    assertEquals(300_000L, sliceOnAWorker(PoolConfig.builder().workers(2).threadSlices(ThreadSlicePolicy.always(300)).build()));
  }

  @Test
  void httpThreadsAskForTheConfiguredSlice() throws Exception {
    SlicedThreadPool threads = new SlicedThreadPool(8, ThreadSlicePolicy.always(350));
    threads.start();
    try {
      CompletableFuture<Long> seen = new CompletableFuture<>();
      threads.execute(() -> {
        try {
          seen.complete(procSliceNanos());
        } catch (IOException e) {
          seen.completeExceptionally(e);
        }
      });
      assertEquals(350_000L, seen.get(10, TimeUnit.SECONDS));
      assertTrue(Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().startsWith(threads.getName())),
          "Jetty's thread naming kept");
    } finally {
      threads.stop();
    }
  }

  @Test
  void withoutASliceThreadsKeepTheDefault() throws Exception {
    long defaultSlice = onNewThread(ThreadSliceTest::procSliceNanos);
    assertFalse(defaultSlice == 0);
    assertEquals(defaultSlice, sliceOnAWorker(PoolConfig.builder().workers(1).build()));
  }
}
