package io.talos.client.producer.internals;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.client.codec.CompressionType;
import io.talos.client.codec.MessageBlockEncoder;
import io.talos.client.producer.RoundRobinPartitioner;
import io.talos.thrift.MessageBlock;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Records serialized into their batch when appended make the same block, byte for byte, as the
 * records encoded one by one when the batch is sent; and the batches' buffers are exactly what
 * the producer's memory holds reserved.
 */
class AppendEncodingTest {
  private record Rec(byte[] value, String seq, long createdMs) {}

  private static List<Rec> records(int n, long seed) {
    Random random = new Random(seed);
    List<Rec> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      byte[] value = new byte[1 + random.nextInt(i % 7 == 0 ? 3000 : 200)];
      random.nextBytes(value);
      String seq = i % 3 == 0 ? null : "seq-" + i + (i % 5 == 0 ? "-é" : "");
      out.add(new Rec(value, seq, 1_700_000_000_000L + random.nextInt(10_000)));
    }
    return out;
  }

  private static int size(Rec r) {
    return MessageBlockEncoder.serializedSize(r.value.length, r.seq);
  }

  /** Appends the records (reserving each one's size first, as send does) and drains the batches. */
  private static List<ProducerBatch> appendAll(RecordAccumulator acc, BufferMemory memory,
      List<Rec> recs) throws InterruptedException {
    for (Rec r : recs) {
      memory.reserve(size(r), 0);
      byte[] value = r.value.clone();
      acc.append(0, value, r.seq, r.createdMs, size(r), size(r), new CompletableFuture<>(), null, 0);
      Arrays.fill(value, (byte) 0); // the caller may reuse the array once append returns
    }
    acc.close();
    return acc.drain(0, Integer.MAX_VALUE);
  }

  /** The block the sender made before records were serialized when appended. */
  private static MessageBlock encodedAtSend(List<Rec> recs, CompressionType compression) {
    MessageBlockEncoder encoder = new MessageBlockEncoder(compression,
        recs.stream().mapToInt(AppendEncodingTest::size).sum());
    for (Rec r : recs) encoder.add(r.value, r.createdMs, r.seq);
    return encoder.finish();
  }

  private static byte[] bytes(MessageBlock block) {
    ByteBuffer b = block.messageBlock.duplicate();
    byte[] out = new byte[b.remaining()];
    b.get(out);
    return out;
  }

  /** The message format written out field by field, independently of the encoder. */
  private static byte[] handSerialized(List<Rec> recs) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    DataOutputStream out = new DataOutputStream(bytes);
    for (Rec r : recs) {
      byte[] seq = r.seq == null ? new byte[0] : r.seq.getBytes(StandardCharsets.UTF_8);
      out.writeByte('V');
      out.writeShort(2);
      out.writeByte(0);
      out.writeLong(r.createdMs);
      out.writeShort(io.talos.thrift.MessageType.BINARY.getValue());
      out.writeShort(seq.length);
      out.write(seq);
      out.writeInt(r.value.length);
      out.write(r.value);
    }
    return bytes.toByteArray();
  }

  @ParameterizedTest
  @EnumSource(CompressionType.class)
  void aBatchMakesTheBlockTheSenderMadeFromItsRecords(CompressionType compression) throws Exception {
    List<Rec> recs = records(500, 42);
    BufferMemory memory = new BufferMemory(64L << 20);
    RecordAccumulator acc = new RecordAccumulator(10_000, 8 << 20, 1_000_000, compression, memory,
        new RoundRobinPartitioner(), () -> 1);
    List<ProducerBatch> batches = appendAll(acc, memory, recs);
    assertEquals(1, batches.size());
    ProducerBatch batch = batches.get(0);
    assertEquals(memory.usedBytes(), batch.heldBytes(), "the buffer is what is reserved");
    MessageBlock appended = batch.finishBlock();
    MessageBlock old = encodedAtSend(recs, compression);
    assertEquals(old, appended);
    assertArrayEquals(bytes(old), bytes(appended));
    assertEquals(old.getMessageBlockSize(), appended.getMessageBlockSize());
    assertEquals(old.getCreateTimestamp(), appended.getCreateTimestamp());
    if (compression == CompressionType.NONE) {
      assertArrayEquals(handSerialized(recs), bytes(appended));
    }
    memory.release(batch.heldBytes());
    assertEquals(0, memory.usedBytes());
  }

  @Test
  void batchesSplitByBytesMakeTheBlocksOfTheirRecordsAndHoldWhatIsReserved() throws Exception {
    List<Rec> recs = records(2000, 7);
    BufferMemory memory = new BufferMemory(64L << 20);
    int maxBytes = 20_000;
    RecordAccumulator acc = new RecordAccumulator(10_000, maxBytes, 1_000_000, CompressionType.NONE,
        memory, new RoundRobinPartitioner(), () -> 1);
    List<ProducerBatch> batches = new ArrayList<>();
    for (Rec r : recs) {
      memory.reserve(size(r), 0);
      acc.append(0, r.value, r.seq, r.createdMs, size(r), size(r), new CompletableFuture<>(), null, 0);
    }
    acc.close();
    long held = 0;
    int i = 0;
    while (!acc.isEmpty()) {
      List<ProducerBatch> drained = acc.drain(0, 1);
      assertEquals(1, drained.size());
      ProducerBatch b = drained.get(0);
      batches.add(b);
      held += b.heldBytes();
      assertTrue(b.serializedBytes() <= b.heldBytes());
      assertTrue(b.heldBytes() <= maxBytes || b.recordCount() == 1, "a buffer beyond batch.max.bytes");
      List<Rec> mine = recs.subList(i, i + b.recordCount());
      i += b.recordCount();
      assertArrayEquals(handSerialized(mine), bytes(b.finishBlock()));
      acc.completed(b);
    }
    assertEquals(recs.size(), i);
    assertTrue(batches.size() > 10, "split into " + batches.size());
    assertEquals(memory.usedBytes(), held, "the buffers are what is reserved");
    for (ProducerBatch b : batches) memory.release(b.heldBytes());
    assertEquals(0, memory.usedBytes());
  }

  @Test
  void aBufferThatCannotGrowClosesItsBatchAndTheAccountStaysExact() throws Exception {
    // 1000 bytes of memory, records of 100 serialized: the buffer doubles 100, 200, 400, 800;
    // the ninth record finds no 700 bytes free to double again and opens the next batch
    BufferMemory memory = new BufferMemory(1000);
    RecordAccumulator acc = new RecordAccumulator(10_000, 100_000, 1_000_000, CompressionType.NONE,
        memory, new RoundRobinPartitioner(), () -> 1);
    List<Rec> recs = new ArrayList<>();
    for (int k = 0; k < 9; k++) {
      Rec r = new Rec(new byte[80], null, k);
      r.value[0] = (byte) k;
      recs.add(r);
      memory.reserve(100, 0);
      acc.append(0, r.value, null, r.createdMs, 100, 100, new CompletableFuture<>(), null, 0);
    }
    acc.close();
    ProducerBatch first = acc.drain(0, 1).get(0);
    acc.completed(first);
    ProducerBatch second = acc.drain(0, 1).get(0);
    acc.completed(second);
    assertTrue(acc.isEmpty());
    assertEquals(List.of(8, 800), List.of(first.recordCount(), first.heldBytes()));
    assertEquals(1, second.recordCount());
    assertEquals(1000, memory.usedBytes());
    assertEquals(memory.usedBytes(), first.heldBytes() + second.heldBytes(), "held = reserved");
    assertArrayEquals(handSerialized(recs.subList(0, 8)), bytes(first.finishBlock()));
    assertArrayEquals(handSerialized(recs.subList(8, 9)), bytes(second.finishBlock()));
    memory.release(first.heldBytes());
    memory.release(second.heldBytes());
    assertEquals(0, memory.usedBytes());
  }

  @Test
  void aRecordWithoutReservedBytesGoesOnlyIntoRoomAlreadyReserved() throws Exception {
    BufferMemory memory = new BufferMemory(10_000);
    RecordAccumulator acc = new RecordAccumulator(10_000, 100_000, 1_000_000, CompressionType.NONE,
        memory, new RoundRobinPartitioner(), () -> 1);
    byte[] value = new byte[80]; // 100 bytes serialized
    ProducerBatch batch = null;
    for (int k = 0; k < 3; k++) { // the buffer grows 100, 200, 400
      memory.reserve(100, 0);
      batch = acc.append(0, value, null, k, 100, 100, new CompletableFuture<>(), null, 0);
    }
    assertEquals(400, batch.heldBytes());
    assertEquals(400, memory.usedBytes());
    assertEquals(batch, acc.append(0, value, null, 3, 100, 0, new CompletableFuture<>(), null, 0),
        "the fourth fits in the room the third reserved");
    assertEquals(null, acc.append(0, value, null, 4, 100, 0, new CompletableFuture<>(), null, 0),
        "the fifth needs bytes reserved");
    assertEquals(4, batch.recordCount());
    assertEquals(400, memory.usedBytes());
    assertEquals(400, batch.serializedBytes());
  }
}
