package io.talos.server.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DataDirMountTest {
  /** Lines as a Linux 6.x VM lists them, with a nested mount and one hidden by a later one. */
  private static final List<String> MOUNTINFO = List.of(
      "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,resv_strict",
      "30 27 0:26 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw",
      "41 27 259:1 / /data rw,noatime shared:20 - xfs /dev/nvme0n1 rw,attr2,inode64,noquota",
      "42 41 259:2 / /data/talos\\040logs rw,noatime shared:21 master:3 - ext4 /dev/nvme1n1 rw,discard,data=ordered",
      "43 41 259:3 / /data/talos\\040logs rw,noatime - ext4 /dev/nvme2n1 rw,data=ordered",
      "44 27 0:30 / /tmp rw - tmpfs tmpfs rw,size=1024k");

  @Test
  void theDeepestMountPointAboveThePathHoldsIt() {
    assertEquals("/data", DataDirMount.containing("/data/talos", MOUNTINFO).orElseThrow().mountPoint());
    assertEquals("/", DataDirMount.containing("/database", MOUNTINFO).orElseThrow().mountPoint());
    assertEquals("/", DataDirMount.containing("/", MOUNTINFO).orElseThrow().mountPoint());
    DataDirMount tmp = DataDirMount.containing("/tmp/x", MOUNTINFO).orElseThrow();
    assertEquals("tmpfs", tmp.fsType());
  }

  @Test
  void aMountHiddenByALaterOneOnTheSamePointDoesNotCount() {
    DataDirMount m = DataDirMount.containing("/data/talos logs/log", MOUNTINFO).orElseThrow();
    assertEquals("/data/talos logs", m.mountPoint()); // \040 is a space
    assertEquals("/dev/nvme2n1", m.source());
    assertFalse(m.discardsOnline());
  }

  @Test
  void discardIsReadFromTheSuperblockOptionsAndAdvised() {
    DataDirMount root = DataDirMount.containing("/var/lib/talos", MOUNTINFO).orElseThrow();
    assertEquals("ext4", root.fsType());
    assertTrue(root.discardsOnline());
    assertTrue(root.options().contains("relatime"), "the mount's own options are kept too");
    List<String> advice = root.advice(Path.of("/var/lib/talos"), false);
    assertEquals(1, advice.size());
    assertTrue(advice.get(0).contains("/var/lib/talos") && advice.get(0).contains("'discard'")
        && advice.get(0).contains("fstrim"), advice.get(0));
    DataDirMount xfs = DataDirMount.containing("/data/x", MOUNTINFO).orElseThrow();
    assertTrue(xfs.advice(Path.of("/data/x"), false).isEmpty());
  }

  @Test
  void blockBitmapsReadOnDemandAreAdvisedAgainstOnExt4Only() {
    List<String> lines = List.of(
        "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,no_prefetch_block_bitmaps,resv_strict",
        "41 27 259:1 / /data rw,noatime - xfs /dev/nvme0n1 rw,no_prefetch_block_bitmaps");
    DataDirMount root = DataDirMount.containing("/var/lib/talos", lines).orElseThrow();
    assertTrue(root.readsBlockBitmapsOnDemand());
    List<String> advice = root.advice(Path.of("/var/lib/talos"), false);
    assertEquals(2, advice.size(), advice.toString());
    assertTrue(advice.get(1).contains("'no_prefetch_block_bitmaps'") && advice.get(1).contains("/var/lib/talos"),
        advice.get(1));
    List<String> preloaded = root.advice(Path.of("/var/lib/talos"), true);
    assertEquals(1, preloaded.size(), "the server loads the bitmaps itself");
    assertTrue(preloaded.get(0).contains("'discard'") && !preloaded.get(0).contains("no_prefetch"), preloaded.get(0));
    assertFalse(DataDirMount.containing("/var/lib/talos", MOUNTINFO).orElseThrow().readsBlockBitmapsOnDemand(),
        "the default mount prefetches them");
    assertFalse(DataDirMount.containing("/data/x", lines).orElseThrow().readsBlockBitmapsOnDemand(), "not ext4");
  }

  @Test
  void malformedLinesAreSkipped() {
    assertNull(DataDirMount.parse("27 1 254:0 / / rw,relatime"));
    assertNull(DataDirMount.parse("27 1 254:0 / / rw - ext4"));
    assertNull(DataDirMount.parse(""));
    assertTrue(DataDirMount.containing("/x", List.of("garbage", "")).isEmpty());
  }

  @Test
  void theMachinesOwnMountOfAnExistingDirectoryIsFound(@TempDir Path dir) {
    // Linux only (the project's machines); elsewhere there is no mountinfo to read.
    if (!java.nio.file.Files.isReadable(Path.of("/proc/self/mountinfo"))) return;
    DataDirMount m = DataDirMount.of(dir).orElseThrow();
    assertTrue(dir.toAbsolutePath().toString().startsWith(m.mountPoint()), m.toString());
    assertFalse(m.fsType().isEmpty());
    assertTrue(DataDirMount.of(dir.resolve("not/created")).isEmpty());
  }
}
