package io.talos.server.metadata;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;

/**
 * The stored form of metadata values: one JSON object per value, UTF-8 text, with an explicit
 * format version in field {@code "v"}. Field names are spelled out here, not derived from the
 * record components, so renaming a Java field never changes the stored format.
 *
 * <pre>
 * topic       {"v":1,"name":"t1","resourceName":"alice#t1#8f3a","ownerId":"alice",
 *              "partitionCount":8,"retentionSecs":86400,"attributes":{"k":"v"},
 *              "createTimestampMs":1700000000000,"version":3,
 *              "acl":{"bob":6},"quota":{...}}   (acl and quota optional: written when not empty)
 * quota       {"v":1,"spaceBytes":-1,"putRequestsPerSec":-1,"getRequestsPerSec":-1,
 *              "putBytesPerSec":1048576,"getBytesPerSec":-1,"topicCount":-1}   (-1: no limit)
 * worker      {"v":1,"lastRegisterMs":1700000000000}
 * lock        {"v":1,"workerId":"w-1","lastRenewMs":1700000000000,"token":7}
 *              (token: the lock's fencing token; absent in locks written before tokens: 0)
 * lock token  {"v":1,"token":7}   (the last fencing token issued for a partition lock)
 * offset      {"v":1,"offset":1234}
 * credential  {"v":1,"secretKeyId":"AK1","secretKey":"...","ownerId":"alice","admin":false,
 *              "createdMs":..,"rotatedMs":..,"previousSecretKey":"...","previousSecretExpiresMs":..,
 *              "revokedMs":..}   (the fields after "admin" are optional: written when set)
 * tombstone   {"v":1,"requestedMs":1700000000000}
 * </pre>
 *
 * Attributes are written in key order so equal records encode to equal text. Decoding rejects a
 * value of another format version or with a missing or mistyped field with a {@link
 * MetadataException} naming the value. A later format adds fields or bumps {@code "v"}; readers
 * must then accept every version still on disk. Stateless and thread-safe.
 */
final class MetadataCodec {
  /** The value format this code writes and the only one it reads. */
  static final int FORMAT_VERSION = 1;

  private static final ObjectMapper JSON = new ObjectMapper();

  private MetadataCodec() {}

  static String encodeTopic(TopicRecord topic) {
    ObjectNode node = newValue();
    node.put("name", topic.name());
    node.put("resourceName", topic.resourceName());
    node.put("ownerId", topic.ownerId());
    node.put("partitionCount", topic.partitionCount());
    node.put("retentionSecs", topic.retentionSecs());
    ObjectNode attributes = node.putObject("attributes");
    new TreeMap<>(topic.attributes()).forEach(attributes::put);
    node.put("createTimestampMs", topic.createTimestampMs());
    node.put("version", topic.version());
    if (!topic.acl().isEmpty()) {
      ObjectNode acl = node.putObject("acl");
      new TreeMap<>(topic.acl()).forEach(acl::put);
    }
    if (!topic.quota().unlimited()) node.set("quota", quotaNode(topic.quota()));
    return write(node);
  }

  private static ObjectNode quotaNode(RateQuota q) {
    ObjectNode node = JSON.createObjectNode();
    node.put("spaceBytes", q.spaceBytes());
    node.put("putRequestsPerSec", q.putRequestsPerSec());
    node.put("getRequestsPerSec", q.getRequestsPerSec());
    node.put("putBytesPerSec", q.putBytesPerSec());
    node.put("getBytesPerSec", q.getBytesPerSec());
    node.put("topicCount", q.topicCount());
    return node;
  }

  private static RateQuota quotaOf(String what, JsonNode node, String shown) {
    if (node == null || !node.isObject()) throw malformed(what, "field 'quota' is not an object", shown);
    return new RateQuota(longValue(what, node, "spaceBytes", shown), longValue(what, node, "putRequestsPerSec", shown),
        longValue(what, node, "getRequestsPerSec", shown), longValue(what, node, "putBytesPerSec", shown),
        longValue(what, node, "getBytesPerSec", shown), longValue(what, node, "topicCount", shown));
  }

  static String encodeQuota(RateQuota quota) {
    ObjectNode node = newValue();
    node.setAll(quotaNode(quota));
    return write(node);
  }

  static RateQuota decodeQuota(String what, String text) {
    String shown = abbreviate(text);
    return quotaOf(what, read(what, text, shown), shown);
  }

  static TopicRecord decodeTopic(String what, String text) {
    String shown = abbreviate(text);
    JsonNode node = read(what, text, shown);
    JsonNode attributesNode = node.get("attributes");
    if (attributesNode == null || !attributesNode.isObject()) {
      throw malformed(what, "field 'attributes' is missing or not an object", shown);
    }
    Map<String, String> attributes = new TreeMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = attributesNode.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      if (!e.getValue().isTextual()) {
        throw malformed(what, "attribute '" + e.getKey() + "' is not a string", shown);
      }
      attributes.put(e.getKey(), e.getValue().textValue());
    }
    Map<String, Integer> acl = new TreeMap<>();
    JsonNode aclNode = node.get("acl");
    if (aclNode != null && !aclNode.isNull()) {
      if (!aclNode.isObject()) throw malformed(what, "field 'acl' is not an object", shown);
      for (Iterator<Map.Entry<String, JsonNode>> it = aclNode.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        if (!e.getValue().isInt()) throw malformed(what, "acl entry '" + e.getKey() + "' is not an integer", shown);
        acl.put(e.getKey(), e.getValue().intValue());
      }
    }
    JsonNode quotaNode = node.get("quota");
    RateQuota quota = quotaNode == null || quotaNode.isNull() ? RateQuota.UNLIMITED : quotaOf(what, quotaNode, shown);
    return new TopicRecord(text(what, node, "name", shown),
        text(what, node, "resourceName", shown), nullableText(what, node, "ownerId", shown),
        integer(what, node, "partitionCount", shown), integer(what, node, "retentionSecs", shown),
        attributes, longValue(what, node, "createTimestampMs", shown),
        longValue(what, node, "version", shown), acl, quota);
  }

  static String encodeWorker(long lastRegisterMs) {
    ObjectNode node = newValue();
    node.put("lastRegisterMs", lastRegisterMs);
    return write(node);
  }

  static long decodeWorker(String what, String text) {
    String shown = abbreviate(text);
    return longValue(what, read(what, text, shown), "lastRegisterMs", shown);
  }

  static String encodeLock(String workerId, long lastRenewMs, long fencingToken) {
    ObjectNode node = newValue();
    node.put("workerId", workerId);
    node.put("lastRenewMs", lastRenewMs);
    node.put("token", fencingToken);
    return write(node);
  }

  static PartitionLock decodeLock(String what, int partitionId, String text) {
    String shown = abbreviate(text);
    JsonNode node = read(what, text, shown);
    // Locks written before fencing tokens existed have none: token 0, below every issued one.
    long token = node.has("token") ? longValue(what, node, "token", shown) : 0;
    return new PartitionLock(partitionId, text(what, node, "workerId", shown),
        longValue(what, node, "lastRenewMs", shown), token);
  }

  static String encodeLockToken(long token) {
    ObjectNode node = newValue();
    node.put("token", token);
    return write(node);
  }

  static long decodeLockToken(String what, String text) {
    String shown = abbreviate(text);
    return longValue(what, read(what, text, shown), "token", shown);
  }

  static String encodeOffset(long offset) {
    ObjectNode node = newValue();
    node.put("offset", offset);
    return write(node);
  }

  static long decodeOffset(String what, String text) {
    String shown = abbreviate(text);
    return longValue(what, read(what, text, shown), "offset", shown);
  }

  static String encodeTombstone(long requestedMs) {
    ObjectNode node = newValue();
    node.put("requestedMs", requestedMs);
    return write(node);
  }

  static long decodeTombstone(String what, String text) {
    String shown = abbreviate(text);
    return longValue(what, read(what, text, shown), "requestedMs", shown);
  }

  static String encodeCredential(Credential credential) {
    ObjectNode node = newValue();
    node.put("secretKeyId", credential.secretKeyId());
    node.put("secretKey", credential.secretKey());
    node.put("ownerId", credential.ownerId());
    node.put("admin", credential.admin());
    if (credential.createdMs() != 0) node.put("createdMs", credential.createdMs());
    if (credential.rotatedMs() != 0) node.put("rotatedMs", credential.rotatedMs());
    if (credential.previousSecretKey() != null) {
      node.put("previousSecretKey", credential.previousSecretKey());
      node.put("previousSecretExpiresMs", credential.previousSecretExpiresMs());
    }
    if (credential.revokedMs() != 0) node.put("revokedMs", credential.revokedMs());
    return write(node);
  }

  static Credential decodeCredential(String what, String text) {
    // Error messages never quote a credential value: it holds the secret key.
    String shown = "(value not shown: it holds a secret)";
    JsonNode node = read(what, text, shown);
    JsonNode admin = node.get("admin");
    if (admin == null || !admin.isBoolean()) {
      throw malformed(what, "field 'admin' is missing or not a boolean", shown);
    }
    return new Credential(text(what, node, "secretKeyId", shown),
        nullableText(what, node, "secretKey", shown), nullableText(what, node, "ownerId", shown),
        admin.booleanValue(), nullableText(what, node, "previousSecretKey", shown),
        optionalLong(what, node, "previousSecretExpiresMs", shown), optionalLong(what, node, "createdMs", shown),
        optionalLong(what, node, "rotatedMs", shown), optionalLong(what, node, "revokedMs", shown));
  }

  /** A field added to a format version after values without it were written: absent reads as 0. */
  private static long optionalLong(String what, JsonNode node, String field, String shown) {
    JsonNode value = node.get(field);
    return value == null || value.isNull() ? 0 : longValue(what, node, field, shown);
  }

  // ---- helpers ------------------------------------------------------------------------------

  private static ObjectNode newValue() {
    ObjectNode node = JSON.createObjectNode();
    node.put("v", FORMAT_VERSION);
    return node;
  }

  private static String write(ObjectNode node) {
    try {
      return JSON.writeValueAsString(node);
    } catch (JsonProcessingException e) {
      // A tree of strings and numbers always serializes; this would be a Jackson bug.
      throw new IllegalStateException("cannot encode metadata value " + node, e);
    }
  }

  /**
   * Parses {@code text} and checks it is an object of the format version this code reads.
   *
   * @param shown what error messages quote of the value
   */
  private static JsonNode read(String what, String text, String shown) {
    JsonNode node;
    try {
      node = JSON.readTree(text);
    } catch (JsonProcessingException e) {
      throw new MetadataException("cannot decode " + what + ": not JSON: " + shown, e);
    }
    if (node == null || !node.isObject()) {
      throw malformed(what, "not a JSON object", shown);
    }
    JsonNode v = node.get("v");
    if (v == null || !v.isInt()) {
      throw malformed(what, "field 'v' (format version) is missing", shown);
    }
    if (v.intValue() != FORMAT_VERSION) {
      throw malformed(what, "value format v=" + v.intValue() + ", this server reads only v="
          + FORMAT_VERSION + " (written by a newer Talos?)", shown);
    }
    return node;
  }

  private static String text(String what, JsonNode node, String field, String shown) {
    String value = nullableText(what, node, field, shown);
    if (value == null) {
      throw malformed(what, "field '" + field + "' is missing", shown);
    }
    return value;
  }

  private static String nullableText(String what, JsonNode node, String field, String shown) {
    JsonNode value = node.get(field);
    if (value == null || value.isNull()) {
      return null;
    }
    if (!value.isTextual()) {
      throw malformed(what, "field '" + field + "' is not a string", shown);
    }
    return value.textValue();
  }

  private static int integer(String what, JsonNode node, String field, String shown) {
    JsonNode value = node.get(field);
    if (value == null || !value.isInt()) {
      throw malformed(what, "field '" + field + "' is missing or not a 32-bit integer", shown);
    }
    return value.intValue();
  }

  private static long longValue(String what, JsonNode node, String field, String shown) {
    JsonNode value = node.get(field);
    if (value == null || !value.isIntegralNumber() || !value.canConvertToLong()) {
      throw malformed(what, "field '" + field + "' is missing or not a 64-bit integer", shown);
    }
    return value.longValue();
  }

  private static MetadataException malformed(String what, String problem, String shown) {
    return new MetadataException("cannot decode " + what + ": " + problem + ": " + shown, null);
  }

  private static String abbreviate(String text) {
    return text.length() <= 200 ? text : text.substring(0, 200) + "...";
  }
}
