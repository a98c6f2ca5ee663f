package io.talos.server.forward;

import io.netty.buffer.ByteBuf;

/** {@link PeerFrames.In} and {@link PeerFrames.Out} over Netty buffers. Not thread-safe. */
final class ByteBufFrames {
  private ByteBufFrames() {}

  static PeerFrames.Out out(ByteBuf buf) {
    return new PeerFrames.Out() {
      @Override
      public void writeByte(int b) {
        buf.writeByte(b);
      }

      @Override
      public void writeShort(int s) {
        buf.writeShort(s);
      }

      @Override
      public void writeInt(int i) {
        buf.writeInt(i);
      }

      @Override
      public void writeLong(long l) {
        buf.writeLong(l);
      }

      @Override
      public void writeBytes(byte[] b, int offset, int length) {
        buf.writeBytes(b, offset, length);
      }
    };
  }

  static PeerFrames.In in(ByteBuf buf) {
    return new PeerFrames.In() {
      private void need(int n) throws PeerFrames.MalformedFrameException {
        if (buf.readableBytes() < n) {
          throw new PeerFrames.MalformedFrameException("peer frame ends early: " + n + " bytes needed, "
              + buf.readableBytes() + " left");
        }
      }

      @Override
      public int remaining() {
        return buf.readableBytes();
      }

      @Override
      public int readByte() throws PeerFrames.MalformedFrameException {
        need(1);
        return buf.readUnsignedByte();
      }

      @Override
      public int readUnsignedShort() throws PeerFrames.MalformedFrameException {
        need(2);
        return buf.readUnsignedShort();
      }

      @Override
      public int readInt() throws PeerFrames.MalformedFrameException {
        need(4);
        return buf.readInt();
      }

      @Override
      public long readLong() throws PeerFrames.MalformedFrameException {
        need(8);
        return buf.readLong();
      }

      @Override
      public void readBytes(byte[] into) throws PeerFrames.MalformedFrameException {
        need(into.length);
        buf.readBytes(into);
      }
    };
  }

  /** A frame: its length prefix is patched in by {@link #finish}. */
  static ByteBuf start(io.netty.buffer.ByteBufAllocator alloc, int expectedBytes, byte type) {
    ByteBuf buf = alloc.buffer(4 + expectedBytes);
    buf.writeInt(0);
    buf.writeByte(type);
    return buf;
  }

  static ByteBuf finish(ByteBuf buf) {
    buf.setInt(0, buf.writerIndex() - 4);
    return buf;
  }
}
