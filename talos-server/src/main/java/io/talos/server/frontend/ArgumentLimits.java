package io.talos.server.frontend;

import io.talos.common.errors.TalosErrors;
import io.talos.server.ServerConfig;
import io.talos.thrift.GalaxyTalosException;
import java.util.ArrayList;
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
      checkStruct(null, args);
      return null;
    } catch (GalaxyTalosException e) {
      return e;
    }
  }

  /** A field of a struct class, as the walk needs it. */
  private record Field(TFieldIdEnum id, String name, FieldValueMetaData meta) {}

  /**
   * The fields of each struct class, read from its generated metadata once: every request walks
   * them, and iterating the metadata map allocates an entry per field.
   */
  private static final ClassValue<Field[]> FIELDS = new ClassValue<>() {
    @Override
    @SuppressWarnings({"rawtypes", "unchecked"})
    protected Field[] computeValue(Class<?> type) {
      Map<? extends TFieldIdEnum, FieldMetaData> meta = FieldMetaData.getStructMetaDataMap((Class) type);
      List<Field> fields = new ArrayList<>();
      for (Map.Entry<? extends TFieldIdEnum, FieldMetaData> f : meta.entrySet()) {
        fields.add(new Field(f.getKey(), f.getKey().getFieldName(), f.getValue().valueMetaData));
      }
      return fields.toArray(new Field[0]);
    }
  };

  /**
   * Where a value is in the request (e.g. {@code messageBlocks[3].messageNumber}), spelled only
   * when a limit is broken: a walk that finds nothing wrong builds no strings. The root is null.
   */
  private record Path(Path parent, String field, Object key, int index) {
    static final int NONE = -1;
    /** The {@link #field} of a map's key: spelled after the map's path. */
    private static final String MAP_KEY = " key";

    static Path field(Path parent, String name) {
      return new Path(parent, name, null, NONE);
    }

    static Path element(Path parent, int index) {
      return new Path(parent, null, null, index);
    }

    static Path mapKey(Path parent) {
      return new Path(parent, MAP_KEY, null, NONE);
    }

    static Path mapValue(Path parent, Object key) {
      return new Path(parent, null, key, NONE);
    }

    static String text(Path p) {
      return p == null ? "" : p.toString();
    }

    @Override
    public String toString() {
      String before = text(parent);
      if (field == null) return before + "[" + (key != null ? key : Integer.toString(index)) + "]";
      if (field.equals(MAP_KEY)) return before + field;
      return before.isEmpty() ? field : before + "." + field;
    }
  }

  @SuppressWarnings("rawtypes")
  private void checkStruct(Path path, TBase struct) throws GalaxyTalosException {
    for (Field f : FIELDS.get(struct.getClass())) {
      if (!struct.isSet(f.id())) continue;
      if (f.meta().isBinary()) continue; // the getter would copy the payload
      check(Path.field(path, f.name()), f.name(), f.meta(), struct.getFieldValue(f.id()));
    }
  }

  @SuppressWarnings({"rawtypes", "unchecked"})
  private void check(Path path, String field, FieldValueMetaData meta, Object value) throws GalaxyTalosException {
    if (value == null) return;
    if (value instanceof String s) {
      boolean name = NAME_FIELDS.contains(field);
      int limit = name ? maxNameChars : maxStringChars;
      if (s.length() > limit) {
        throw TalosErrors.invalidParams(Path.text(path) + " has " + s.length() + " characters; at most " + limit + " ("
            + (name ? ServerConfig.REQUEST_NAME_MAX_CHARS : ServerConfig.REQUEST_STRING_MAX_CHARS) + ")");
      }
    } else if (value instanceof Integer i) {
      if (PARTITION_ID_FIELDS.contains(field) && i < 0) {
        throw TalosErrors.invalidParams(Path.text(path) + " is " + i + "; partition ids are 0 or more");
      }
    } else if (value instanceof TBase t) {
      checkStruct(path, t);
    } else if (value instanceof Map<?, ?> m) {
      checkSize(path, m.size(), maxMapEntries, ServerConfig.REQUEST_MAP_MAX_ENTRIES);
      MapMetaData mm = (MapMetaData) meta;
      for (Map.Entry<?, ?> e : m.entrySet()) {
        check(Path.mapKey(path), field, mm.keyMetaData, e.getKey());
        check(Path.mapValue(path, e.getKey()), field, mm.valueMetaData, e.getValue());
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
      for (Object o : c) check(Path.element(path, i++), field, elem, o);
    }
  }

  private static void checkSize(Path path, int size, int limit, String key) throws GalaxyTalosException {
    if (size > limit) {
      throw TalosErrors.invalidParams(Path.text(path) + " has " + size + " entries; at most " + limit + " (" + key + ")");
    }
  }

  @Override
  public String toString() {
    return "ArgumentLimits" + List.of(maxContainerLength, maxDepth, maxNameChars, maxStringChars,
        maxPartitionListEntries, maxPutBlocks, maxMapEntries);
  }
}
