package io.talos.server.cluster;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Which node owns each partition: consistent hashing of (topic name, partition id) onto a
 * ring of virtual nodes. Each ACTIVE member puts {@code vnodesPerCapacity x capacity} tokens on the
 * ring (token {@code i} of node {@code id} is the hash of {@code "id#i"}); a partition belongs to
 * the node of the first token at or after its own hash, wrapping around. DRAINING members get no
 * tokens, so their partitions go to the others at once.
 *
 * <p>Why: adding a node takes only the partitions whose hashes fall just before its tokens (about
 * its share, 1/N for equal capacities), removing one moves only its own partitions, and the map is
 * a pure function of the members' ids, capacities and states, so every node that applies the same
 * {@link MembershipView} computes the same map with no coordination. Capacity is the node's
 * configured traffic factor: a node with twice the capacity owns about twice the partitions.
 *
 * <p>The hash is fixed (FNV-1a 64 over the UTF-8 bytes, then the MurmurHash3 64-bit finalizer), so
 * it is the same in every JVM and every release that keeps this layout; changing it moves
 * partitions, so it is part of the cluster protocol.
 *
 * <p>Immutable and thread-safe; {@link #owner} is a binary search, no allocation.
 */
public final class ConsistentHashAssignment {
  private final MembershipView view;
  private final long[] tokens;
  private final NodeInfo[] owners;

  public ConsistentHashAssignment(MembershipView view, int vnodesPerCapacity) {
    if (vnodesPerCapacity < 1) throw new IllegalArgumentException("vnodesPerCapacity must be >= 1");
    this.view = view;
    List<long[]> ring = new ArrayList<>();
    List<NodeInfo> active = view.nodes().stream().filter(n -> n.state() == NodeState.ACTIVE).toList();
    for (int n = 0; n < active.size(); n++) {
      NodeInfo node = active.get(n);
      int count = vnodesPerCapacity * node.capacity();
      for (int i = 0; i < count; i++) ring.add(new long[] {hash(node.id() + "#" + i), n});
    }
    // Ties (two tokens with one hash) are broken by node id order: still deterministic.
    ring.sort((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
    tokens = new long[ring.size()];
    owners = new NodeInfo[ring.size()];
    for (int i = 0; i < ring.size(); i++) {
      tokens[i] = ring.get(i)[0];
      owners[i] = active.get((int) ring.get(i)[1]);
    }
  }

  public MembershipView view() {
    return view;
  }

  public long version() {
    return view.version();
  }

  /** The owner of a partition, or null when no member is ACTIVE. */
  public NodeInfo owner(String topicName, int partitionId) {
    if (tokens.length == 0) return null;
    long h = hash(topicName + "/" + partitionId);
    int i = Arrays.binarySearch(tokens, h);
    if (i < 0) i = -i - 1;
    return owners[i == tokens.length ? 0 : i];
  }

  /** 64-bit FNV-1a of the UTF-8 bytes, finished with MurmurHash3's fmix64 to spread the bits. */
  static long hash(String s) {
    long h = 0xcbf29ce484222325L;
    for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
      h ^= b & 0xff;
      h *= 0x100000001b3L;
    }
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    h *= 0xc4ceb9fe1a85ec53L;
    h ^= h >>> 33;
    return h;
  }
}
