package io.talos.server.forward;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The peer frame layout: round trips, and lies about counts and lengths refused before allocation. */
class PeerFramesTest {
  private static ForwardedRequest request(String body) {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    return new ForwardedRequest("key", "owner", true, false, null, -42, "message", "putMessage", b, b.length);
  }

  private static ByteBuf requests(ForwardedRequest... rs) {
    ByteBuf buf = Unpooled.buffer();
    buf.writeInt(rs.length);
    for (int i = 0; i < rs.length; i++) PeerFrames.writeRequest(ByteBufFrames.out(buf), 100 + i, rs[i]);
    return buf;
  }

  @Test
  void requestsRoundTripAndTheirEncodedSizeIsExact() throws Exception {
    ByteBuf buf = requests(request("one"), request("second body"));
    assertEquals(4 + PeerFrames.encodedSize(request("one")) + PeerFrames.encodedSize(request("second body")),
        buf.readableBytes());
    List<PeerFrames.Entry> entries = PeerFrames.readRequests(ByteBufFrames.in(buf));
    assertEquals(2, entries.size());
    ForwardedRequest r = entries.get(1).request();
    assertEquals(101, entries.get(1).id());
    assertEquals("key", r.secretKeyId());
    assertEquals("owner", r.ownerId());
    assertTrue(r.admin());
    assertFalse(r.talosClient());
    assertEquals(null, r.requestId());
    assertEquals(-42, r.clockOffsetMs());
    assertEquals("putMessage", r.method());
    assertArrayEquals("second body".getBytes(StandardCharsets.UTF_8), r.body());
  }

  @Test
  void aCountOrLengthBeyondTheFrameIsRefused() {
    ByteBuf lyingCount = Unpooled.buffer().writeInt(Integer.MAX_VALUE).writeBytes(new byte[100]);
    assertThrows(PeerFrames.MalformedFrameException.class, () -> PeerFrames.readRequests(ByteBufFrames.in(lyingCount)));

    ByteBuf good = requests(request("body"));
    // Patch the body length (the last 4 bytes before the 4-byte body) to claim 1 GiB.
    good.setInt(good.writerIndex() - 4 - 4, 1 << 30);
    assertThrows(PeerFrames.MalformedFrameException.class, () -> PeerFrames.readRequests(ByteBufFrames.in(good)));

    ByteBuf truncated = requests(request("body"));
    truncated.writerIndex(truncated.writerIndex() - 1);
    assertThrows(PeerFrames.MalformedFrameException.class, () -> PeerFrames.readRequests(ByteBufFrames.in(truncated)));

    ByteBuf trailing = requests(request("body")).writeByte(0);
    assertThrows(PeerFrames.MalformedFrameException.class, () -> PeerFrames.readRequests(ByteBufFrames.in(trailing)));

    ByteBuf replies = Unpooled.buffer().writeInt(1).writeLong(7).writeInt(1000).writeBytes(new byte[10]);
    assertThrows(PeerFrames.MalformedFrameException.class, () -> PeerFrames.readReplies(ByteBufFrames.in(replies)));
  }

  @Test
  void repliesRoundTrip() throws Exception {
    ByteBuf buf = Unpooled.buffer().writeInt(2).writeLong(1).writeInt(2).writeBytes(new byte[] {9, 8})
        .writeLong(2).writeInt(0);
    List<PeerFrames.Reply> replies = PeerFrames.readReplies(ByteBufFrames.in(buf));
    assertEquals(2, replies.size());
    assertArrayEquals(new byte[] {9, 8}, replies.get(0).thriftReply());
    assertEquals(0, replies.get(1).thriftReply().length);
  }
}
