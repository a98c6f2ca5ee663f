package io.talos.server.forward;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The frames of the peer port. On the wire every frame is a 4-byte big-endian length followed by
 * that many bytes; the first byte is the frame type:
 *
 * <pre>
 * HELLO    (owner → connecting node) 1, challenge[32]
 * PROOF    (connecting node → owner) 2, u16 nodeIdLength, nodeId (UTF-8), hmac[32]
 * WELCOME  (owner → connecting node) 3
 * REQUESTS (connecting node → owner) 4, i32 count, count × request
 *   request = i64 id, i64 clockOffsetMs, u8 flags (1 admin, 2 talosClient), str secretKeyId, str ownerId,
 *             str requestId (length 0xFFFF: none), str service, str method, i32 bodyLength, body
 * REPLIES  (owner → connecting node) 5, i32 count, count × (i64 id, i32 length, Thrift reply)
 * str = u16 length, UTF-8 bytes
 * </pre>
 *
 * REQUESTS and REPLIES carry many entries: the merged send packs everything pending for a peer
 * into one frame. Decoding checks every declared length against the bytes actually in the frame
 * before allocating, so a frame cannot make the reader allocate more than the frame's own size
 * (itself bounded by {@code cluster.peer.max.frame.bytes} before it is read).
 *
 * <p>Stateless; thread-safe.
 */
public final class PeerFrames {
  public static final byte HELLO = 1;
  public static final byte PROOF = 2;
  public static final byte WELCOME = 3;
  public static final byte REQUESTS = 4;
  public static final byte REPLIES = 5;
  public static final int CHALLENGE_BYTES = 32;
  /** Largest frame accepted before the handshake: a PROOF with a node id of at most 255 bytes. */
  public static final int HANDSHAKE_MAX_FRAME_BYTES = 1 + 2 + 255 + 32;
  private static final int NO_STRING = 0xFFFF;

  private PeerFrames() {}

  /** A request entry of a REQUESTS frame. */
  public record Entry(long id, ForwardedRequest request) {}

  /** A reply entry of a REPLIES frame. */
  public record Reply(long id, byte[] thriftReply) {}

  /** A frame that does not decode; the connection is closed. */
  public static final class MalformedFrameException extends Exception {
    public MalformedFrameException(String message) {
      super(message);
    }
  }

  /** Bytes one request takes in a REQUESTS frame (to split a batch under the frame limit). */
  public static int encodedSize(ForwardedRequest r) {
    return 8 + 8 + 1 + str(r.secretKeyId()) + str(r.ownerId()) + str(r.requestId()) + str(r.service())
        + str(r.method()) + 4 + r.bodyLength();
  }

  private static int str(String s) {
    return 2 + (s == null ? 0 : s.getBytes(StandardCharsets.UTF_8).length);
  }

  /** Header bytes of a REQUESTS or REPLIES frame (type + count), not counting the length prefix. */
  public static final int BATCH_HEADER_BYTES = 1 + 4;

  /** Writes one request entry (the frame header is the caller's). */
  public static void writeRequest(Out out, long id, ForwardedRequest r) {
    out.writeLong(id);
    out.writeLong(r.clockOffsetMs());
    out.writeByte((r.admin() ? 1 : 0) | (r.talosClient() ? 2 : 0));
    writeString(out, r.secretKeyId());
    writeString(out, r.ownerId());
    writeString(out, r.requestId());
    writeString(out, r.service());
    writeString(out, r.method());
    out.writeInt(r.bodyLength());
    out.writeBytes(r.body(), 0, r.bodyLength());
  }

  private static void writeString(Out out, String s) {
    if (s == null) {
      out.writeShort(NO_STRING);
      return;
    }
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    if (b.length >= NO_STRING) throw new IllegalArgumentException("string of " + b.length + " bytes in a peer frame");
    out.writeShort(b.length);
    out.writeBytes(b, 0, b.length);
  }

  /** Decodes the entries of a REQUESTS frame whose type byte has been read. */
  public static List<Entry> readRequests(In in) throws MalformedFrameException {
    int count = in.readInt();
    // Each entry takes at least 39 bytes: a count beyond that is a lie, refused before any list grows.
    if (count < 0 || (long) count * 39 > in.remaining()) {
      throw new MalformedFrameException("REQUESTS frame declares " + count + " entries in " + in.remaining() + " bytes");
    }
    List<Entry> entries = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      long id = in.readLong();
      long offset = in.readLong();
      int flags = in.readByte();
      String keyId = readString(in);
      String ownerId = readString(in);
      String requestId = readString(in);
      String service = readString(in);
      String method = readString(in);
      int length = in.readInt();
      if (length < 0 || length > in.remaining()) {
        throw new MalformedFrameException("request body of " + length + " bytes, " + in.remaining() + " left in the frame");
      }
      byte[] body = new byte[length];
      in.readBytes(body);
      if (keyId == null || ownerId == null || service == null || method == null) {
        throw new MalformedFrameException("request entry without key id, owner, service or method");
      }
      entries.add(new Entry(id, new ForwardedRequest(keyId, ownerId, (flags & 1) != 0, (flags & 2) != 0, requestId,
          offset, service, method, body, length)));
    }
    if (in.remaining() != 0) throw new MalformedFrameException(in.remaining() + " bytes after the last request entry");
    return entries;
  }

  /** Decodes the entries of a REPLIES frame whose type byte has been read. */
  public static List<Reply> readReplies(In in) throws MalformedFrameException {
    int count = in.readInt();
    if (count < 0 || (long) count * 12 > in.remaining()) {
      throw new MalformedFrameException("REPLIES frame declares " + count + " entries in " + in.remaining() + " bytes");
    }
    List<Reply> replies = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      long id = in.readLong();
      int length = in.readInt();
      if (length < 0 || length > in.remaining()) {
        throw new MalformedFrameException("reply of " + length + " bytes, " + in.remaining() + " left in the frame");
      }
      byte[] reply = new byte[length];
      in.readBytes(reply);
      replies.add(new Reply(id, reply));
    }
    if (in.remaining() != 0) throw new MalformedFrameException(in.remaining() + " bytes after the last reply entry");
    return replies;
  }

  private static String readString(In in) throws MalformedFrameException {
    int length = in.readUnsignedShort();
    if (length == NO_STRING) return null;
    if (length > in.remaining()) {
      throw new MalformedFrameException("string of " + length + " bytes, " + in.remaining() + " left in the frame");
    }
    byte[] b = new byte[length];
    in.readBytes(b);
    return new String(b, StandardCharsets.UTF_8);
  }

  /** Where frames are written (a Netty ByteBuf in production). */
  public interface Out {
    void writeByte(int b);

    void writeShort(int s);

    void writeInt(int i);

    void writeLong(long l);

    void writeBytes(byte[] b, int offset, int length);
  }

  /** Where frames are read from; every read past the end throws MalformedFrameException. */
  public interface In {
    int remaining();

    int readByte() throws MalformedFrameException;

    int readUnsignedShort() throws MalformedFrameException;

    int readInt() throws MalformedFrameException;

    long readLong() throws MalformedFrameException;

    void readBytes(byte[] into) throws MalformedFrameException;
  }
}
