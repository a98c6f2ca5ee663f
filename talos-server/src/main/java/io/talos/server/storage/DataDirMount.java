package io.talos.server.storage;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The mount that holds a local data directory, as Linux lists it in {@code /proc/self/mountinfo},
 * and what about it makes appends wait.
 *
 * <p>Why it matters: with the {@code discard} mount option the kernel tells the device about every
 * block it frees at the moment it frees it. On ext4 without a journal it does so synchronously, in
 * the thread that frees the block, and that thread can be the kernel's write-back of a segment
 * converting the extents it just wrote, holding the file's block-map lock; the next append that
 * needs a new block of that file then waits for the device. The kernel's tracer caught this on the
 * project's VMs behind bursts of puts of 20-55 ms, in the second after a segment was first written
 * back. With a journal, ext4 issues the discards after the journal's commit instead; without
 * {@code discard}, {@code fstrim} run from time to time tells the device the same, in bulk. The
 * server's segment files keep that particular free from happening ({@link ExtentTreePin}); a
 * segment's deletion, and other files on the same file system, still discard one block range at
 * a time, so the advice stands.
 *
 * <p>The same lock is held while the write-back allocates a segment's blocks (ext4 allocates a
 * buffered write's blocks only when writing it back), and the allocator may first have to read a
 * block group's bitmap from the device. ext4 reads them all in the background after mounting,
 * unless mounted with {@code no_prefetch_block_bitmaps}; with it, the first allocation in each
 * group reads its bitmap on demand, and the tracer caught an append waiting 21.6 ms behind such a
 * read (23.5 ms on a loaded VM). The server then has them loaded at start itself ({@link
 * BlockBitmapPreload}), unless told not to.
 *
 * <p>Only advice: nothing here changes what is stored or when a put is acknowledged.
 *
 * @param mountPoint where the file system is mounted
 * @param fsType its type, e.g. {@code ext4}
 * @param source the device (or what stands for it), e.g. {@code /dev/vda}
 * @param device the file system's device number, {@code major:minor}, e.g. {@code 254:0}
 * @param options the mount's and the file system's options together, e.g. {@code rw}, {@code
 *     discard}
 */
public record DataDirMount(String mountPoint, String fsType, String source, String device, Set<String> options) {
  private static final Path MOUNTINFO = Path.of("/proc/self/mountinfo");

  /**
   * The mount that holds the existing directory {@code dir} (the deepest mount point above its real
   * path), or empty when it cannot be told (not Linux, or {@code dir} does not exist).
   */
  public static Optional<DataDirMount> of(Path dir) {
    if (!Files.isReadable(MOUNTINFO)) return Optional.empty();
    try {
      return containing(dir.toRealPath().toString(), Files.readAllLines(MOUNTINFO));
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  /**
   * The mount among {@code mountinfoLines} (in the kernel's format) whose mount point is the
   * longest prefix of {@code realPath}; the last one listed wins among equals, as it hides the
   * others.
   */
  static Optional<DataDirMount> containing(String realPath, List<String> mountinfoLines) {
    DataDirMount best = null;
    for (String line : mountinfoLines) {
      DataDirMount m = parse(line);
      if (m == null || !covers(m.mountPoint, realPath)) continue;
      if (best == null || m.mountPoint.length() >= best.mountPoint.length()) best = m;
    }
    return Optional.ofNullable(best);
  }

  /**
   * One line of mountinfo: {@code id parent major:minor root mountPoint mountOptions [optional
   * fields...] - fsType source superOptions}; null if malformed.
   */
  static DataDirMount parse(String line) {
    String[] f = line.trim().split(" ");
    int dash = -1;
    for (int i = 6; i < f.length; i++) {
      if (f[i].equals("-")) {
        dash = i;
        break;
      }
    }
    if (dash < 0 || dash + 2 >= f.length) return null;
    Set<String> options = new HashSet<>(List.of(f[5].split(",")));
    if (dash + 3 < f.length) options.addAll(List.of(f[dash + 3].split(",")));
    return new DataDirMount(unescape(f[4]), f[dash + 1], unescape(f[dash + 2]), f[2], Set.copyOf(options));
  }

  /** mountinfo writes space, tab, newline and backslash as a backslash and three octal digits. */
  private static String unescape(String s) {
    if (s.indexOf('\\') < 0) return s;
    StringBuilder out = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\' && isOctal(s, i + 1)) {
        out.append((char) Integer.parseInt(s.substring(i + 1, i + 4), 8));
        i += 3;
      } else {
        out.append(c);
      }
    }
    return out.toString();
  }

  private static boolean isOctal(String s, int from) {
    if (from + 3 > s.length()) return false;
    for (int i = from; i < from + 3; i++) {
      if (s.charAt(i) < '0' || s.charAt(i) > '7') return false;
    }
    return true;
  }

  private static boolean covers(String mountPoint, String path) {
    if (mountPoint.equals("/")) return path.startsWith("/");
    return path.equals(mountPoint) || path.startsWith(mountPoint + "/");
  }

  /** Whether the file system discards freed blocks as it frees them (the {@code discard} option). */
  public boolean discardsOnline() {
    return options.contains("discard");
  }

  /**
   * Whether ext4 reads a block group's bitmap only when an allocation first needs it (the {@code
   * no_prefetch_block_bitmaps} option).
   */
  public boolean readsBlockBitmapsOnDemand() {
    return fsType.equals("ext4") && options.contains("no_prefetch_block_bitmaps");
  }

  /**
   * What an operator should change about this mount for appends not to wait on it, one sentence
   * each; empty when nothing.
   *
   * @param bitmapsPreloaded whether the server has ext4 load the block bitmaps itself ({@link
   *     BlockBitmapPreload}): as ext4 does without {@code no_prefetch_block_bitmaps}, so the
   *     option makes no difference left to advise about
   */
  public List<String> advice(Path dataDir, boolean bitmapsPreloaded) {
    List<String> advice = new ArrayList<>();
    if (discardsOnline()) {
      advice.add("the partition logs in " + dataDir + " are on " + fsType + " " + source + " mounted at "
          + mountPoint + " with the 'discard' option: the kernel then tells the device about each"
          + " block it frees as it frees it, and an append can wait for that (puts of 20-55 ms were"
          + " traced to it on ext4 without a journal). Mount it without 'discard' and run fstrim"
          + " periodically (e.g. systemd's fstrim.timer)");
    }
    if (readsBlockBitmapsOnDemand() && !bitmapsPreloaded) {
      advice.add("the partition logs in " + dataDir + " are on ext4 " + source + " mounted at " + mountPoint
          + " with 'no_prefetch_block_bitmaps': a block group's bitmap is then read from the device when the"
          + " kernel's write-back first allocates in it, holding the segment's block-map lock, and an append can"
          + " wait for that read (21.6 ms traced on a loaded VM). Mount it without that option, so that ext4"
          + " reads the bitmaps in the background after mounting");
    }
    return advice;
  }
}
