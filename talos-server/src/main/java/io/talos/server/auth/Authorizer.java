package io.talos.server.auth;

import io.talos.common.TopicNames;
import io.talos.common.errors.TalosErrors;
import io.talos.server.metadata.Credential;
import io.talos.server.metadata.MetadataStore;
import io.talos.server.metadata.TopicRecord;
import io.talos.thrift.ErrorCode;
import io.talos.thrift.GalaxyTalosException;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicTalosResourceName;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.apache.thrift.TBase;
import org.apache.thrift.TFieldIdEnum;
import org.apache.thrift.meta_data.FieldMetaData;

/**
 * The one place that says which permission each API call needs, checked for every decoded call
 * before the service runs it ({@link #check}). A method without a rule is refused: a method added
 * to the IDL is closed until it is given one here.
 *
 * <p>Rules ({@link #RULES}): calls on a topic need a {@link TopicPermission} bit on every topic
 * the arguments name (found by walking the argument struct: every {@code TopicTalosResourceName},
 * every {@code TopicAndPartition} (its resource name, else its name), every {@code topicName}
 * field); account calls need an authenticated account; admin calls need the admin credential.
 * An account's permission on a topic: the admin credential has all; the owner (the account that
 * created it) has all; any other account has what the topic's ACL grants it, else nothing.
 *
 * <p>Topics are read through the (cached) metadata store, so a grant or revocation is seen at once
 * on the node that made it and within {@code metadata.cache.ttl.ms} on the others. Thread-safe.
 */
public final class Authorizer {
  /** Who may make a call. */
  public enum Scope { ANY_ACCOUNT, ADMIN_ONLY, TOPIC }

  /** @param permission the {@link TopicPermission} bit needed on each named topic (TOPIC scope) */
  public record Rule(Scope scope, int permission, boolean adminWithoutTopic) {
    static Rule topic(int permission) {
      return new Rule(Scope.TOPIC, permission, false);
    }

    /** As {@link #topic}, and a call that names no topic (it means every topic) is the admin's. */
    static Rule topicOrAdmin(int permission) {
      return new Rule(Scope.TOPIC, permission, true);
    }
  }

  private static final Rule ANY = new Rule(Scope.ANY_ACCOUNT, 0, false);
  private static final Rule ADMIN = new Rule(Scope.ADMIN_ONLY, 0, false);

  /** Method name (unique over the five services) → what it needs. */
  public static final Map<String, Rule> RULES = Map.ofEntries(
      // every service
      Map.entry("getServiceVersion", ANY),
      Map.entry("validClientVersion", ANY),
      // MessageService
      Map.entry("putMessage", Rule.topic(TopicPermission.PUT_MESSAGE)),
      Map.entry("getMessage", Rule.topic(TopicPermission.GET_MESSAGE)),
      Map.entry("getTopicOffset", Rule.topic(TopicPermission.DESCRIBE_TOPIC)),
      Map.entry("getPartitionOffset", Rule.topic(TopicPermission.DESCRIBE_TOPIC)),
      Map.entry("getPartitionsOffset", Rule.topic(TopicPermission.DESCRIBE_TOPIC)),
      Map.entry("getOffsetForTimestamp", Rule.topic(TopicPermission.DESCRIBE_TOPIC)),
      Map.entry("initProducerId", ANY), // an id only; its puts are checked as puts
      // ConsumerService: consuming as a group
      Map.entry("lockPartition", Rule.topic(TopicPermission.GET_MESSAGE)),
      Map.entry("lockWorker", Rule.topic(TopicPermission.GET_MESSAGE)),
      Map.entry("unlockPartition", Rule.topic(TopicPermission.GET_MESSAGE)),
      Map.entry("renew", Rule.topic(TopicPermission.GET_MESSAGE)),
      Map.entry("updateOffset", Rule.topic(TopicPermission.GET_MESSAGE)),
      Map.entry("queryOffset", Rule.topic(TopicPermission.GET_MESSAGE)),
      Map.entry("queryWorker", Rule.topic(TopicPermission.GET_MESSAGE)),
      Map.entry("listConsumerGroups", Rule.topicOrAdmin(TopicPermission.DESCRIBE_TOPIC)),
      // TopicService
      Map.entry("createTopic", ANY),
      Map.entry("listTopics", ANY), // lists only the topics the caller holds some permission on
      Map.entry("describeTopic", Rule.topic(TopicPermission.DESCRIBE_TOPIC)),
      Map.entry("changeTopicAttribute", Rule.topic(TopicPermission.CHANGE_TOPIC)),
      Map.entry("deleteTopic", Rule.topic(TopicPermission.CHANGE_TOPIC)),
      Map.entry("addSubResourceName", Rule.topic(TopicPermission.CHANGE_TOPIC)),
      Map.entry("setTopicQuota", Rule.topic(TopicPermission.CHANGE_TOPIC)),
      Map.entry("deleteTopicQuota", Rule.topic(TopicPermission.CHANGE_TOPIC)),
      Map.entry("queryTopicQuota", Rule.topic(TopicPermission.DESCRIBE_TOPIC)),
      Map.entry("setPermission", Rule.topic(TopicPermission.CHANGE_PERMISSION)),
      Map.entry("revokePermission", Rule.topic(TopicPermission.CHANGE_PERMISSION)),
      Map.entry("listPermission", Rule.topic(TopicPermission.DESCRIBE_TOPIC)),
      Map.entry("getPermission", Rule.topic(TopicPermission.DESCRIBE_TOPIC)),
      Map.entry("resetPartition", ADMIN), // accepts data loss
      // QuotaService
      Map.entry("setUserQuota", ADMIN),
      Map.entry("deleteUserQuota", ADMIN),
      Map.entry("listUserQuota", ADMIN),
      Map.entry("queryUserQuota", ANY), // the caller's own quota
      // ClusterService
      Map.entry("getScheduleInfo", ANY), // node URLs only; a producer with PUT_MESSAGE alone routes with it
      // CredentialService
      Map.entry("createCredential", ADMIN),
      Map.entry("listCredentials", ADMIN),
      Map.entry("rotateCredential", ADMIN),
      Map.entry("revokeCredential", ADMIN));

  private final MetadataStore metadata;

  public Authorizer(MetadataStore metadata) {
    this.metadata = metadata;
  }

  /** The permission bits {@code credential} holds on {@code topic}. */
  public static int permissionOn(Credential credential, TopicRecord topic) {
    if (credential.admin() || credential.ownerId() != null && credential.ownerId().equals(topic.ownerId())) {
      return TopicPermission.ALL;
    }
    Integer granted = credential.ownerId() == null ? null : topic.acl().get(credential.ownerId());
    return granted == null ? 0 : granted;
  }

  /**
   * @return null if {@code credential} may make the call, else the error to answer:
   *     PERMISSION_DENIED_ERROR naming the missing permission, or the error resolving a named
   *     topic (TOPIC_NOT_EXIST, INVALID_TOPIC_NAME) that the service would answer as well
   */
  @SuppressWarnings("rawtypes")
  public GalaxyTalosException check(String method, TBase args, Credential credential) {
    Rule rule = RULES.get(method);
    if (rule == null) {
      return TalosErrors.of(ErrorCode.PERMISSION_DENIED_ERROR, "method '" + method + "' has no access rule; refused");
    }
    switch (rule.scope()) {
      case ANY_ACCOUNT:
        return null;
      case ADMIN_ONLY:
        return credential.admin() ? null : TalosErrors.of(ErrorCode.PERMISSION_DENIED_ERROR, method
            + " needs the admin credential; account '" + credential.ownerId() + "' is not admin");
      default:
        break;
    }
    // The admin holds every permission on every topic: no topic is read for it (a topic that
    // does not exist is answered by the service).
    if (credential.admin()) return null;
    List<Object> named = new ArrayList<>();
    collectTopics(args, named, 0);
    if (named.isEmpty() && rule.adminWithoutTopic()) {
      return TalosErrors.of(ErrorCode.PERMISSION_DENIED_ERROR, method + " without a topic covers every topic and"
          + " needs the admin credential; account '" + credential.ownerId() + "' may name a topic it can describe");
    }
    for (Object ref : named) {
      TopicRecord topic;
      try {
        topic = resolve(ref);
      } catch (GalaxyTalosException e) {
        return e;
      }
      int held = permissionOn(credential, topic);
      if (!TopicPermission.grants(held, rule.permission())) {
        String needed = TopicPermission.name(rule.permission());
        return TalosErrors.of(ErrorCode.PERMISSION_DENIED_ERROR, "permission denied: " + method + " needs "
            + needed + " on topic '" + topic.name() + "'; account '" + credential.ownerId() + "' holds "
            + TopicPermission.name(held) + " (the owner '" + topic.ownerId() + "' can grant " + needed
            + " with setPermission)");
      }
    }
    return null;
  }

  private TopicRecord resolve(Object ref) throws GalaxyTalosException {
    if (ref instanceof TopicTalosResourceName trn) {
      String resourceName = trn.getTopicTalosResourceName();
      String name = TopicNames.topicNameOf(resourceName);
      if (name == null) {
        throw TalosErrors.of(ErrorCode.INVALID_TOPIC_NAME, "topic resource name '" + resourceName
            + "' is malformed; expected ownerId#topicName#suffix");
      }
      TopicRecord topic = metadata.topic(name).orElse(null);
      if (topic == null || !topic.resourceName().equals(resourceName)) {
        throw TalosErrors.of(ErrorCode.TOPIC_NOT_EXIST, "topic resource '" + resourceName + "' does not exist");
      }
      return topic;
    }
    String name = (String) ref;
    if (name == null || name.isEmpty()) throw TalosErrors.of(ErrorCode.INVALID_TOPIC_NAME, "topic name is missing");
    return metadata.topic(name).orElseThrow(() -> TalosErrors.topicNotExist(name));
  }

  /**
   * Adds every topic reference in {@code value} to {@code out}: a TopicTalosResourceName, or a
   * topic name (String). A TopicAndPartition counts as its resource name when set (what the
   * services use), else its name.
   */
  @SuppressWarnings({"rawtypes", "unchecked"})
  private static void collectTopics(Object value, List<Object> out, int depth) {
    if (value == null || depth > 16) return;
    if (value instanceof TopicTalosResourceName trn) {
      out.add(trn);
    } else if (value instanceof TopicAndPartition tap) {
      if (tap.isSetTopicTalosResourceName() && tap.getTopicTalosResourceName().getTopicTalosResourceName() != null) {
        out.add(tap.getTopicTalosResourceName());
      } else {
        out.add(tap.getTopicName());
      }
    } else if (value instanceof Collection<?> c) {
      for (Object o : c) collectTopics(o, out, depth + 1);
    } else if (value instanceof Map<?, ?> m) {
      for (Map.Entry<?, ?> e : m.entrySet()) {
        collectTopics(e.getKey(), out, depth + 1);
        collectTopics(e.getValue(), out, depth + 1);
      }
    } else if (value instanceof TBase struct) {
      for (Object f : FieldMetaData.getStructMetaDataMap(struct.getClass()).keySet()) {
        TFieldIdEnum field = (TFieldIdEnum) f;
        if (!struct.isSet(field)) continue;
        Object v = struct.getFieldValue(field);
        if (field.getFieldName().equals("topicName") && v instanceof String s) {
          out.add(s);
        } else {
          collectTopics(v, out, depth + 1);
        }
      }
    }
  }
}
