package io.talos.server.metadata;

/**
 * Who owns a partition in a cluster, and since which owner epoch: every takeover stores a higher
 * epoch (see {@link PartitionOwnerEpochs}).
 */
public record PartitionOwner(long epoch, String nodeId) {
  public PartitionOwner {
    if (epoch < 1) throw new IllegalArgumentException("epoch must be >= 1: " + epoch);
    if (nodeId == null || nodeId.isEmpty() || nodeId.indexOf(':') >= 0) {
      throw new IllegalArgumentException("nodeId must be non-empty without ':': " + nodeId);
    }
  }

  /** {@code <epoch>:<nodeId>}. */
  String encode() {
    return epoch + ":" + nodeId;
  }

  static PartitionOwner decode(String what, String text) {
    int colon = text.indexOf(':');
    try {
      return new PartitionOwner(Long.parseLong(text.substring(0, colon)), text.substring(colon + 1));
    } catch (RuntimeException e) {
      throw new MetadataException(what + ": unreadable owner epoch '" + text + "' (expected <epoch>:<nodeId>)", e);
    }
  }
}
