package io.talos.server.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Test blocks whose payload is derived from the block's start offset, and a model of what a log
 * must hold, so that any read can be checked against it.
 */
final class LogFixture {
  /** An appended block as the log must return it. */
  record Expected(long startOffset, BlockToAppend block, long appendTimestampMs) {
    long nextOffset() {
      return startOffset + block.messageCount();
    }
  }

  final List<Expected> appended = new ArrayList<>();

  static byte[] payloadFor(long startOffset, int bytes) {
    byte[] p = new byte[bytes];
    for (int i = 0; i < bytes; i++) p[i] = (byte) (startOffset * 31 + i * 7);
    return p;
  }

  static BlockToAppend block(long startOffset, int messages, int payloadBytes) {
    return new BlockToAppend(messages, (int) (startOffset % 3), payloadBytes * 4, startOffset + 7,
        payloadFor(startOffset, payloadBytes));
  }

  /**
   * Appends one batch whose blocks have the given message counts and payload sizes, checks the
   * returned offset and records it in the model.
   */
  long append(PartitionLog log, long appendTimestampMs, int[] messageCounts, int[] payloadBytes) throws IOException {
    long first = log.endOffset();
    List<BlockToAppend> blocks = new ArrayList<>();
    List<Expected> expected = new ArrayList<>();
    long next = first;
    for (int i = 0; i < messageCounts.length; i++) {
      BlockToAppend b = block(next, messageCounts[i], payloadBytes[i]);
      blocks.add(b);
      expected.add(new Expected(next, b, appendTimestampMs));
      next += messageCounts[i];
    }
    assertEquals(first, log.append(blocks, appendTimestampMs));
    assertEquals(next, log.endOffset());
    appended.addAll(expected);
    return first;
  }

  long append(PartitionLog log, long appendTimestampMs, int messages, int payloadBytes) throws IOException {
    return append(log, appendTimestampMs, new int[] {messages}, new int[] {payloadBytes});
  }

  /** Drops model entries at or after {@code offset} (acknowledged data a test destroyed on purpose). */
  void forgetFrom(long offset) {
    appended.removeIf(e -> e.startOffset() >= offset);
  }

  static void assertBlock(Expected e, StoredBlock actual) {
    assertEquals(e.startOffset(), actual.startOffset(), "startOffset");
    assertEquals(e.block().messageCount(), actual.messageCount(), "messageCount at " + e.startOffset());
    assertEquals(e.block().compressionType(), actual.compressionType(), "compressionType");
    assertEquals(e.block().messageBlockSize(), actual.messageBlockSize(), "messageBlockSize");
    assertEquals(e.block().createTimestampMs(), actual.createTimestampMs(), "createTimestampMs");
    assertEquals(e.appendTimestampMs(), actual.appendTimestampMs(), "appendTimestampMs");
    assertArrayEquals(e.block().payload(), actual.payload(), "payload at " + e.startOffset());
  }

  /** Every appended block at or after {@code fromOffset} can be read at every offset it covers. */
  void assertEveryBlockReadable(PartitionLog log, long fromOffset) throws Exception {
    for (Expected e : appended) {
      if (e.startOffset() < fromOffset) continue;
      for (long o = e.startOffset(); o < e.nextOffset(); o += Math.max(1, e.block().messageCount() / 3)) {
        List<StoredBlock> got = log.read(o, 1, 0);
        assertEquals(1, got.size(), "blocks read at " + o);
        assertBlock(e, got.get(0));
      }
    }
  }

  /** Reading the whole log in steps of {@code maxMessages} returns exactly the model, in order. */
  /**
   * As {@link #assertSequentialReadMatches(PartitionLog, long, int, int)}, each read under a lease
   * of {@code pool} that is released once its blocks were checked.
   *
   * @return the blocks that came in pooled (direct) buffers
   */
  int assertSequentialReadMatches(PartitionLog log, long fromOffset, int maxMessages, int maxBytes,
      ReadBufferPool pool) throws Exception {
    List<Expected> want = appended.stream().filter(e -> e.startOffset() >= fromOffset).toList();
    int i = 0;
    int direct = 0;
    long o = fromOffset;
    while (o < log.endOffset()) {
      ReadLease lease = new ReadLease(pool);
      List<StoredBlock> got = log.read(o, maxMessages, maxBytes, lease);
      if (got.isEmpty()) throw new AssertionError("empty read at " + o + " below end " + log.endOffset());
      for (StoredBlock b : got) {
        assertBlock(want.get(i++), b);
        if (b.payloadBytes().isDirect()) direct++;
      }
      o = got.get(got.size() - 1).nextOffset();
      lease.release();
    }
    assertEquals(want.size(), i, "blocks");
    assertEquals(0, pool.outBytes(), "every buffer back in the pool");
    return direct;
  }

  void assertSequentialReadMatches(PartitionLog log, long fromOffset, int maxMessages, int maxBytes) throws Exception {
    List<StoredBlock> all = new ArrayList<>();
    long o = fromOffset;
    while (o < log.endOffset()) {
      List<StoredBlock> got = log.read(o, maxMessages, maxBytes);
      if (got.isEmpty()) throw new AssertionError("empty read at " + o + " below end " + log.endOffset());
      all.addAll(got);
      o = got.get(got.size() - 1).nextOffset();
    }
    List<Expected> want = appended.stream().filter(e -> e.startOffset() >= fromOffset).toList();
    assertEquals(want.size(), all.size(), "blocks");
    for (int i = 0; i < want.size(); i++) assertBlock(want.get(i), all.get(i));
  }
}
