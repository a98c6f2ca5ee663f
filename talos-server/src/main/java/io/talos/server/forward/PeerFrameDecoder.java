package io.talos.server.forward;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.TooLongFrameException;
import java.util.List;

/**
 * Cuts the byte stream into frames (4-byte big-endian length, then the frame). The length is
 * checked against the current limit as soon as its 4 bytes are in, before the frame's bytes are
 * waited for or held: a frame over the limit (or empty) fails the connection at once, so a
 * connection never makes this node buffer more than the limit plus one socket read.
 *
 * <p>The limit starts small (a handshake frame) and is raised once the peer has proved the
 * cluster secret ({@link #maxFrameBytes(int)}). One instance per channel; runs on its event loop.
 */
final class PeerFrameDecoder extends ByteToMessageDecoder {
  private volatile int maxFrameBytes;

  PeerFrameDecoder(int maxFrameBytes) {
    this.maxFrameBytes = maxFrameBytes;
  }

  void maxFrameBytes(int max) {
    this.maxFrameBytes = max;
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws TooLongFrameException {
    while (in.readableBytes() >= 4) {
      int length = in.getInt(in.readerIndex());
      if (length < 1 || length > maxFrameBytes) {
        in.skipBytes(in.readableBytes());
        throw new TooLongFrameException("peer frame of " + length + " bytes; allowed 1.." + maxFrameBytes
            + " (cluster.peer.max.frame.bytes, or the handshake limit before the peer proved the cluster secret)");
      }
      if (in.readableBytes() < 4 + length) return;
      in.skipBytes(4);
      out.add(in.readRetainedSlice(length));
    }
  }
}
