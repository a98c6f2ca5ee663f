package io.talos.server.frontend;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.talos.thrift.GetMessageResponse;
import io.talos.thrift.MessageBlock;
import io.talos.thrift.MessageCompressionType;
import io.talos.thrift.MessageService;
import java.nio.ByteBuffer;
import java.util.List;
import org.apache.thrift.TSerializer;
import org.apache.thrift.protocol.TCompactProtocol;
import org.apache.thrift.protocol.TMessage;
import org.apache.thrift.protocol.TMessageType;
import org.junit.jupiter.api.Test;

class ExactSizeEncoderTest {
  /** A payload as the server holds it: a slice in the middle of a larger array (a read buffer). */
  private static ByteBuffer slice(int size, int offset) {
    byte[] backing = new byte[offset + size + 7];
    for (int i = 0; i < backing.length; i++) backing[i] = (byte) (i * 31);
    return ByteBuffer.wrap(backing, offset, size).slice();
  }

  @Test
  void shouldEncodeBinaryFieldsOfSlicesExactlyAsThriftsOwnSerializer() throws Exception {
    MessageBlock a = new MessageBlock(0, 2, MessageCompressionType.NONE, ByteBuffer.allocate(0));
    a.messageBlock = slice(1000, 13); // the field, as the server sets it (the constructor copies)
    MessageBlock b = new MessageBlock(2, 1, MessageCompressionType.NONE, ByteBuffer.allocate(0));
    b.messageBlock = slice(5, 3);
    MessageService.getMessage_result result = new MessageService.getMessage_result()
        .setSuccess(new GetMessageResponse(List.of(a, b), 3, "req#1"));
    TMessage header = new TMessage("getMessage", TMessageType.REPLY, 7);

    byte[] encoded = ExactSizeEncoder.encode(header, result, null);

    org.apache.thrift.transport.TMemoryBuffer expected = new org.apache.thrift.transport.TMemoryBuffer(2048);
    TCompactProtocol p = new TCompactProtocol(expected);
    p.writeMessageBegin(header);
    result.write(p);
    p.writeMessageEnd();
    assertArrayEquals(java.util.Arrays.copyOf(expected.getArray(), expected.length()), encoded);
    assertEquals(1000, a.messageBlock.remaining(), "the payload buffers are left as they were");
    assertEquals(13, a.messageBlock.arrayOffset());
    byte[] struct = new TSerializer(new TCompactProtocol.Factory()).serialize(result);
    assertArrayEquals(struct, java.util.Arrays.copyOfRange(encoded, encoded.length - struct.length, encoded.length));
  }

  /**
   * A gathered reply has exactly the bytes of the array encoding, and its large blocks are the
   * stored arrays themselves (not copies): the copy the reply array cost is what it saves.
   */
  @Test
  void aGatheredReplyHasTheSameBytesAndRefersToItsLargeBlocks() throws Exception {
    MessageBlock big = new MessageBlock(0, 9, MessageCompressionType.NONE, ByteBuffer.allocate(0));
    big.messageBlock = slice(300_000, 21);
    MessageBlock small = new MessageBlock(9, 1, MessageCompressionType.NONE, ByteBuffer.allocate(0));
    small.messageBlock = slice(ExactSizeEncoder.GATHER_MIN_BYTES - 1, 2);
    MessageBlock edge = new MessageBlock(10, 3, MessageCompressionType.NONE, ByteBuffer.allocate(0));
    edge.messageBlock = slice(ExactSizeEncoder.GATHER_MIN_BYTES, 0);
    MessageService.getMessage_result result = new MessageService.getMessage_result()
        .setSuccess(new GetMessageResponse(List.of(big, small, edge, big), 13, "req#4"));
    TMessage header = new TMessage("getMessage", TMessageType.REPLY, 11);

    EncodedReply gathered = ExactSizeEncoder.encodeGathered(header, result);
    byte[] array = ExactSizeEncoder.encode(header, result, null);

    assertEquals(array.length, gathered.length());
    assertArrayEquals(array, gathered.toArray());
    assertEquals(7, gathered.partCount(), "framing, big, framing+small+framing, edge, framing, big, framing");
    assertEquals(300_000, big.messageBlock.remaining(), "the payload buffers are left as they were");
    byte[] again = ExactSizeEncoder.encode(header, result, null);
    assertArrayEquals(array, again, "the thread's encoder is left as it was for the next reply");

    // Referred to, not copied: a change to a block's array (which the server never makes) shows
    // in the gathered reply for the large blocks only.
    byte[] before = gathered.toArray();
    flip(big.messageBlock);
    flip(edge.messageBlock);
    flip(small.messageBlock);
    byte[] after = gathered.toArray();
    int changed = 0;
    for (int i = 0; i < before.length; i++) if (before[i] != after[i]) changed++;
    assertEquals(2 * 300_000 + ExactSizeEncoder.GATHER_MIN_BYTES, changed,
        "both copies of the big block and the edge one are views; the small one was copied");
  }

  /** Inverts every byte of {@code b}'s content in its backing array. */
  private static void flip(ByteBuffer b) {
    byte[] a = b.array();
    for (int i = b.arrayOffset() + b.position(); i < b.arrayOffset() + b.limit(); i++) a[i] = (byte) ~a[i];
  }

  /**
   * The encoder a thread reuses: a reply whose encoding failed half-way (a struct missing a
   * required field) leaves nothing behind that changes the next reply's bytes.
   */
  @Test
  void aThreadsNextReplyIsUnaffectedByTheOneBefore() throws Exception {
    TMessage header = new TMessage("getMessage", TMessageType.REPLY, 9);
    MessageBlock block = new MessageBlock(4, 1, MessageCompressionType.NONE, ByteBuffer.allocate(0));
    block.messageBlock = slice(64, 5);
    MessageService.getMessage_result good = new MessageService.getMessage_result()
        .setSuccess(new GetMessageResponse(List.of(block), 5, "req#2"));
    byte[] first = ExactSizeEncoder.encode(header, good, null);

    MessageService.getMessage_result broken = new MessageService.getMessage_result()
        .setSuccess(new GetMessageResponse(List.of(block, new MessageBlock()), 5, "req#3"));
    org.junit.jupiter.api.Assertions.assertThrows(RuntimeException.class,
        () -> ExactSizeEncoder.encode(header, broken, null));

    byte[] kept = first.clone();
    byte[] again = ExactSizeEncoder.encode(header, good, null);
    assertArrayEquals(first, again);
    org.junit.jupiter.api.Assertions.assertNotSame(first, again, "each reply is an array of its own");
    assertArrayEquals(kept, first, "a reply handed out is never written again");
    byte[] exception = ExactSizeEncoder.encode(new TMessage("getMessage", TMessageType.EXCEPTION, 9), null,
        new org.apache.thrift.TApplicationException(org.apache.thrift.TApplicationException.INTERNAL_ERROR, "x"));
    org.apache.thrift.transport.TMemoryBuffer expected = new org.apache.thrift.transport.TMemoryBuffer(64);
    TCompactProtocol p = new TCompactProtocol(expected);
    p.writeMessageBegin(new TMessage("getMessage", TMessageType.EXCEPTION, 9));
    new org.apache.thrift.TApplicationException(org.apache.thrift.TApplicationException.INTERNAL_ERROR, "x").write(p);
    p.writeMessageEnd();
    assertArrayEquals(java.util.Arrays.copyOf(expected.getArray(), expected.length()), exception);
  }
}
