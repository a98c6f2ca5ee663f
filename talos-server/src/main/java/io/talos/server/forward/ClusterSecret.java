package io.talos.server.forward;

import io.talos.common.config.ConfigException;
import io.talos.server.ServerConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The secret every node of a cluster shares, and the proof a node gives of it on the peer port:
 * HMAC-SHA256 over a label, the owner's fresh random challenge and the connecting node's id. A
 * proof is good for one connection only (the challenge is new each time), and the secret itself
 * never travels.
 *
 * <p>Immutable; thread-safe (a Mac is created per call).
 */
public final class ClusterSecret {
  public static final int MIN_CHARS = 16;
  private static final byte[] LABEL = "talos-peer-v1\0".getBytes(StandardCharsets.UTF_8);
  private final byte[] key;

  public ClusterSecret(String secret) {
    if (secret == null || secret.length() < MIN_CHARS) {
      throw new ConfigException("the cluster secret must have at least " + MIN_CHARS + " characters (set "
          + ServerConfig.CLUSTER_PEER_SECRET_FILE + " or " + ServerConfig.CLUSTER_PEER_SECRET + ")");
    }
    this.key = secret.getBytes(StandardCharsets.UTF_8);
  }

  /** The secret {@code cluster.peer.secret.file} (first line) or else {@code cluster.peer.secret} holds. */
  public static ClusterSecret from(ServerConfig config) {
    String file = config.getString(ServerConfig.CLUSTER_PEER_SECRET_FILE);
    if (file != null && !file.isEmpty()) {
      try {
        List<String> lines = Files.readAllLines(Path.of(file), StandardCharsets.UTF_8);
        String secret = lines.isEmpty() ? "" : lines.get(0).strip();
        if (secret.length() < MIN_CHARS) {
          throw new ConfigException(ServerConfig.CLUSTER_PEER_SECRET_FILE + "=" + file + ": the first line must hold a"
              + " secret of at least " + MIN_CHARS + " characters");
        }
        return new ClusterSecret(secret);
      } catch (IOException e) {
        throw new ConfigException("cannot read " + ServerConfig.CLUSTER_PEER_SECRET_FILE + "=" + file + ": " + e);
      }
    }
    String secret = config.getString(ServerConfig.CLUSTER_PEER_SECRET);
    if (secret == null || secret.isEmpty()) {
      throw new ConfigException("cluster mode needs a cluster secret: set " + ServerConfig.CLUSTER_PEER_SECRET_FILE
          + " (a file whose first line is the secret) or " + ServerConfig.CLUSTER_PEER_SECRET
          + ", the same on every node, at least " + MIN_CHARS + " characters");
    }
    return new ClusterSecret(secret);
  }

  /** The proof that {@code nodeId} knows the secret, for {@code challenge}. */
  public byte[] proof(byte[] challenge, String nodeId) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      mac.update(LABEL);
      mac.update(challenge);
      mac.update(nodeId.getBytes(StandardCharsets.UTF_8));
      return mac.doFinal();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is not available", e);
    }
  }

  /** Whether {@code proof} is right for {@code challenge} and {@code nodeId} (constant time). */
  public boolean verify(byte[] challenge, String nodeId, byte[] proof) {
    return MessageDigest.isEqual(proof(challenge, nodeId), proof);
  }
}
