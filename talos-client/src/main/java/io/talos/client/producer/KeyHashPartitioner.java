package io.talos.client.producer;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The default partitioner: a record with a key goes to the partition of its key's hash; a record
 * without a key sticks to one partition until that partition's batch closes, then the next
 * keyless records stick to another partition, chosen at random (Kafka's sticky partitioning:
 * full batches instead of one small batch per partition).
 *
 * <p>The key hash, exactly, so that producers in other languages can match it:
 *
 * <pre>
 *   bytes     = UTF-8 encoding of the key (no terminator; the empty key is 0 bytes)
 *   h         = murmur2(bytes)                  32-bit MurmurHash2, seed 0x9747b28c, see {@link #murmur2}
 *   partition = (h &amp; 0x7fffffff) % partitionCount
 * </pre>
 *
 * This is the hash and the mapping of Kafka's default partitioner ({@code Utils.murmur2} and
 * {@code Utils.toPositive}), so a key lands on the same partition number in Kafka and Talos
 * topics of the same partition count. Test vectors are in docs/clients.md.
 *
 * <p>When a topic grows, keys move: the same key maps to a new partition when
 * {@code partitionCount} changes, as with any modulo scheme.
 *
 * <p>Thread-safe.
 */
public final class KeyHashPartitioner implements Partitioner {
  private static final int NONE = -1;
  private final AtomicInteger sticky = new AtomicInteger(NONE);

  @Override
  public int partition(ProducerRecord record, int partitionCount) {
    if (record.key() != null) return partitionForKey(record.key(), partitionCount);
    int p = sticky.get();
    if (p == NONE || p >= partitionCount) {
      int chosen = ThreadLocalRandom.current().nextInt(partitionCount);
      return sticky.compareAndSet(p, chosen) ? chosen : partition(record, partitionCount);
    }
    return p;
  }

  @Override
  public void onBatchClosed(int partition, int partitionCount) {
    if (sticky.get() != partition) return;
    int next = partition;
    if (partitionCount > 1) {
      next = ThreadLocalRandom.current().nextInt(partitionCount - 1);
      if (next >= partition) next++;
    }
    sticky.compareAndSet(partition, next);
  }

  /** The partition of a key among {@code partitionCount}, as the class comment defines. */
  public static int partitionForKey(String key, int partitionCount) {
    if (partitionCount < 1) throw new IllegalArgumentException("partitionCount must be >= 1");
    return (murmur2(key.getBytes(StandardCharsets.UTF_8)) & 0x7fffffff) % partitionCount;
  }

  /**
   * 32-bit MurmurHash2 (Austin Appleby) with seed {@code 0x9747b28c}: the input is read as
   * little-endian 4-byte words, the tail of 1 to 3 bytes is mixed as in the reference
   * implementation, all arithmetic is modulo 2^32. Equal to Kafka's {@code Utils.murmur2}; e.g.
   * {@code murmur2("21") = -973932308}, {@code murmur2("foobar") = -790332482}.
   */
  public static int murmur2(byte[] data) {
    final int m = 0x5bd1e995;
    final int r = 24;
    int length = data.length;
    int h = 0x9747b28c ^ length;
    int words = length / 4;
    for (int i = 0; i < words; i++) {
      int at = i * 4;
      int k = (data[at] & 0xff) | ((data[at + 1] & 0xff) << 8) | ((data[at + 2] & 0xff) << 16)
          | ((data[at + 3] & 0xff) << 24);
      k *= m;
      k ^= k >>> r;
      k *= m;
      h *= m;
      h ^= k;
    }
    int tail = words * 4;
    switch (length % 4) {
      case 3:
        h ^= (data[tail + 2] & 0xff) << 16;
        // fall through
      case 2:
        h ^= (data[tail + 1] & 0xff) << 8;
        // fall through
      case 1:
        h ^= data[tail] & 0xff;
        h *= m;
        break;
      default:
        break;
    }
    h ^= h >>> 13;
    h *= m;
    h ^= h >>> 15;
    return h;
  }
}
