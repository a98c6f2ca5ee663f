package io.talos.server.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class TailCacheTest {
  private static byte[] bytes(int n, int seed) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) b[i] = (byte) (seed + i);
    return b;
  }

  @Test
  void shouldServeARangeSpanningConsecutiveBatches() {
    TailCache cache = new TailCache(1000);
    Object seg = new Object();
    byte[] a = bytes(100, 1);
    byte[] b = bytes(50, 7);
    cache.put(seg, 0, a);
    cache.put(seg, 100, b);
    byte[] out = new byte[60];
    assertTrue(cache.read(seg, 80, out, 0, 60));
    byte[] want = new byte[60];
    System.arraycopy(a, 80, want, 0, 20);
    System.arraycopy(b, 0, want, 20, 40);
    assertArrayEquals(want, out);
    assertFalse(cache.read(seg, 120, out, 0, 60), "past the cached end");
    assertFalse(cache.read(new Object(), 0, out, 0, 1), "another segment");
    assertEquals(1, cache.hits());
    assertEquals(2, cache.misses());

    // the same into a direct buffer, at its index 0 whatever its position and limit
    java.nio.ByteBuffer direct = java.nio.ByteBuffer.allocateDirect(64).position(5).limit(9);
    assertTrue(cache.read(seg, 80, direct, 60));
    byte[] got = new byte[60];
    direct.duplicate().clear().get(0, got);
    assertArrayEquals(want, got);
    assertEquals(5, direct.position());
    assertEquals(9, direct.limit());
    assertFalse(cache.read(seg, 120, direct, 60), "past the cached end");
  }

  @Test
  void shouldEvictTheOldestBatchesAcrossSegmentsToStayWithinTheBound() {
    TailCache cache = new TailCache(250);
    Object s1 = new Object();
    Object s2 = new Object();
    cache.put(s1, 0, bytes(100, 0));
    cache.put(s2, 0, bytes(100, 0));
    cache.put(s1, 100, bytes(100, 0));
    assertEquals(200, cache.sizeBytes());
    byte[] out = new byte[10];
    assertFalse(cache.read(s1, 0, out, 0, 10), "the oldest batch went");
    assertTrue(cache.read(s2, 0, out, 0, 10));
    assertTrue(cache.read(s1, 100, out, 0, 10));
    for (int i = 0; i < 100; i++) {
      cache.put(s2, 100 + 10L * i, bytes(10, i));
      assertTrue(cache.sizeBytes() <= 250, "size " + cache.sizeBytes());
    }
    assertTrue(cache.read(s2, 1090, out, 0, 10), "the newest batch stays");
    assertArrayEquals(bytes(10, 99), out);
  }

  @Test
  void shouldNotCacheABatchLargerThanTheBoundAndDropARemovedSegment() {
    TailCache cache = new TailCache(100);
    Object seg = new Object();
    cache.put(seg, 0, bytes(101, 0));
    assertEquals(0, cache.sizeBytes());
    cache.put(seg, 101, bytes(60, 0));
    cache.remove(seg);
    assertEquals(0, cache.sizeBytes());
    assertFalse(cache.read(seg, 101, new byte[1], 0, 1));
    assertThrows(IllegalArgumentException.class, () -> new TailCache(-1));
    TailCache.DISABLED.put(seg, 0, bytes(1, 0));
    assertFalse(TailCache.DISABLED.read(seg, 0, new byte[1], 0, 1));
  }
}
