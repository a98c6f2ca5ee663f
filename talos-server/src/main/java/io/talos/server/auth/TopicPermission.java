package io.talos.server.auth;

import io.talos.thrift.Permission;
import java.util.ArrayList;
import java.util.List;

/**
 * The meaning of the SDK 2.0.2 {@code Permission} levels, which are bit sets: each level's value
 * is the OR of the elementary permissions it grants, as the enum's numbers show
 * ({@code FULL_MESSAGE_CONTROL = 3 = PUT_MESSAGE | GET_MESSAGE}, {@code FULL_CONTROL = 15},
 * {@code ADMIN = 31}). The five elementary permissions:
 *
 * <pre>
 * bit  name               allows
 *  1   PUT_MESSAGE        putMessage
 *  2   GET_MESSAGE        getMessage, the consumer-group calls, the offset queries
 *  4   DESCRIBE_TOPIC     describeTopic, the offset queries, queryTopicQuota, listPermission, getPermission
 *  8   CHANGE_TOPIC       changeTopicAttribute, deleteTopic, addSubResourceName, setTopicQuota, deleteTopicQuota
 * 16   CHANGE_PERMISSION  setPermission, revokePermission
 * </pre>
 *
 * A level grants a call iff it holds the call's bit ({@link #grants}). The topic's owner holds
 * {@code ADMIN} (all five) on it; the admin credential holds all of them on every topic. Values
 * that are not one of the SDK's levels are refused when granted. Stateless.
 */
public final class TopicPermission {
  public static final int PUT_MESSAGE = Permission.PUT_MESSAGE.getValue();
  public static final int GET_MESSAGE = Permission.GET_MESSAGE.getValue();
  public static final int DESCRIBE_TOPIC = Permission.DESCRIBE_TOPIC.getValue();
  public static final int CHANGE_TOPIC = Permission.CHANGE_TOPIC.getValue();
  public static final int CHANGE_PERMISSION = Permission.CHANGE_PERMISSION.getValue();
  public static final int ALL = Permission.ADMIN.getValue();

  private static final int[] ELEMENTARY = {PUT_MESSAGE, GET_MESSAGE, DESCRIBE_TOPIC, CHANGE_TOPIC, CHANGE_PERMISSION};

  private TopicPermission() {}

  /** Whether {@code level} (a stored or granted value) includes every bit of {@code needed}. */
  public static boolean grants(int level, int needed) {
    return (level & needed) == needed;
  }

  /** The SDK level of that exact value, or null if the value is none of the SDK's levels. */
  public static Permission level(int value) {
    return Permission.findByValue(value);
  }

  /** A level's name, or for a value that is none, its elementary names joined with '|'. */
  public static String name(int value) {
    Permission p = Permission.findByValue(value);
    if (p != null) return p.name();
    List<String> parts = new ArrayList<>();
    for (int bit : ELEMENTARY) {
      if ((value & bit) != 0) parts.add(Permission.findByValue(bit).name());
    }
    return parts.isEmpty() ? "NONE" : String.join("|", parts);
  }
}
