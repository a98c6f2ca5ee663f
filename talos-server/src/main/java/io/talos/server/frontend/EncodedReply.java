package io.talos.server.frontend;

import java.nio.ByteBuffer;

/**
 * A Thrift reply ready to send: the bytes of the message, in order, as one or more parts. A reply
 * encoded from an array is one part; a getMessage reply is its framing bytes interleaved with
 * views of the stored message blocks it carries, which are not copied into it (see {@link
 * ExactSizeEncoder#encodeGathered}).
 *
 * <p>Contract: the buffers behind the parts are never changed while the reply exists (stored
 * blocks are read into arrays that are never reused, or into pooled direct buffers that the get's
 * {@link io.talos.server.storage.ReadLease} gives back only once the reply was written; the tail
 * cache never changes an array it holds), so the reply may be written later, on another thread,
 * and a view keeps its array alive until then. Immutable; {@link #part} hands out an independent
 * view.
 */
public final class EncodedReply {
  private final ByteBuffer[] parts;
  private final int length;

  private EncodedReply(ByteBuffer[] parts, int length) {
    this.parts = parts;
    this.length = length;
  }

  /** The reply held in {@code bytes}, which the caller no longer changes. */
  public static EncodedReply of(byte[] bytes) {
    return new EncodedReply(new ByteBuffer[] {ByteBuffer.wrap(bytes)}, bytes.length);
  }

  /** @param parts read in order; each from its position to its limit, never changed afterwards */
  static EncodedReply ofParts(ByteBuffer[] parts) {
    long total = 0;
    for (ByteBuffer p : parts) total += p.remaining();
    if (total > Integer.MAX_VALUE) throw new IllegalArgumentException("a reply of " + total + " bytes");
    return new EncodedReply(parts.clone(), (int) total);
  }

  /** Bytes in the whole reply. */
  public int length() {
    return length;
  }

  public int partCount() {
    return parts.length;
  }

  /** Part {@code i}, as a new view from its first byte (reading it changes nothing here). */
  public ByteBuffer part(int i) {
    return parts[i].duplicate();
  }

  /** Reads the reply from its first byte into buffers, in order. */
  public Reader reader() {
    return new Reader();
  }

  /** A position in the reply. Not thread-safe; one per write of the reply. */
  public final class Reader {
    private int nextPart;
    private ByteBuffer current;

    private Reader() {}

    /**
     * Copies the reply's next bytes into {@code out}, as many as it has room for or the reply has
     * left. @return bytes copied (0 at the end, or when {@code out} is full)
     */
    public int copyTo(ByteBuffer out) {
      return copyTo(out, false);
    }

    /**
     * As {@link #copyTo(ByteBuffer)}, but stops before a part in a direct buffer: {@link
     * #takeDirectPart} hands that out to be written from where it lies.
     */
    public int copyUntilDirectPart(ByteBuffer out) {
      return copyTo(out, true);
    }

    private int copyTo(ByteBuffer out, boolean stopAtDirect) {
      int copied = 0;
      while (out.hasRemaining()) {
        if (current == null || !current.hasRemaining()) {
          if (nextPart == parts.length) break;
          if (stopAtDirect && parts[nextPart].isDirect() && parts[nextPart].hasRemaining()) break;
          current = parts[nextPart++].duplicate();
          continue;
        }
        int n = Math.min(out.remaining(), current.remaining());
        out.put(current.slice(current.position(), n));
        current.position(current.position() + n);
        copied += n;
      }
      return copied;
    }

    /**
     * The next part, whole, when the reader is at its first byte and it lies in a direct buffer
     * (a stored block read into a pooled buffer: the socket takes it from there, no copy); else
     * null and nothing moves.
     */
    public ByteBuffer takeDirectPart() {
      if (current != null && current.hasRemaining()) return null;
      while (nextPart < parts.length && !parts[nextPart].hasRemaining()) nextPart++;
      if (nextPart == parts.length || !parts[nextPart].isDirect()) return null;
      current = null;
      return parts[nextPart++].duplicate();
    }
  }

  /**
   * The whole reply in one array, for a receiver that takes arrays: the array it was made of, or a
   * copy of its parts. The caller does not change it.
   */
  public byte[] toArray() {
    ByteBuffer only = parts.length == 1 ? parts[0] : null;
    if (only != null && only.hasArray() && only.arrayOffset() == 0 && only.position() == 0
        && only.limit() == only.array().length) {
      return only.array(); // made by of(bytes): no copy needed, the array is not changed
    }
    byte[] out = new byte[length];
    reader().copyTo(ByteBuffer.wrap(out));
    return out;
  }
}
