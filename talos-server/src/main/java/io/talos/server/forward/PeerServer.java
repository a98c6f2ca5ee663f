package io.talos.server.forward;

import com.codahale.metrics.MetricRegistry;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The peer port: where other nodes forward requests for the partitions this node owns.
 *
 * <p>It accepts only peers. On connect it sends a fresh random challenge (HELLO) and accepts one
 * frame of at most {@link PeerFrames#HANDSHAKE_MAX_FRAME_BYTES} bytes: the PROOF, an HMAC of the
 * challenge with the cluster secret ({@link ClusterSecret}). A wrong proof, any other frame, a
 * larger length prefix or no proof within {@code cluster.peer.handshake.timeout.ms} closes the
 * connection, having held no more than that one small frame. Only then is the frame limit raised
 * to {@code cluster.peer.max.frame.bytes} (checked on every length prefix before the frame is
 * buffered) and WELCOME sent.
 *
 * <p>Each request of a REQUESTS frame is handed to {@link ForwardedCalls} (the front-end's own
 * path: the task pool), and the replies of a connection are packed into REPLIES frames as they
 * complete: the replies that completed while the event loop was busy leave together.
 *
 * <p>Thread-safe; {@link #close()} stops accepting and closes every connection.
 */
public final class PeerServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PeerServer.class);
  private final EventLoopGroup boss;
  private final EventLoopGroup workers;
  private final Channel channel;
  private final ClusterSecret secret;
  private final ForwardedCalls calls;
  private final MetricRegistry metrics;
  private final int maxFrameBytes;
  private final long handshakeTimeoutMs;
  private final SecureRandom random = new SecureRandom();
  /** The accepted connections (each removes itself when it closes). */
  private final io.netty.channel.group.ChannelGroup connections =
      new io.netty.channel.group.DefaultChannelGroup(io.netty.util.concurrent.GlobalEventExecutor.INSTANCE);
  /** Longest wait in {@link #close} for the replies already queued to be written. */
  private static final long CLOSE_FLUSH_WAIT_MS = 1_000;

  public PeerServer(String host, int port, int threads, int maxFrameBytes, long handshakeTimeoutMs,
      ClusterSecret secret, ForwardedCalls calls, MetricRegistry metrics) throws InterruptedException {
    this.secret = secret;
    this.calls = calls;
    this.metrics = metrics;
    this.maxFrameBytes = maxFrameBytes;
    this.handshakeTimeoutMs = handshakeTimeoutMs;
    this.boss = new NioEventLoopGroup(1, new DefaultThreadFactory("talos-peer-accept", true));
    this.workers = new NioEventLoopGroup(threads, new DefaultThreadFactory("talos-peer-server", true));
    try {
      this.channel = new ServerBootstrap().group(boss, workers).channel(NioServerSocketChannel.class)
          .childOption(ChannelOption.TCP_NODELAY, true)
          .childHandler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
              connections.add(ch);
              ch.pipeline().addLast(new PeerFrameDecoder(PeerFrames.HANDSHAKE_MAX_FRAME_BYTES), new Connection());
            }
          })
          .bind(host, port).sync().channel();
    } catch (InterruptedException | RuntimeException e) {
      boss.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
      workers.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
      throw e;
    }
  }

  public int port() {
    return ((InetSocketAddress) channel.localAddress()).getPort();
  }

  /**
   * Stops accepting, then lets each connection write the replies already queued on its event
   * loop (a reply to a request served during the drain must reach the forwarding node; the
   * shutdown of the event loops closes the connections before running what is queued), at most
   * {@link #CLOSE_FLUSH_WAIT_MS} in all, then closes every connection.
   */
  @Override
  public void close() {
    channel.close().awaitUninterruptibly();
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_FLUSH_WAIT_MS);
    for (Channel ch : connections) {
      // Queued after the flushes already scheduled on this loop: done means they ran.
      long leftMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
      if (leftMs <= 0) break;
      ch.eventLoop().submit(() -> { }).awaitUninterruptibly(leftMs);
    }
    boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    workers.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
  }

  /** One accepted connection: handshake, then requests. Runs on the channel's event loop. */
  private final class Connection extends SimpleChannelInboundHandler<ByteBuf> {
    private final byte[] challenge = new byte[PeerFrames.CHALLENGE_BYTES];
    private boolean authenticated;
    private String peerId;
    private ScheduledFuture<?> handshakeTimeout;
    private final ConcurrentLinkedQueue<PeerFrames.Reply> replies = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean flushScheduled = new AtomicBoolean();
    private ChannelHandlerContext ctx;

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      this.ctx = ctx;
      random.nextBytes(challenge);
      ByteBuf hello = ByteBufFrames.start(ctx.alloc(), 1 + challenge.length, PeerFrames.HELLO);
      hello.writeBytes(challenge);
      ctx.writeAndFlush(ByteBufFrames.finish(hello));
      handshakeTimeout = ctx.executor().schedule(() -> {
        if (!authenticated) refuse(ctx, "no proof of the cluster secret within " + handshakeTimeoutMs + " ms");
      }, handshakeTimeoutMs, TimeUnit.MILLISECONDS);
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) throws Exception {
      int type = frame.readUnsignedByte();
      if (!authenticated) {
        handshake(ctx, type, frame);
        return;
      }
      if (type != PeerFrames.REQUESTS) {
        refuse(ctx, "unexpected peer frame type " + type + " from " + peerId);
        return;
      }
      List<PeerFrames.Entry> entries = PeerFrames.readRequests(ByteBufFrames.in(frame));
      metrics.meter("forward.peer.frames.received").mark();
      for (PeerFrames.Entry e : entries) {
        long id = e.id();
        AtomicBoolean answered = new AtomicBoolean();
        try {
          calls.serve(e.request(), reply -> {
            if (answered.compareAndSet(false, true)) enqueue(new PeerFrames.Reply(id, reply));
          });
        } catch (RuntimeException ex) {
          // The front-end answers its own errors; this is a bug: the caller gets a timeout-free answer anyway.
          LOG.error("serving a forwarded {} failed", e.request().method(), ex);
          if (answered.compareAndSet(false, true)) {
            enqueue(new PeerFrames.Reply(id, io.talos.server.frontend.ApiHandler.internalError(e.request().method(),
                "internal error serving a forwarded " + e.request().method() + ": " + ex)));
          }
        }
      }
    }

    private void handshake(ChannelHandlerContext ctx, int type, ByteBuf frame) {
      if (type != PeerFrames.PROOF || frame.readableBytes() < 2) {
        refuse(ctx, "expected the PROOF of the cluster secret, got frame type " + type);
        return;
      }
      int idLength = frame.readUnsignedShort();
      if (idLength > 255 || frame.readableBytes() != idLength + 32) {
        refuse(ctx, "malformed PROOF frame");
        return;
      }
      String id = frame.readCharSequence(idLength, StandardCharsets.UTF_8).toString();
      byte[] proof = new byte[32];
      frame.readBytes(proof);
      if (!secret.verify(challenge, id, proof)) {
        refuse(ctx, "wrong proof of the cluster secret (node id '" + id + "')");
        return;
      }
      authenticated = true;
      peerId = id;
      handshakeTimeout.cancel(false);
      ctx.pipeline().get(PeerFrameDecoder.class).maxFrameBytes(maxFrameBytes);
      metrics.meter("forward.peer.connections.accepted").mark();
      ByteBuf welcome = ByteBufFrames.start(ctx.alloc(), 1, PeerFrames.WELCOME);
      ctx.writeAndFlush(ByteBufFrames.finish(welcome));
    }

    private void refuse(ChannelHandlerContext ctx, String why) {
      metrics.meter("forward.peer.connections.refused").mark();
      LOG.warn("peer port: closing the connection from {}: {}", ctx.channel().remoteAddress(), why);
      ctx.close();
    }

    /** Any thread: queues a reply; the event loop packs everything queued into one frame. */
    private void enqueue(PeerFrames.Reply reply) {
      replies.add(reply);
      if (flushScheduled.compareAndSet(false, true)) ctx.executor().execute(this::flushReplies);
    }

    private void flushReplies() {
      flushScheduled.set(false);
      List<PeerFrames.Reply> batch = new ArrayList<>();
      long bytes = PeerFrames.BATCH_HEADER_BYTES;
      PeerFrames.Reply r;
      while ((r = replies.poll()) != null) {
        if (!batch.isEmpty() && bytes + 12 + r.thriftReply().length > maxFrameBytes) {
          writeReplies(batch, bytes);
          batch = new ArrayList<>();
          bytes = PeerFrames.BATCH_HEADER_BYTES;
        }
        batch.add(r);
        bytes += 12 + r.thriftReply().length;
      }
      if (!batch.isEmpty()) writeReplies(batch, bytes);
      ctx.flush();
    }

    private void writeReplies(List<PeerFrames.Reply> batch, long bytes) {
      if (!ctx.channel().isActive()) return;
      ByteBuf buf = ByteBufFrames.start(ctx.alloc(), (int) bytes, PeerFrames.REPLIES);
      buf.writeInt(batch.size());
      for (PeerFrames.Reply r : batch) {
        buf.writeLong(r.id());
        buf.writeInt(r.thriftReply().length);
        buf.writeBytes(r.thriftReply());
      }
      ctx.write(ByteBufFrames.finish(buf));
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      refuse(ctx, cause.toString());
    }
  }
}
