package io.talos.common;

import java.util.regex.Pattern;

/**
 * Topic name and topic resource name rules, shared by server and clients.
 *
 * <p>A topic name matches {@value #NAME_REGEX} and has at most {@value #MAX_NAME_LENGTH}
 * characters. A topic resource name is {@code ownerId#topicName#uniqueSuffix}: the suffix makes a
 * re-created topic a different resource from the deleted one of the same name.
 */
public final class TopicNames {
  public static final String NAME_REGEX = "^(?!_)(?!-)(?!.*?_$)[a-zA-Z0-9_-]+$";
  public static final int MAX_NAME_LENGTH = 80;
  private static final Pattern NAME = Pattern.compile(NAME_REGEX);

  private TopicNames() {}

  /** @return null when valid, else a sentence saying what is wrong and what is allowed */
  public static String validateName(String name) {
    if (name == null || name.isEmpty()) {
      return "topic name is empty; allowed: 1 to " + MAX_NAME_LENGTH
          + " characters of [a-zA-Z0-9_-], not starting with '_' or '-', not ending with '_'";
    }
    if (name.length() > MAX_NAME_LENGTH) {
      return "topic name has " + name.length() + " characters; at most " + MAX_NAME_LENGTH
          + " are allowed";
    }
    if (!NAME.matcher(name).matches()) {
      return "topic name '" + name + "' is invalid; allowed: characters [a-zA-Z0-9_-], not"
          + " starting with '_' or '-', not ending with '_'";
    }
    return null;
  }

  public static String resourceName(String ownerId, String topicName, String uniqueSuffix) {
    return ownerId + "#" + topicName + "#" + uniqueSuffix;
  }

  /** @return the topic name inside a resource name, or null if it is not of the form a#b#c */
  public static String topicNameOf(String resourceName) {
    // several times per request (authorization, quota, routing): the name is cut out, not split
    if (resourceName == null) return null;
    int first = resourceName.indexOf('#');
    if (first < 0) return null;
    int second = resourceName.indexOf('#', first + 1);
    if (second <= first + 1 || resourceName.indexOf('#', second + 1) >= 0) return null;
    return resourceName.substring(first + 1, second);
  }
}
