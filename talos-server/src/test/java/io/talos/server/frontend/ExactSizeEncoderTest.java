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
