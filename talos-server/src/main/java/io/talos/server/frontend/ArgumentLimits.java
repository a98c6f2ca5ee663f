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
import org.apache.thrift.protocol.TType;

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
    PathWalk path = WALKS.get();
    path.clear();
    try {
      checkStruct(path, args);
      return null;
    } catch (GalaxyTalosException e) {
      return e;
    } finally {
      path.clear(); // holds no map key of this request
    }
  }

  /**
   * A field of a struct class, as the walk needs it; {@code checked}: whether any limit applies
   * to its value (a string, a container, a struct, or a partition id), so that the walk neither
   * reads (and boxes) nor descends into the others.
   */
  private record Field(TFieldIdEnum id, String name, FieldValueMetaData meta, boolean checked) {}

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
        String name = f.getKey().getFieldName();
        FieldValueMetaData value = f.getValue().valueMetaData;
        fields.add(new Field(f.getKey(), name, value, checked(name, value)));
      }
      return fields.toArray(new Field[0]);
    }
  };

  /** Whether a limit applies to a value of this type in the field {@code field}. */
  private static boolean checked(String field, FieldValueMetaData meta) {
    if (meta == null || meta.isBinary()) return false; // binary: payloads, bounded by the body size
    return switch (meta.type) {
      case TType.STRING, TType.STRUCT, TType.LIST, TType.SET, TType.MAP -> true;
      case TType.I32 -> PARTITION_ID_FIELDS.contains(field);
      default -> false;
    };
  }

  /**
   * Where the walk is in the request (e.g. {@code messageBlocks[3].messageNumber}): one stack of
   * steps per walk, spelled only when a limit is broken, so a walk that finds nothing wrong makes
   * no object per value. A step is a field name, a list index, a map value (its key) or a map's key.
   * One per thread, reused walk after walk ({@link #WALKS}); not thread-safe.
   */
  private static final ThreadLocal<PathWalk> WALKS = ThreadLocal.withInitial(PathWalk::new);

  private static final class PathWalk {
    /** The field name of a step that names a map's key: spelled after the map's path. */
    private static final String MAP_KEY = " key";
    private String[] fields = new String[8];
    private Object[] keys = new Object[8];
    private int[] indexes = new int[8];
    private int depth;

    void field(String name) {
      push(name, null, -1);
    }

    void element(int index) {
      push(null, null, index);
    }

    void mapKey() {
      push(MAP_KEY, null, -1);
    }

    void mapValue(Object key) {
      push(null, key, -1);
    }

    void pop() {
      keys[--depth] = null;
    }

    /** Empties the stack (a walk that threw left its steps behind). */
    void clear() {
      java.util.Arrays.fill(keys, 0, depth, null);
      depth = 0;
    }

    private void push(String field, Object key, int index) {
      if (depth == fields.length) {
        fields = java.util.Arrays.copyOf(fields, 2 * depth);
        keys = java.util.Arrays.copyOf(keys, 2 * depth);
        indexes = java.util.Arrays.copyOf(indexes, 2 * depth);
      }
      fields[depth] = field;
      keys[depth] = key;
      indexes[depth] = index;
      depth++;
    }

    String text() {
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < depth; i++) {
        String field = fields[i];
        if (field == null) {
          sb.append('[').append(keys[i] != null ? keys[i] : Integer.toString(indexes[i])).append(']');
        } else if (field == MAP_KEY) {
          sb.append(field);
        } else {
          if (sb.length() > 0) sb.append('.');
          sb.append(field);
        }
      }
      return sb.toString();
    }
  }

  @SuppressWarnings("rawtypes")
  private void checkStruct(PathWalk path, TBase struct) throws GalaxyTalosException {
    for (Field f : FIELDS.get(struct.getClass())) {
      if (!f.checked() || !struct.isSet(f.id())) continue;
      path.field(f.name());
      check(path, f.name(), f.meta(), struct.getFieldValue(f.id()));
      path.pop();
    }
  }

  /** Checks {@code value}, whose step {@code path} ends with; a value of a type {@link #checked} refuses is not read. */
  @SuppressWarnings({"rawtypes", "unchecked"})
  private void check(PathWalk path, String field, FieldValueMetaData meta, Object value) throws GalaxyTalosException {
    if (value == null) return;
    if (value instanceof String s) {
      boolean name = NAME_FIELDS.contains(field);
      int limit = name ? maxNameChars : maxStringChars;
      if (s.length() > limit) {
        throw TalosErrors.invalidParams(path.text() + " has " + s.length() + " characters; at most " + limit + " ("
            + (name ? ServerConfig.REQUEST_NAME_MAX_CHARS : ServerConfig.REQUEST_STRING_MAX_CHARS) + ")");
      }
    } else if (value instanceof Integer i) {
      if (PARTITION_ID_FIELDS.contains(field) && i < 0) {
        throw TalosErrors.invalidParams(path.text() + " is " + i + "; partition ids are 0 or more");
      }
    } else if (value instanceof TBase t) {
      checkStruct(path, t);
    } else if (value instanceof Map<?, ?> m) {
      checkSize(path, m.size(), maxMapEntries, ServerConfig.REQUEST_MAP_MAX_ENTRIES);
      MapMetaData mm = (MapMetaData) meta;
      boolean keys = checked(field, mm.keyMetaData);
      boolean values = checked(field, mm.valueMetaData);
      if (!keys && !values) return;
      for (Map.Entry<?, ?> e : m.entrySet()) {
        if (keys) {
          path.mapKey();
          check(path, field, mm.keyMetaData, e.getKey());
          path.pop();
        }
        if (values) {
          path.mapValue(e.getKey());
          check(path, field, mm.valueMetaData, e.getValue());
          path.pop();
        }
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
      if (!checked(field, elem)) return;
      int i = 0;
      for (Object o : c) {
        path.element(i++);
        check(path, field, elem, o);
        path.pop();
      }
    }
  }

  private static void checkSize(PathWalk path, int size, int limit, String key) throws GalaxyTalosException {
    if (size > limit) {
      throw TalosErrors.invalidParams(path.text() + " has " + size + " entries; at most " + limit + " (" + key + ")");
    }
  }

  @Override
  public String toString() {
    return "ArgumentLimits" + List.of(maxContainerLength, maxDepth, maxNameChars, maxStringChars,
        maxPartitionListEntries, maxPutBlocks, maxMapEntries);
  }
}
