package io.talos.bench.load;

import com.sun.tools.attach.AgentInitializationException;
import com.sun.tools.attach.AgentLoadException;
import com.sun.tools.attach.AttachNotSupportedException;
import com.sun.tools.attach.VirtualMachine;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * async-profiler in the Talos server JVM ({@code bin/talos bench ... --profile}): CPU, allocation
 * and wall-clock flame graphs (HTML) of a measurement window, written next to the results.
 *
 * <p>The native library comes from the {@code tools.profiler:async-profiler} jar on the bench's
 * classpath ({@code linux-x64/libasyncProfiler.so}), is copied to the work directory and loaded
 * into the server process through the JDK Attach API, once per command ({@code start,...} then
 * {@code stop,file=...}), as async-profiler's own launcher does. A process runs one profiling
 * session at a time, so a window of {@code seconds} is cut into three equal slices, profiled in
 * turn: CPU ({@code event=cpu}, 1 ms), allocation ({@code event=alloc}, TLAB-driven samples) and
 * wall clock ({@code event=wall}, 5 ms, per thread, so that threads waiting on a lock, a flush or
 * a queue show up). Each graph also comes as {@code .collapsed} text (a stack per line with its
 * sample count) for scripts and diffs. The scenario is in its steady state throughout, so each slice is a sample of
 * the same load.
 *
 * <p>Thread-safety: one window at a time; {@link Window#close()} waits for it to finish.
 */
public final class ServerProfiler {
  /** One flame graph per mode; the option string async-profiler starts with. */
  enum Mode {
    CPU("cpu", "event=cpu,interval=1ms"),
    ALLOC("alloc", "event=alloc"),
    WALL("wall", "event=wall,interval=5ms,threads");

    final String fileSuffix;
    final String options;

    Mode(String fileSuffix, String options) {
      this.fileSuffix = fileSuffix;
      this.options = options;
    }
  }

  private final Path library;
  private final long pid;
  private final Path dir;
  private final Progress progress;

  /**
   * @param workDir where the native library is copied (deleted with it)
   * @param dir where the flame graphs go; created if missing
   */
  ServerProfiler(Path workDir, long pid, Path dir, Progress progress) throws IOException {
    this.library = extractLibrary(workDir);
    this.pid = pid;
    this.dir = Files.createDirectories(dir);
    this.progress = progress;
  }

  /** Copies the linux-x64 library out of the async-profiler jar. */
  public static Path extractLibrary(Path workDir) throws IOException {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch", "");
    if (!os.contains("linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
      throw new IOException("--profile needs linux-x64 (the library bundled in the async-profiler jar); this is "
          + os + "/" + arch);
    }
    Path lib = workDir.resolve("libasyncProfiler.so");
    if (Files.exists(lib)) return lib;
    try (InputStream in = ServerProfiler.class.getClassLoader().getResourceAsStream("linux-x64/libasyncProfiler.so")) {
      if (in == null) {
        throw new IOException("linux-x64/libasyncProfiler.so is not on the classpath: is"
            + " tools.profiler:async-profiler in talos-bench/target/lib?");
      }
      Files.copy(in, lib, StandardCopyOption.REPLACE_EXISTING);
    }
    return lib;
  }

  /** Runs one async-profiler command in the server process. */
  void execute(String command) throws IOException {
    execute(pid, library, command);
  }

  /**
   * Runs one async-profiler command (e.g. {@code start,event=cpu}) in the JVM {@code pid}, loading
   * {@code library} (from {@link #extractLibrary}) through the Attach API.
   */
  public static void execute(long pid, Path library, String command) throws IOException {
    VirtualMachine vm;
    try {
      vm = VirtualMachine.attach(Long.toString(pid));
    } catch (AttachNotSupportedException e) {
      throw new IOException("cannot attach to the server JVM " + pid + ": " + e.getMessage(), e);
    }
    try {
      vm.loadAgentPath(library.toString(), command);
    } catch (AgentInitializationException e) {
      throw new IOException("async-profiler refused '" + command + "' (code " + e.returnValue() + "); see the"
          + " server log for its message", e);
    } catch (AgentLoadException e) {
      throw new IOException("cannot load " + library + " into the server JVM " + pid + ": " + e.getMessage(), e);
    } finally {
      vm.detach();
    }
  }

  /**
   * Profiles the window that starts at {@code startNanos} (a {@link System#nanoTime()}, which may
   * read {@link Long#MAX_VALUE} until it is known: a measured window that begins once a warm-up
   * has drained) and lasts {@code seconds}, in a background thread; the flame graphs are {@code
   * <label>-cpu.html}, {@code -alloc.html} and {@code -wall.html}.
   */
  Window window(String label, java.util.function.LongSupplier startNanos, double seconds) {
    Window w = new Window(label, startNanos, seconds);
    w.thread.start();
    return w;
  }

  /**
   * Profiles one mode from now until the returned handle is closed, for a phase of unknown length
   * (a read-back): {@code <label>-<mode>.html}.
   */
  AutoCloseable until(String label, Mode mode) throws IOException {
    String safe = label.replaceAll("[^A-Za-z0-9._-]+", "-");
    Path file = dir.resolve(safe + "-" + mode.fileSuffix + ".html");
    execute("start," + mode.options);
    return () -> {
      execute("dump,collapsed,file=" + dir.resolve(safe + "-" + mode.fileSuffix + ".collapsed"));
      execute("stop,file=" + file + ",title=" + safe + "-" + mode.fileSuffix);
      progress.note("flame graph " + file.toAbsolutePath());
    };
  }

  /** A profiled window; {@link #close()} waits for its flame graphs. */
  final class Window implements AutoCloseable {
    private final Thread thread;
    private final List<Path> written = new ArrayList<>();
    private volatile Exception failure;
    /** Whether the window began: a scenario that failed before its start closes it at once. */
    private volatile boolean started;

    private Window(String label, java.util.function.LongSupplier startNanos, double seconds) {
      String safe = label.replaceAll("[^A-Za-z0-9._-]+", "-");
      long sliceMs = Math.max(1, (long) (seconds * 1000 / Mode.values().length));
      thread = new Thread(() -> {
        try {
          long start;
          while ((start = startNanos.getAsLong()) == Long.MAX_VALUE) Thread.sleep(5);
          long wait;
          while ((wait = start - System.nanoTime()) > 0) Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
          started = true;
          for (Mode m : Mode.values()) {
            Path file = dir.resolve(safe + "-" + m.fileSuffix + ".html");
            execute("start," + m.options);
            try {
              Thread.sleep(sliceMs);
              // the same samples as text (one stack per line with its count), for diffs and scripts
              execute("dump,collapsed,file=" + dir.resolve(safe + "-" + m.fileSuffix + ".collapsed"));
            } finally {
              execute("stop,file=" + file + ",title=" + safe + "-" + m.fileSuffix);
            }
            synchronized (written) {
              written.add(file);
            }
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        } catch (Exception e) {
          failure = e;
        }
      }, "bench-profiler-" + safe);
      thread.setDaemon(true);
    }

    /** Waits for the window (at most a minute after it should have ended) and notes the files. */
    @Override
    public void close() throws InterruptedException {
      if (!started) thread.interrupt(); // never began (the scenario ended first): nothing to wait for
      thread.join(60_000);
      if (thread.isAlive()) {
        thread.interrupt();
        thread.join(5_000);
      }
      synchronized (written) {
        for (Path p : written) progress.note("flame graph " + p.toAbsolutePath());
      }
      if (failure != null) progress.note("profiling failed: " + failure.getMessage());
    }
  }
}
