package io.talos.server.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BlockBitmapPreloadTest {
  private static final DataDirMount ON_DEMAND = DataDirMount.parse(
      "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,no_prefetch_block_bitmaps,resv_strict");

  /** A /sys/dev/block and a /proc/fs/ext4 as the kernel lays them out, for device 254:0 named vda. */
  private static Path[] kernelFiles(Path root, String groups) throws Exception {
    Path sys = Files.createDirectories(root.resolve("sys/dev/block"));
    Files.createSymbolicLink(sys.resolve("254:0"), Path.of("../../devices/pci0000:00/0000:00:02.0/virtio1/block/vda"));
    Path proc = Files.createDirectories(root.resolve("proc/fs/ext4"));
    Files.createDirectories(proc.resolve("vda"));
    if (groups != null) Files.writeString(proc.resolve("vda/mb_groups"), groups);
    return new Path[] {proc, sys};
  }

  @Test
  void theGroupsFileIsNamedAfterTheKernelsNameOfTheMountsDevice(@TempDir Path root) throws Exception {
    Path[] k = kernelFiles(root, "#group: free  frags first [ 2^0 ]\n");
    assertEquals(Optional.of(k[0].resolve("vda/mb_groups")), BlockBitmapPreload.groupsFile(ON_DEMAND, k[0], k[1]));
  }

  @Test
  void noPreloadWhereExt4PrefetchesItselfOrTheFilesAreMissing(@TempDir Path root) throws Exception {
    Path[] k = kernelFiles(root, null);
    assertTrue(BlockBitmapPreload.groupsFile(ON_DEMAND, k[0], k[1]).isEmpty(), "no mb_groups");
    DataDirMount otherDevice = DataDirMount.parse(
        "27 1 259:7 / / rw - ext4 /dev/nvme0n1 rw,no_prefetch_block_bitmaps");
    assertTrue(BlockBitmapPreload.groupsFile(otherDevice, k[0], k[1]).isEmpty(), "no such device number");
    Files.writeString(k[0].resolve("vda/mb_groups"), "");
    DataDirMount prefetching = DataDirMount.parse("27 1 254:0 / / rw - ext4 /dev/vda rw,discard");
    assertTrue(BlockBitmapPreload.groupsFile(prefetching, k[0], k[1]).isEmpty());
    DataDirMount xfs = DataDirMount.parse("27 1 254:0 / / rw - xfs /dev/vda rw,no_prefetch_block_bitmaps");
    assertTrue(BlockBitmapPreload.groupsFile(xfs, k[0], k[1]).isEmpty());
  }

  @Test
  void runReadsTheListToItsEndAndCountsEveryGroup(@TempDir Path root) throws Exception {
    String groups = String.join("\n",
        "#group: free  frags first [ 2^0   2^1   2^2   2^3   2^4   2^5   2^6   2^7   2^8   2^9   2^10  2^11  2^12  2^13  ]",
        "#0    : 2372  6     30414 [ 2     1     1     0     1     2     0     2     0     0     0     1     0     0     ]",
        "#1    : I/O error",
        "#2    : 32768 1     0     [ 0     0     0     0     0     0     0     0     0     0     0     0     0     4     ]",
        "");
    Path[] k = kernelFiles(root, groups);
    BlockBitmapPreload p = new BlockBitmapPreload(BlockBitmapPreload.groupsFile(ON_DEMAND, k[0], k[1]).orElseThrow());
    assertEquals(-1, p.groups(), "not read yet");
    p.run();
    assertEquals(3, p.groups());
    assertEquals(1, p.failedGroups());
    assertTrue(p.elapsedMs() >= 0);
    assertNull(p.failure());
  }

  @Test
  void aProcessStartsOnePreloadPerFileSystem(@TempDir Path root) throws Exception {
    Path[] k = kernelFiles(root, "#group: free\n#0    : 1 1 1 [ ]\n");
    Path file = BlockBitmapPreload.groupsFile(ON_DEMAND, k[0], k[1]).orElseThrow();
    BlockBitmapPreload first = new BlockBitmapPreload(file);
    assertTrue(first.start());
    assertFalse(new BlockBitmapPreload(file).start(), "a second server of the process lists nothing again");
    for (int i = 0; i < 500 && first.groups() < 0; i++) Thread.sleep(10);
    assertEquals(1, first.groups());
  }

  @Test
  void aFailedReadIsReportedAndLeavesTheCountsUnset(@TempDir Path root) {
    BlockBitmapPreload p = new BlockBitmapPreload(root.resolve("gone/mb_groups"));
    p.run();
    assertEquals(-1, p.groups());
    assertEquals(-1, p.elapsedMs());
    assertNotNull(p.failure());
  }

  @Test
  void groupLinesAreTheNumberedOnes() {
    assertTrue(BlockBitmapPreload.isGroupLine("#12   : 1 2 3 [ ]"));
    for (String s : List.of("#group: free", "#", "", "12 : 1", "# 1")) {
      assertFalse(BlockBitmapPreload.isGroupLine(s), s);
    }
  }

  @Test
  void onThisMachinesDataDirectoryTheKernelListsItsGroups(@TempDir Path dir) {
    // Only where the temporary directory is on ext4 mounted so (the project's VMs): the real file.
    Optional<BlockBitmapPreload> p = DataDirMount.of(dir).flatMap(BlockBitmapPreload::of);
    assumeTrue(p.isPresent(), "not ext4 with no_prefetch_block_bitmaps here");
    BlockBitmapPreload preload = p.get();
    preload.run();
    assertNull(preload.failure());
    assertTrue(preload.groups() > 0, "groups: " + preload.groups());
  }
}
