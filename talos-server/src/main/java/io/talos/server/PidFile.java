package io.talos.server;

import io.talos.common.config.ConfigException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The file naming the process id of a running server ({@code --pid-file}): written by the server
 * once it serves, removed by its clean shutdown, read by {@code talos stop}. A file left behind by
 * a killed server names a process that is gone (or another program that got its id), so
 * {@link #runningServer()} only counts a live process whose command line is a Talos server.
 *
 * <p>Not thread-safe; one server writes its own file.
 */
public final class PidFile {
  /** Appears in the command line of every server process (bin/talos and the daemon launcher). */
  static final String SERVER_MAIN_CLASS = TalosServerMain.class.getName();

  private final Path path;

  public PidFile(Path path) {
    this.path = path.toAbsolutePath().normalize();
  }

  public Path path() {
    return path;
  }

  /** The pid the file names; empty when there is no file. */
  public OptionalLong read() {
    String text;
    try {
      text = Files.readString(path, StandardCharsets.US_ASCII).trim();
    } catch (NoSuchFileException e) {
      return OptionalLong.empty();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the pid file " + path, e);
    }
    try {
      return OptionalLong.of(Long.parseLong(text));
    } catch (NumberFormatException e) {
      throw new ConfigException("pid file " + path + " does not hold a process id: '" + text + "'");
    }
  }

  /** The live Talos server the file names, if any. */
  public Optional<ProcessHandle> runningServer() {
    OptionalLong pid = read();
    if (pid.isEmpty()) return Optional.empty();
    return ProcessHandle.of(pid.getAsLong()).filter(ProcessHandle::isAlive).filter(PidFile::isTalosServer);
  }

  /**
   * Whether {@code process} runs {@link TalosServerMain}. Linux's /proc/PID/cmdline holds the whole
   * command line (the JDK's {@code ProcessHandle.Info} may cut a long class path before the main
   * class). A process whose command line we cannot see counts as a server: never start a second
   * one beside it.
   */
  static boolean isTalosServer(ProcessHandle process) {
    Path cmdline = Path.of("/proc", Long.toString(process.pid()), "cmdline");
    try {
      if (Files.isReadable(cmdline)) {
        return new String(Files.readAllBytes(cmdline), StandardCharsets.UTF_8).contains(SERVER_MAIN_CLASS);
      }
    } catch (IOException e) {
      // gone, or not ours to read: fall back to what the JDK can see
    }
    return process.info().commandLine().map(c -> c.contains(SERVER_MAIN_CLASS)).orElse(true);
  }

  /**
   * Refuses to go on when the file names a running server.
   *
   * @throws ConfigException naming the file and the pid
   */
  public void checkNotRunning() {
    Optional<ProcessHandle> running = runningServer();
    if (running.isPresent() && running.get().pid() != ProcessHandle.current().pid()) {
      throw new ConfigException("pid file " + path + " names a running Talos server (pid " + running.get().pid()
          + "); stop it first (bin/talos stop --pid-file " + path + ")");
    }
  }

  /** Writes this process's id, atomically (a reader never sees a half-written file). */
  public void writeCurrent() {
    try {
      Files.createDirectories(path.getParent());
      Path tmp = path.resolveSibling(path.getFileName() + ".tmp");
      Files.writeString(tmp, ProcessHandle.current().pid() + "\n", StandardCharsets.US_ASCII);
      Files.move(tmp, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the pid file " + path, e);
    }
  }

  /** Removes the file if it still names this process (a newer server may have taken it over). */
  public void deleteIfCurrent() {
    try {
      if (read().orElse(-1) == ProcessHandle.current().pid()) Files.deleteIfExists(path);
    } catch (RuntimeException | IOException e) {
      // shutting down: a stale file is harmless, runningServer() ignores it
    }
  }

  public void delete() throws IOException {
    Files.deleteIfExists(path);
  }
}
