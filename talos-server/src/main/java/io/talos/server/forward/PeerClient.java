package io.talos.server.forward;

import com.codahale.metrics.MetricRegistry;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.talos.server.cluster.NodeInfo;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client pool of one peer: its own connections and its own I/O threads, so a slow or dead
 * peer holds up only the requests for that peer, never the others'.
 *
 * <p>Merged send ({@code cluster.peer.client.merge=true}): callers only queue their request; one
 * send thread per peer takes everything queued for the peer and writes it as one REQUESTS frame
 * (split only at {@code cluster.peer.max.frame.bytes}) with one flush, on the next connection in
 * turn. Under load the requests of many clients share a frame, a write and a wakeup of the owner.
 * With merging off every request is written as its own frame by the calling thread.
 *
 * <p>Never a hang: at most {@code cluster.peer.client.pending.max} requests wait per peer (more
 * are refused at once, OVERLOADED); a connection (TCP and handshake) that does not complete in
 * {@code cluster.peer.connect.timeout.ms} fails the requests it was for (UNAVAILABLE, never sent);
 * a sent request without an answer by its timeout, or whose connection breaks, fails NO_ANSWER.
 *
 * <p>Thread-safe.
 */
public final class PeerClient implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PeerClient.class);

  /** The pool's limits (see the {@code cluster.peer.*} keys). */
  public record Settings(int threads, int connections, int pendingMax, boolean merge, long connectTimeoutMs,
      int maxFrameBytes) {}

  private final NodeInfo peer;
  private final String localNodeId;
  private final ClusterSecret secret;
  private final Settings settings;
  private final MetricRegistry metrics;
  private final EventLoopGroup group;
  private final Bootstrap bootstrap;
  private final Connection[] connections;
  private final AtomicInteger nextConnection = new AtomicInteger();
  private final AtomicLong ids = new AtomicLong();
  private final AtomicInteger pendingCount = new AtomicInteger();
  private final Map<Long, Pending> pending = new ConcurrentHashMap<>();
  private final LinkedBlockingQueue<Long> queue = new LinkedBlockingQueue<>();
  private final Thread sender;
  private volatile boolean closed;

  private static final class Pending {
    final ForwardedRequest request;
    final CompletableFuture<byte[]> future = new CompletableFuture<>();
    volatile Channel channel;
    /**
     * Set once, by whichever comes first: the writer about to put the request on a connection,
     * or {@link #close} giving it up unsent. Decides whether the caller may be told "not sent".
     */
    final java.util.concurrent.atomic.AtomicBoolean claimed = new java.util.concurrent.atomic.AtomicBoolean();

    Pending(ForwardedRequest request) {
      this.request = request;
    }
  }

  public PeerClient(NodeInfo peer, String localNodeId, ClusterSecret secret, Settings settings, MetricRegistry metrics) {
    this(peer, localNodeId, secret, settings, metrics, true);
  }

  /** @param startSendThread false: a test steps the merged send with {@link #runOnce} */
  PeerClient(NodeInfo peer, String localNodeId, ClusterSecret secret, Settings settings, MetricRegistry metrics,
      boolean startSendThread) {
    this.peer = peer;
    this.localNodeId = localNodeId;
    this.secret = secret;
    this.settings = settings;
    this.metrics = metrics;
    this.group = new NioEventLoopGroup(settings.threads(), new DefaultThreadFactory("talos-peer-" + peer.id(), true));
    this.bootstrap = new Bootstrap().group(group).channel(NioSocketChannel.class)
        .option(ChannelOption.TCP_NODELAY, true)
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) settings.connectTimeoutMs());
    this.connections = new Connection[settings.connections()];
    for (int i = 0; i < connections.length; i++) connections[i] = new Connection();
    if (settings.merge() && startSendThread) {
      sender = new Thread(this::sendLoop, "talos-peer-" + peer.id() + "-send");
      sender.setDaemon(true);
      sender.start();
    } else {
      sender = null;
    }
  }

  public NodeInfo peer() {
    return peer;
  }

  /**
   * Sends {@code request} to the peer. The future completes with the owner's Thrift reply, or
   * with a {@link PeerException}; always, by {@code timeoutMs} at the latest (plus the connect
   * timeout when a connection must be made first). Completions run on this peer's I/O threads.
   */
  public CompletableFuture<byte[]> send(ForwardedRequest request, long timeoutMs) {
    Pending p = new Pending(request);
    if (closed) {
      p.future.completeExceptionally(new PeerException(PeerException.Reason.UNAVAILABLE,
          "the client pool of node " + peer.id() + " is closed"));
      return p.future;
    }
    if (pendingCount.incrementAndGet() > settings.pendingMax()) {
      pendingCount.decrementAndGet();
      metrics.meter("forward.refused.overloaded").mark();
      p.future.completeExceptionally(new PeerException(PeerException.Reason.OVERLOADED, settings.pendingMax()
          + " requests already wait for node " + peer.id() + " (cluster.peer.client.pending.max); nothing was done"));
      return p.future;
    }
    long id = ids.incrementAndGet();
    pending.put(id, p);
    io.netty.util.concurrent.ScheduledFuture<?> timeout = group.schedule(() -> fail(id,
        PeerException.Reason.NO_ANSWER, "node " + peer.id() + " did not answer within " + timeoutMs
        + " ms; the request may or may not have been served"), timeoutMs, TimeUnit.MILLISECONDS);
    p.future.whenComplete((r, e) -> {
      pending.remove(id);
      pendingCount.decrementAndGet();
      timeout.cancel(false);
    });
    if (settings.merge()) {
      queue.add(id);
    } else {
      write(List.of(id));
    }
    return p.future;
  }

  private void fail(long id, PeerException.Reason reason, String message) {
    Pending p = pending.remove(id);
    if (p != null) {
      metrics.meter("forward.failed." + reason.name().toLowerCase(java.util.Locale.ROOT)).mark();
      p.future.completeExceptionally(new PeerException(reason, message));
    }
  }

  private void sendLoop() {
    while (!closed) {
      try {
        runOnce(100);
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        LOG.error("the merged send thread of node {} failed a round; it goes on", peer.id(), e);
      }
    }
  }

  /**
   * One round of the merged send: waits up to {@code waitMs} for a request, then writes every
   * request queued by now in as few frames as the frame limit allows. Returns how many it took.
   */
  int runOnce(long waitMs) throws InterruptedException {
    Long first = queue.poll(waitMs, TimeUnit.MILLISECONDS);
    if (first == null) return 0;
    List<Long> batch = new ArrayList<>();
    batch.add(first);
    queue.drainTo(batch);
    write(batch);
    return batch.size();
  }

  /** Writes {@code ids} (those still pending) on one connection, in frames under the limit. */
  private void write(List<Long> batch) {
    Channel ch;
    try {
      ch = connections[Math.floorMod(nextConnection.getAndIncrement(), connections.length)].channel();
    } catch (PeerException e) {
      for (long id : batch) fail(id, e.reason(), e.getMessage());
      return;
    }
    List<Long> frame = new ArrayList<>();
    long bytes = PeerFrames.BATCH_HEADER_BYTES;
    for (long id : batch) {
      Pending p = pending.get(id);
      if (p == null) continue; // timed out while queued
      int size = PeerFrames.encodedSize(p.request);
      if (!frame.isEmpty() && bytes + size > settings.maxFrameBytes()) {
        writeFrame(ch, frame, bytes);
        frame = new ArrayList<>();
        bytes = PeerFrames.BATCH_HEADER_BYTES;
      }
      frame.add(id);
      bytes += size;
    }
    if (!frame.isEmpty()) writeFrame(ch, frame, bytes);
    ch.flush();
  }

  private void writeFrame(Channel ch, List<Long> ids, long bytes) {
    ByteBuf buf = ByteBufFrames.start(ch.alloc(), (int) bytes, PeerFrames.REQUESTS);
    int countAt = buf.writerIndex();
    buf.writeInt(0);
    int count = 0;
    PeerFrames.Out out = ByteBufFrames.out(buf);
    for (long id : ids) {
      Pending p = pending.get(id);
      if (p == null || !p.claimed.compareAndSet(false, true)) continue; // timed out, or the pool closed
      p.channel = ch;
      PeerFrames.writeRequest(out, id, p.request);
      count++;
    }
    buf.setInt(countAt, count);
    metrics.meter("forward.peer.frames.sent").mark();
    metrics.histogram("forward.peer.frame.requests").update(count);
    ch.write(ByteBufFrames.finish(buf)).addListener(f -> {
      if (!f.isSuccess()) {
        for (long id : ids) fail(id, PeerException.Reason.NO_ANSWER, "writing to node " + peer.id() + " failed: "
            + f.cause() + "; the request may or may not have been served");
      }
    });
  }

  /** One connection of the pool, (re)connected on first use after it broke. */
  private final class Connection {
    private volatile CompletableFuture<Channel> ready;

    Channel channel() throws PeerException {
      CompletableFuture<Channel> r = ready;
      if (r == null || (r.isDone() && (r.isCompletedExceptionally() || !r.join().isActive()))) {
        synchronized (this) {
          r = ready;
          if (r == null || (r.isDone() && (r.isCompletedExceptionally() || !r.join().isActive()))) {
            r = connect();
            ready = r;
          }
        }
      }
      try {
        return r.get(settings.connectTimeoutMs(), TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        r.completeExceptionally(e);
        throw unavailable("no handshake within " + settings.connectTimeoutMs() + " ms (cluster.peer.connect.timeout.ms)");
      } catch (ExecutionException e) {
        throw unavailable(String.valueOf(e.getCause()));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw unavailable("interrupted");
      }
    }

    private PeerException unavailable(String why) {
      metrics.meter("forward.connect.failures").mark();
      return new PeerException(PeerException.Reason.UNAVAILABLE, "node " + peer.id() + " (peer port "
          + peer.peerHost() + ":" + peer.peerPort() + ") is unreachable: " + why);
    }

    private CompletableFuture<Channel> connect() {
      CompletableFuture<Channel> r = new CompletableFuture<>();
      bootstrap.clone().handler(new ChannelInitializer<SocketChannel>() {
        @Override
        protected void initChannel(SocketChannel ch) {
          ch.pipeline().addLast(new PeerFrameDecoder(settings.maxFrameBytes()), new ClientHandler(r));
        }
      }).connect(peer.peerHost(), peer.peerPort()).addListener(f -> {
        if (!f.isSuccess()) r.completeExceptionally(f.cause());
      });
      return r;
    }
  }

  /** Handshake, then replies; runs on the connection's event loop. */
  private final class ClientHandler extends SimpleChannelInboundHandler<ByteBuf> {
    private final CompletableFuture<Channel> ready;

    ClientHandler(CompletableFuture<Channel> ready) {
      this.ready = ready;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) throws Exception {
      int type = frame.readUnsignedByte();
      if (type == PeerFrames.HELLO && frame.readableBytes() == PeerFrames.CHALLENGE_BYTES && !ready.isDone()) {
        byte[] challenge = new byte[PeerFrames.CHALLENGE_BYTES];
        frame.readBytes(challenge);
        byte[] id = localNodeId.getBytes(StandardCharsets.UTF_8);
        ByteBuf proof = ByteBufFrames.start(ctx.alloc(), 3 + id.length + 32, PeerFrames.PROOF);
        proof.writeShort(id.length);
        proof.writeBytes(id);
        proof.writeBytes(secret.proof(challenge, localNodeId));
        ctx.writeAndFlush(ByteBufFrames.finish(proof));
      } else if (type == PeerFrames.WELCOME && !ready.isDone()) {
        ready.complete(ctx.channel());
      } else if (type == PeerFrames.REPLIES && ready.isDone()) {
        for (PeerFrames.Reply r : PeerFrames.readReplies(ByteBufFrames.in(frame))) {
          Pending p = pending.remove(r.id());
          if (p != null) p.future.complete(r.thriftReply());
        }
      } else {
        throw new PeerFrames.MalformedFrameException("unexpected frame type " + type + " from node " + peer.id());
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      Channel ch = ctx.channel();
      ready.completeExceptionally(new PeerException(PeerException.Reason.UNAVAILABLE,
          "the connection closed during the handshake (wrong cluster secret?)"));
      for (Map.Entry<Long, Pending> e : pending.entrySet()) {
        if (e.getValue().channel == ch) {
          fail(e.getKey(), PeerException.Reason.NO_ANSWER, "the connection to node " + peer.id()
              + " closed; the request may or may not have been served");
        }
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      LOG.warn("connection to node {} failed: {}", peer.id(), cause.toString());
      ctx.close();
    }
  }

  @Override
  public void close() {
    closed = true;
    if (sender != null) sender.interrupt();
    // A request already written may be served by the peer after this: the caller must not be
    // told "nothing was done" (UNAVAILABLE), only that there was no answer.
    for (Map.Entry<Long, Pending> e : List.copyOf(pending.entrySet())) {
      if (!e.getValue().claimed.compareAndSet(false, true)) {
        fail(e.getKey(), PeerException.Reason.NO_ANSWER, "the client pool of node " + peer.id()
            + " closed before its answer; the request may or may not have been served");
      } else {
        fail(e.getKey(), PeerException.Reason.UNAVAILABLE, "the client pool of node " + peer.id()
            + " closed; the request was not sent");
      }
    }
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
  }
}
