package io.talos.server.storage;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * The on-disk record codec: one record holds one message block. A segment file is nothing but
 * records back to back, with no file header. All integers are big-endian.
 *
 * <pre>
 *  offset  size  field
 *  ------  ----  -----------------------------------------------------------------------
 *       0     1  magic               format version, 0x01; not covered by the CRC
 *       1     4  crc                 CRC32C (Castagnoli) of bytes [5, recordLength)
 *       5     4  recordLength        bytes of the whole record, header included: 49 + n
 *       9     8  startOffset         offset of the block's first message
 *      17     4  messageCount        messages in the block, >= 1
 *      21     8  appendTimestampMs   when the server appended the block
 *      29     8  createTimestampMs   the client's create time, or -1
 *      37     4  compressionType     wire MessageCompressionType number (0 none, 1 snappy, 2 gzip)
 *      41     4  messageBlockSize    the client's declared uncompressed size, or -1
 *      45     4  payloadLength       n, always recordLength - 49
 *      49     n  payload             the block exactly as the client sent it
 * </pre>
 *
 * <p>Version 2 (magic 0x02) is written only for blocks of an idempotent put ({@link ProducerTag});
 * every other block is still written as version 1, byte for byte as before. It inserts 16 bytes
 * before the payload, covered by the CRC:
 *
 * <pre>
 *      45     8  producerId          the put's producer id (> 0)
 *      53     4  producerSequence    the put's sequence for this producer and partition (>= 0)
 *      57     4  recordsLeftInPut    records of the same put after this one (0: the put's last)
 *      61     4  payloadLength       n, always recordLength - 65
 *      65     n  payload
 * </pre>
 *
 * (fields 0 to 44 as in version 1). A reader accepts both versions; a server that knows only
 * version 1 refuses a version 2 record as corrupt, so data with idempotent puts cannot be served
 * by an older server.
 *
 * <p>A reader validates in this order: magic, then recordLength against {@link #HEADER_BYTES},
 * {@link #MAX_PAYLOAD_BYTES} and the bytes actually available, then the CRC, then that
 * payloadLength and messageCount agree with the rest. Anything that fails is a {@link
 * CorruptRecordException}; at the end of the newest segment that is a torn tail (see {@link
 * PartitionLog}). Zero-filled bytes fail at the magic, so preallocated or sparse space is never
 * mistaken for a record.
 *
 * <p>Stateless and thread-safe.
 */
public final class RecordFormat {
  /** Format version 1, the first byte of every record without a producer. */
  public static final byte MAGIC_V1 = 0x01;
  /** Format version 2: a record of an idempotent put, with its {@link ProducerTag}. */
  public static final byte MAGIC_V2 = 0x02;
  /** Bytes before the payload of a version 1 record. */
  public static final int HEADER_BYTES = 49;
  /** Bytes before the payload of a version 2 record. */
  public static final int HEADER_BYTES_V2 = 65;
  /** Bytes a reader needs to learn a record's length: magic, crc and recordLength. */
  public static final int LENGTH_PREFIX_BYTES = 9;
  /**
   * Hard limit on one payload, independent of configuration so that data written under a larger
   * {@link LogConfig#maxBlockBytes()} stays readable; also bounds what a garbage length can make
   * a reader allocate.
   */
  public static final int MAX_PAYLOAD_BYTES = 256 * 1024 * 1024;

  static final int CRC_FIELD = 1;
  static final int CRC_COVERED_FROM = 5;
  static final int LENGTH_FIELD = 5;

  private RecordFormat() {}

  /**
   * The header fields of a record whose length and header have been checked (not its CRC).
   *
   * @param producer the idempotent put the record belongs to (version 2), or null (version 1)
   */
  public record Header(int recordLength, long startOffset, int messageCount, long appendTimestampMs,
      int payloadLength, ProducerTag producer) {
    public Header(int recordLength, long startOffset, int messageCount, long appendTimestampMs, int payloadLength) {
      this(recordLength, startOffset, messageCount, appendTimestampMs, payloadLength, null);
    }

    public long nextOffset() {
      return startOffset + messageCount;
    }

    int headerBytes() {
      return producer == null ? HEADER_BYTES : HEADER_BYTES_V2;
    }
  }

  /**
   * What a version 2 record says about the idempotent put it belongs to.
   *
   * @param recordsLeftInPut records of the same put written after this one; 0 for its last
   */
  public record ProducerTag(long producerId, int sequence, int recordsLeftInPut) {}

  /** Length of a version 1 record. */
  public static int recordLength(int payloadLength) {
    return HEADER_BYTES + payloadLength;
  }

  /** Length of a record of a put with ({@code producer} true, version 2) or without a producer. */
  public static int recordLength(int payloadLength, boolean producer) {
    return (producer ? HEADER_BYTES_V2 : HEADER_BYTES) + payloadLength;
  }

  /**
   * Writes one record at {@code dst[pos]}.
   *
   * @return the bytes written, {@link #recordLength(int) recordLength(payload.length)}
   */
  public static int encode(byte[] dst, int pos, long startOffset, long appendTimestampMs,
      BlockToAppend block) {
    return encode(dst, pos, startOffset, appendTimestampMs, block, null);
  }

  /**
   * Writes one record at {@code dst[pos]}: version 2 with {@code producer}, version 1 without.
   *
   * @return the bytes written, {@link #recordLength(int, boolean)}
   */
  public static int encode(byte[] dst, int pos, long startOffset, long appendTimestampMs,
      BlockToAppend block, ProducerTag producer) {
    int payloadLength = block.payloadLength();
    int length = recordLength(payloadLength, producer != null);
    ByteBuffer buf = ByteBuffer.wrap(dst, pos, length);
    buf.put(producer == null ? MAGIC_V1 : MAGIC_V2)
        .putInt(0) // crc, filled in below
        .putInt(length)
        .putLong(startOffset)
        .putInt(block.messageCount())
        .putLong(appendTimestampMs)
        .putLong(block.createTimestampMs())
        .putInt(block.compressionType())
        .putInt(block.messageBlockSize());
    if (producer != null) {
      buf.putLong(producer.producerId()).putInt(producer.sequence()).putInt(producer.recordsLeftInPut());
    }
    buf.putInt(payloadLength)
        .put(block.payload(), block.payloadOffset(), payloadLength);
    ByteBuffer.wrap(dst, pos + CRC_FIELD, 4).putInt(crc(dst, pos, length));
    return length;
  }

  /**
   * Reads and checks the length prefix at {@code buf[off]}.
   *
   * @param available bytes of whole records that may follow {@code off} in the file; a length
   *     beyond it means the record was not completely written
   */
  public static int readLength(byte[] buf, int off, long available) throws CorruptRecordException {
    return readLength(ByteBuffer.wrap(buf), off, available);
  }

  /** As {@link #readLength(byte[], int, long)}, at index {@code off} of {@code buf} (its position is not used). */
  public static int readLength(ByteBuffer buf, int off, long available) throws CorruptRecordException {
    if (available < LENGTH_PREFIX_BYTES) {
      throw new CorruptRecordException("only " + available + " bytes left, less than a record's "
          + LENGTH_PREFIX_BYTES + "-byte length prefix");
    }
    byte magic = buf.get(off);
    if (magic != MAGIC_V1 && magic != MAGIC_V2) {
      throw new CorruptRecordException(String.format("bad magic byte 0x%02x (expected 0x%02x or 0x%02x)",
          magic & 0xff, MAGIC_V1, MAGIC_V2));
    }
    int header = headerBytes(magic);
    int length = buf.getInt(off + LENGTH_FIELD);
    if (length < header || length - header > MAX_PAYLOAD_BYTES) {
      throw new CorruptRecordException("record length " + length + " is outside ["
          + header + ", " + (header + MAX_PAYLOAD_BYTES) + "]");
    }
    if (length > available) {
      throw new CorruptRecordException("record length " + length + " runs past the end of the data ("
          + available + " bytes left)");
    }
    return length;
  }

  /** Bytes before the payload of a record whose first byte is {@code magic} (checked by {@link #readLength}). */
  public static int headerBytes(byte magic) {
    return magic == MAGIC_V2 ? HEADER_BYTES_V2 : HEADER_BYTES;
  }

  /**
   * Parses the header at {@code buf[off]}, which must hold at least {@link #headerBytes} bytes
   * and whose length was checked by {@link #readLength}. Does not check the CRC.
   */
  public static Header parseHeader(byte[] buf, int off, int recordLength) throws CorruptRecordException {
    return parseHeader(ByteBuffer.wrap(buf), off, recordLength);
  }

  /** As {@link #parseHeader(byte[], int, int)}, at index {@code off} of {@code buf}. */
  public static Header parseHeader(ByteBuffer buf, int off, int recordLength) throws CorruptRecordException {
    boolean v2 = buf.get(off) == MAGIC_V2;
    int headerBytes = v2 ? HEADER_BYTES_V2 : HEADER_BYTES;
    long startOffset = buf.getLong(off + 9);
    int messageCount = buf.getInt(off + 17);
    long appendTimestampMs = buf.getLong(off + 21);
    // then createTimestampMs, compressionType, messageBlockSize (16 bytes from off + 29)
    ProducerTag producer = null;
    if (v2) {
      producer = new ProducerTag(buf.getLong(off + 45), buf.getInt(off + 53), buf.getInt(off + 57));
      if (producer.producerId() <= 0 || producer.sequence() < 0 || producer.recordsLeftInPut() < 0) {
        throw new CorruptRecordException("invalid producer fields " + producer);
      }
    }
    int payloadLength = buf.getInt(off + headerBytes - 4);
    if (payloadLength != recordLength - headerBytes) {
      throw new CorruptRecordException("payload length " + payloadLength + " disagrees with record length "
          + recordLength);
    }
    if (messageCount < 1) {
      throw new CorruptRecordException("message count " + messageCount + " is not positive");
    }
    if (startOffset < 0 || startOffset > Long.MAX_VALUE - messageCount) {
      throw new CorruptRecordException("start offset " + startOffset + " is invalid");
    }
    return new Header(recordLength, startOffset, messageCount, appendTimestampMs, payloadLength, producer);
  }

  /** Checks the CRC of the whole record at {@code buf[off]}, {@code recordLength} bytes. */
  public static void verifyCrc(byte[] buf, int off, int recordLength) throws CorruptRecordException {
    verifyCrc(ByteBuffer.wrap(buf), off, recordLength);
  }

  /** As {@link #verifyCrc(byte[], int, int)}, at index {@code off} of {@code buf}. */
  public static void verifyCrc(ByteBuffer buf, int off, int recordLength) throws CorruptRecordException {
    int stored = buf.getInt(off + CRC_FIELD);
    CRC32C crc = new CRC32C();
    crc.update(buf.duplicate().limit(off + recordLength).position(off + CRC_COVERED_FROM));
    int actual = (int) crc.getValue();
    if (stored != actual) {
      throw new CorruptRecordException(String.format("CRC32C mismatch: stored 0x%08x, computed 0x%08x",
          stored, actual));
    }
  }

  /**
   * Decodes a whole record (length, header and CRC all checked); its payload is a slice of
   * {@code buf}, not a copy.
   *
   * @param available bytes from {@code off} that belong to whole records in the file
   */
  public static StoredBlock decode(byte[] buf, int off, long available) throws CorruptRecordException {
    ByteBuffer b = ByteBuffer.wrap(buf);
    int length = readLength(b, off, available);
    Header h = parseHeader(b, off, length);
    verifyCrc(b, off, length);
    return toStoredBlock(b, off, h);
  }

  /** Builds the block of a record already checked with {@link #parseHeader} and {@link #verifyCrc}. */
  static StoredBlock toStoredBlock(ByteBuffer buf, int off, Header h) {
    long createTimestampMs = buf.getLong(off + 29);
    int compressionType = buf.getInt(off + 37);
    int messageBlockSize = buf.getInt(off + 41);
    // A slice of buf, not a copy: the caller no longer writes to buf (see StoredBlock).
    return new StoredBlock(h.startOffset(), h.messageCount(), compressionType, h.appendTimestampMs(),
        createTimestampMs, messageBlockSize, buf.slice(off + h.headerBytes(), h.recordLength() - h.headerBytes()));
  }

  private static int crc(byte[] buf, int off, int recordLength) {
    CRC32C crc = new CRC32C();
    crc.update(buf, off + CRC_COVERED_FROM, recordLength - CRC_COVERED_FROM);
    return (int) crc.getValue();
  }
}
