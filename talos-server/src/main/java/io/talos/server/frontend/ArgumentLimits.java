package io.talos.server.frontend;

import io.talos.common.errors.TalosErrors;
import io.talos.server.ServerConfig;
import io.talos.thrift.GalaxyTalosException;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.thrift.TBase;
import org.apache.thrift.TFieldIdEnum;
import org.apache.thrift.meta_data.FieldMetaData;
import org.apache.thrift.meta_data.FieldValueMetaData;
import org.apache.thrift.meta_data.ListMetaData;
import org.apache.thrift.meta_data.MapMetaData;
import org.apache.thrift.meta_data.SetMetaData;

/**
 * The declared limits of request arguments, checked on every decoded call of every service
 * before the service sees it: every string, list, map and partition id of the argument struct,
 * found by walking the generated Thrift metadata, so that a field added to the IDL is covered
 * without code here. A violation is INVALID_REQUEST_PARAMS with a message naming the field (its
 * path in the request), the value and the limit with its config key.
 *
 * <ul>
 *   <li>names and ids ({@link #NAME_FIELDS}): at most {@code request.name.max.chars} characters;
 *   <li>other strings: at most {@code request.string.max.chars};
 *   <li>partition lists: at most {@code request.partition.list.max.entries} entries;
 *   <li>putMessage's messageBlocks: at most {@code request.put.blocks.max.count};
 *   <li>maps: at most {@code request.map.max.entries};
 *   <li>other lists and sets: at most {@code server.request.container.max.length} (already bounded
 *       by the decoder);
 *   <li>partition ids: not negative (the upper bound is the topic's, checked by the service).
 * </ul>
 * Binary fields (message payloads) are bounded by the body size and checked by the message
 * validator. The two decoder limits (container length, nesting depth) live here too; the
 * decoder ({@link BoundedCompactProtocol}) enforces them before memory is spent.
 *
 * <p>Immutable, thread-safe.
 */
public final class ArgumentLimits {
  /** Fields holding a name or an id. */
  static final Set<String> NAME_FIELDS = Set.of("topicName", "topicTalosResourceName", "consumerGroup", "workerId",
      "sequenceId", "developerId", "orgId", "adminTeamId", "identifier", "ownerId", "date");
  /** Fields holding partition ids (an i32 or a list of them). */
  static final Set<String> PARTITION_ID_FIELDS = Set.of("partitionId", "partitionIdList");
  static final Set<String> PARTITION_LIST_FIELDS = Set.of("partitionIdList", "topicAndPartitionList");

  final int maxContainerLength;
  final int maxDepth;
  private final int maxNameChars;
  private final int maxStringChars;
  private final int maxPartitionListEntries;
  private final int maxPutBlocks;
  private final int maxMapEntries;

  public ArgumentLimits(int maxContainerLength, int maxDepth, int maxNameChars, int maxStringChars,
      int maxPartitionListEntries, int maxPutBlocks, int maxMapEntries) {
    this.maxContainerLength = maxContainerLength;
    this.maxDepth = maxDepth;
    this.maxNameChars = maxNameChars;
    this.maxStringChars = maxStringChars;
    this.maxPartitionListEntries = maxPartitionListEntries;
    this.maxPutBlocks = maxPutBlocks;
    this.maxMapEntries = maxMapEntries;
  }

  public static ArgumentLimits from(ServerConfig config) {
    return new ArgumentLimits(config.getInt(ServerConfig.REQUEST_CONTAINER_MAX_LENGTH),
        config.getInt(ServerConfig.REQUEST_NESTING_MAX_DEPTH), config.getInt(ServerConfig.REQUEST_NAME_MAX_CHARS),
        config.getInt(ServerConfig.REQUEST_STRING_MAX_CHARS), config.getInt(ServerConfig.REQUEST_PARTITION_LIST_MAX_ENTRIES),
        config.getInt(ServerConfig.REQUEST_PUT_BLOCKS_MAX_COUNT), config.getInt(ServerConfig.REQUEST_MAP_MAX_ENTRIES));
  }

  /** The first limit {@code args} (a generated {@code *_args} struct) breaks, or null. */
  GalaxyTalosException violation(TBase<?, ?> args) {
    try {
      checkStruct("", args);
      return null;
    } catch (GalaxyTalosException e) {
      return e;
    }
  }

  @SuppressWarnings({"rawtypes", "unchecked"})
  private void checkStruct(String path, TBase struct) throws GalaxyTalosException {
    Map<? extends TFieldIdEnum, FieldMetaData> fields = FieldMetaData.getStructMetaDataMap(struct.getClass());
    for (Map.Entry<? extends TFieldIdEnum, FieldMetaData> f : fields.entrySet()) {
      if (!struct.isSet(f.getKey())) continue;
      FieldValueMetaData meta = f.getValue().valueMetaData;
      if (meta.isBinary()) continue; // the getter would copy the payload
      String name = f.getKey().getFieldName();
      check(path.isEmpty() ? name : path + "." + name, name, meta, struct.getFieldValue(f.getKey()));
    }
  }

  @SuppressWarnings("rawtypes")
  private void check(String path, String field, FieldValueMetaData meta, Object value) throws GalaxyTalosException {
    if (value == null) return;
    if (value instanceof String s) {
      boolean name = NAME_FIELDS.contains(field);
      int limit = name ? maxNameChars : maxStringChars;
      if (s.length() > limit) {
        throw TalosErrors.invalidParams(path + " has " + s.length() + " characters; at most " + limit + " ("
            + (name ? ServerConfig.REQUEST_NAME_MAX_CHARS : ServerConfig.REQUEST_STRING_MAX_CHARS) + ")");
      }
    } else if (value instanceof Integer i) {
      if (PARTITION_ID_FIELDS.contains(field) && i < 0) {
        throw TalosErrors.invalidParams(path + " is " + i + "; partition ids are 0 or more");
      }
    } else if (value instanceof TBase t) {
      checkStruct(path, t);
    } else if (value instanceof Map<?, ?> m) {
      checkSize(path, m.size(), maxMapEntries, ServerConfig.REQUEST_MAP_MAX_ENTRIES);
      MapMetaData mm = (MapMetaData) meta;
      for (Map.Entry<?, ?> e : m.entrySet()) {
        check(path + " key", field, mm.keyMetaData, e.getKey());
        check(path + "[" + e.getKey() + "]", field, mm.valueMetaData, e.getValue());
      }
    } else if (value instanceof Collection<?> c) {
      if (PARTITION_LIST_FIELDS.contains(field)) {
        checkSize(path, c.size(), maxPartitionListEntries, ServerConfig.REQUEST_PARTITION_LIST_MAX_ENTRIES);
      } else if (field.equals("messageBlocks")) {
        checkSize(path, c.size(), maxPutBlocks, ServerConfig.REQUEST_PUT_BLOCKS_MAX_COUNT);
      } else {
        checkSize(path, c.size(), maxContainerLength, ServerConfig.REQUEST_CONTAINER_MAX_LENGTH);
      }
      FieldValueMetaData elem = meta instanceof ListMetaData l ? l.elemMetaData
          : meta instanceof SetMetaData s ? s.elemMetaData : null;
      if (elem == null || elem.isBinary()) return;
      int i = 0;
      for (Object o : c) check(path + "[" + i++ + "]", field, elem, o);
    }
  }

  private static void checkSize(String path, int size, int limit, String key) throws GalaxyTalosException {
    if (size > limit) {
      throw TalosErrors.invalidParams(path + " has " + size + " entries; at most " + limit + " (" + key + ")");
    }
  }

  @Override
  public String toString() {
    return "ArgumentLimits" + List.of(maxContainerLength, maxDepth, maxNameChars, maxStringChars,
        maxPartitionListEntries, maxPutBlocks, maxMapEntries);
  }
}
