package io.talos.client.admin;

/** Life cycle of a topic as the server reports it. */
public enum TopicStatus {
  CREATING,
  ACTIVE,
  DELETING,
  DELETED,
  /** A status this client does not know (a newer server). */
  UNKNOWN
}
