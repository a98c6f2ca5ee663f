package io.talos.bench.sandbox;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Picks loopback ports for sandbox nodes that keep their ports across restarts.
 *
 * <p>A port taken from the kernel ({@code new ServerSocket(0)}) lies in the ephemeral range, the
 * range the kernel also hands out as the local port of outgoing connections; while a node is down
 * (or between picking and binding) any outgoing connection on the machine (the mini clusters
 * open many) can take it, and the node then fails to start with "address in use". Ports below the
 * ephemeral range are never given to outgoing connections, so a port picked there and found free
 * stays free unless another process binds it on purpose. The range is read from
 * {@code /proc/sys/net/ipv4/ip_local_port_range} (Linux); elsewhere, and when no port below it is
 * free, the kernel's choice is the fallback.
 *
 * <p>Not thread-safe: one instance per sandbox, used while it is made.
 */
final class FixedPorts {
  static final Path LOCAL_PORT_RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
  /** Lowest port picked: above the well-known and most registered service ports. */
  static final int LOWEST = 10_000;
  private static final int ATTEMPTS = 200;

  private final int low;
  private final int high;
  private final Set<Integer> given = new HashSet<>();

  /** Picks in [{@link #LOWEST}, the ephemeral range's start). */
  FixedPorts() {
    this(LOWEST, ephemeralStart(LOCAL_PORT_RANGE) - 1);
  }

  /** Picks in [low, high]; an empty range means the kernel's choice. */
  FixedPorts(int low, int high) {
    this.low = low;
    this.high = high;
  }

  /** A port free now, outside the ephemeral range when possible, never one given before. */
  int next() throws IOException {
    if (high >= low) {
      ThreadLocalRandom random = ThreadLocalRandom.current();
      for (int i = 0; i < ATTEMPTS; i++) {
        int port = random.nextInt(low, high + 1);
        if (!given.contains(port) && bindable(port)) {
          given.add(port);
          return port;
        }
      }
    }
    while (true) {
      int port;
      try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        port = s.getLocalPort();
      }
      if (given.add(port)) return port;
    }
  }

  static boolean bindable(int port) {
    try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** The first port of the kernel's ephemeral range; 32768 (Linux's default) when it cannot be read. */
  static int ephemeralStart(Path rangeFile) {
    try {
      // not Files.readString: it trusts the size a /proc file reports and returns a prefix
      String[] parts = Files.readAllLines(rangeFile, StandardCharsets.US_ASCII).get(0).trim().split("\\s+");
      return Integer.parseInt(parts[0]);
    } catch (IOException | RuntimeException e) {
      return 32_768;
    }
  }
}
