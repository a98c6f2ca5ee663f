package io.talos.bench.sandbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FixedPortsTest {
  @Test
  void portsAreBelowTheEphemeralRangeDistinctAndFree() throws Exception {
    int start = FixedPorts.ephemeralStart(FixedPorts.LOCAL_PORT_RANGE);
    FixedPorts ports = new FixedPorts();
    Set<Integer> seen = new HashSet<>();
    for (int i = 0; i < 30; i++) {
      int p = ports.next();
      assertTrue(p >= FixedPorts.LOWEST && p < start, p + " outside [" + FixedPorts.LOWEST + ", " + start + ")");
      assertTrue(seen.add(p), "port " + p + " given twice");
      assertTrue(FixedPorts.bindable(p));
    }
  }

  @Test
  void aTakenPortIsSkipped() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      int port = taken.getLocalPort();
      // a range of one taken port: the kernel's choice instead
      int p = new FixedPorts(port, port).next();
      assertNotEquals(port, p);
      assertTrue(FixedPorts.bindable(p));
    }
  }

  @Test
  void theRangeIsReadFromTheKernelFile(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("range");
    Files.writeString(f, "40000\t60999\n");
    assertEquals(40_000, FixedPorts.ephemeralStart(f));
    assertEquals(32_768, FixedPorts.ephemeralStart(dir.resolve("missing")));
  }
}
