package io.talos.server.cluster;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Which node owns each partition: consistent hashing of (topic name, partition id) onto a
 * ring of virtual nodes. Each ACTIVE member puts {@code round(vnodesPerCapacity x capacity x
 * factor)} tokens (at least one) on the ring, token {@code i} of node {@code id} being the hash of
 * {@code "id#i"}; a partition belongs to the node of the first token at or after its own hash,
 * wrapping around. DRAINING members get no tokens, so their partitions go to the others at once.
 * The factor is the member's traffic factor from {@link LoadFactors} (1 without shedding).
 *
 * <p>Why: adding a node takes only the partitions whose hashes fall just before its tokens (about
 * its share, 1/N for equal capacities), removing one moves only its own partitions, and the map is
 * a pure function of the members' ids, capacities and states, so every node that applies the same
 * {@link MembershipView} computes the same map with no coordination. Capacity is the node's
 * configured weight: a node with twice the capacity owns about twice the partitions.
 *
 * <p>Shedding: a node's tokens are always a prefix {@code 0..k-1} of the same sequence, so a factor
 * below 1 removes only that node's last tokens. The partitions that hashed onto them move to the
 * next token (any node's); no other partition moves, so a hot node sheds without partitions moving
 * between the other nodes, and a factor back to 1 gives it exactly its old partitions back.
 *
 * <p>The hash is fixed (FNV-1a 64 over the UTF-8 bytes, then the MurmurHash3 64-bit finalizer), so
 * it is the same in every JVM and every release that keeps this layout; changing it moves
 * partitions, so it is part of the cluster protocol.
 *
 * <p>Immutable (the maps are filled in the constructor only) and thread-safe; {@link #owner} is a binary search, no allocation.
 */
public final class ConsistentHashAssignment {
  private final MembershipView view;
  private final long[] tokens;
  private final NodeInfo[] owners;
  private final Map<String, Double> factors = new HashMap<>();
  private final Map<String, Integer> vnodes = new HashMap<>();

  /** The capacity-only map (every traffic factor 1). */
  public ConsistentHashAssignment(MembershipView view, int vnodesPerCapacity) {
    this(view, vnodesPerCapacity, LoadFactors.NONE);
  }

  public ConsistentHashAssignment(MembershipView view, int vnodesPerCapacity, LoadFactors loadFactors) {
    if (vnodesPerCapacity < 1) throw new IllegalArgumentException("vnodesPerCapacity must be >= 1");
    this.view = view;
    List<long[]> ring = new ArrayList<>();
    List<NodeInfo> active = view.nodes().stream().filter(n -> n.state() == NodeState.ACTIVE).toList();
    double[] factor = loadFactors.factors(active);
    for (int n = 0; n < active.size(); n++) {
      NodeInfo node = active.get(n);
      int count = factor[n] == 1.0 ? vnodesPerCapacity * node.capacity()
          : (int) Math.max(1, Math.round((double) vnodesPerCapacity * node.capacity() * factor[n]));
      factors.put(node.id(), factor[n]);
      vnodes.put(node.id(), count);
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

  /** The traffic factor of member {@code id} in this map: 1 without shedding, 0 if it is not ACTIVE. */
  public double factor(String id) {
    return factors.getOrDefault(id, 0.0);
  }

  /** The number of tokens member {@code id} has on the ring (0 if it is not ACTIVE). */
  public int vnodes(String id) {
    return vnodes.getOrDefault(id, 0);
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
