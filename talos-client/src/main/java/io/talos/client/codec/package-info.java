/**
 * The message block format: how a list of messages travels inside a {@code MessageBlock},
 * byte-compatible with the Talos SDK 2.0.2 in both directions.
 *
 * <p>A block's {@code messageBlock} bytes are the block's messages serialized back to back,
 * then compressed as a whole by the block's {@link io.talos.client.codec.CompressionType}. There
 * is no block header and no count in the payload: {@code MessageBlock.messageNumber} says how many
 * messages to read. All integers are big-endian.
 *
 * <pre>
 * Message, version 2 (the only version written; 20 bytes + sequence number + payload):
 *
 *   0      1      3      4                     12           14        16          16+s       20+s
 *   +------+------+------+----------------------+------------+---------+-----------+----------+------------+
 *   | 'V'  | 2    | 0    | createTimestamp (ms) | type       | s       | sequence  | n        | payload    |
 *   | 0x56 | u16  | u8   | i64                  | i16, 1=BIN | u16     | s bytes   | i32      | n bytes    |
 *   +------+------+------+----------------------+------------+---------+-----------+----------+------------+
 *                                                            s = 0: no sequence number (UTF-8 when present)
 *
 * Message, version 1 (read only; it has no marker, its first byte is never 'V'):
 *
 *   +---------+-----------+---------+------------+
 *   | s: i32  | s bytes   | n: i32  | n bytes    |      n &gt;= 1; no timestamps, no type
 *   +---------+-----------+---------+------------+
 * </pre>
 *
 * <p>Block fields a producer sets: {@code messageNumber}, {@code compressionType},
 * {@code messageBlock}, {@code messageBlockSize} (the length of the compressed bytes),
 * {@code createTimestamp} (the mean of the messages' create times) and
 * {@code startMessageOffset = 0}. The server assigns {@code startMessageOffset} and
 * {@code appendTimestamp}; message {@code i} of a block has offset
 * {@code startMessageOffset + i} and the block's append time.
 *
 * <p>A message's partition key and append time are not serialized; nor is the SDK's message
 * type beyond the constant 1 (BINARY).
 */
package io.talos.client.codec;
