package io.talos.server.storage;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The pooled buffers that the blocks of one or more reads refer to ({@link ReadBufferPool}), held
 * until whoever sends those blocks has finished with them and calls {@link #release()}.
 *
 * <p>Contract: a block read under a lease is valid only until the lease is released; after that
 * its bytes may be overwritten by another read. A lease that is never released costs nothing but
 * its buffers (the garbage collector frees them; the pool allocates others up to its bound), so a
 * reader that cannot tell when it is done reads without one ({@link PartitionLog#read(long, int,
 * int)}): its blocks are heap arrays of their own.
 *
 * <p>The Thrift service interfaces cannot carry a lease from the task that sends a reply to the
 * handler that reads, so the task binds it to its thread for the call ({@link #bind}); the handler
 * passes {@link #bound()} on to the read explicitly.
 *
 * <p>Thread-safety: buffers are taken by one reading thread at a time; {@link #release} may come
 * from any thread (the one that finished writing the reply) and is idempotent.
 */
public final class ReadLease {
  private static final ThreadLocal<ReadLease> BOUND = new ThreadLocal<>();

  private final ReadBufferPool pool;
  private final List<ByteBuffer> held = new ArrayList<>(4);
  private boolean released;

  public ReadLease(ReadBufferPool pool) {
    this.pool = java.util.Objects.requireNonNull(pool, "pool");
  }

  /** A buffer from the pool, held by this lease; null when the pool has none to spare. */
  synchronized ByteBuffer tryTake() {
    if (released) throw new IllegalStateException("the read lease was released already");
    ByteBuffer b = pool.tryAcquire();
    if (b != null) held.add(b);
    return b;
  }

  /** Gives every buffer back to the pool: blocks read under this lease must not be used any more. */
  public synchronized void release() {
    if (released) return;
    released = true;
    for (ByteBuffer b : held) pool.release(b);
    held.clear();
  }

  /** Buffers this lease holds now. */
  public synchronized int heldBuffers() {
    return held.size();
  }

  /** Binds {@code lease} to this thread until {@link #unbind()}. */
  public static void bind(ReadLease lease) {
    BOUND.set(lease);
  }

  public static void unbind() {
    BOUND.remove();
  }

  /** The lease bound to this thread, or null: read into heap arrays. */
  public static ReadLease bound() {
    return BOUND.get();
  }
}
