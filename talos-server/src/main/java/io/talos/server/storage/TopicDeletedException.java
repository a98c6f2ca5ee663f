package io.talos.server.storage;

import java.io.IOException;

/**
 * The topic incarnation a log was asked for has been deleted on this server. Resource names are
 * never reused, so this is final: the caller answers TOPIC_NOT_EXIST.
 */
public final class TopicDeletedException extends IOException {
  private static final long serialVersionUID = 1L;

  public TopicDeletedException(String topicResourceName) {
    super("topic " + topicResourceName + " has been deleted");
  }
}
