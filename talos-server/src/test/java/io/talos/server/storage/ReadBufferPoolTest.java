package io.talos.server.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class ReadBufferPoolTest {
  private static final int B = ReadBufferPool.BUFFER_BYTES;

  @Test
  void leasesTakeDirectBuffersUpToTheBoundAndGiveThemBackOnRelease() {
    ReadBufferPool pool = new ReadBufferPool(2L * B + B / 2); // two whole buffers
    assertEquals(2L * B, pool.maxBytes());
    ReadLease a = new ReadLease(pool);
    ReadLease b = new ReadLease(pool);

    ByteBuffer first = a.tryTake();
    ByteBuffer second = b.tryTake();
    assertNotNull(first);
    assertNotNull(second);
    assertTrue(first.isDirect());
    assertEquals(B, first.capacity());
    assertEquals(2L * B, pool.outBytes());
    assertNull(a.tryTake(), "over the bound: the reader uses a heap array, it does not wait");
    assertEquals(1, pool.exhaustedCount());

    a.release();
    a.release(); // idempotent: the buffer is not given back twice
    assertEquals(B, pool.outBytes());
    ReadLease c = new ReadLease(pool);
    assertSame(first, c.tryTake(), "an idle buffer is reused, not allocated again");
    assertNull(c.tryTake());
    assertEquals(2L * B, pool.allocatedBytes());

    b.release();
    c.release();
    assertEquals(0, pool.outBytes());
    assertThrows(IllegalStateException.class, a::tryTake, "a released lease takes nothing more");
  }

  @Test
  void aPoolOfNoBytesHandsOutNothing() {
    assertNull(new ReadLease(ReadBufferPool.NONE).tryTake());
    assertEquals(0, ReadBufferPool.NONE.allocatedBytes());
  }

  @Test
  void aLeaseIsBoundToItsThreadOnly() throws Exception {
    ReadLease lease = new ReadLease(ReadBufferPool.NONE);
    ReadLease.bind(lease);
    try {
      assertSame(lease, ReadLease.bound());
      ReadLease[] seen = new ReadLease[1];
      Thread t = new Thread(() -> seen[0] = ReadLease.bound());
      t.start();
      t.join();
      assertNull(seen[0]);
    } finally {
      ReadLease.unbind();
    }
    assertNull(ReadLease.bound());
  }
}
