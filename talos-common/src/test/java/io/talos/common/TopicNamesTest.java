package io.talos.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

class TopicNamesTest {
  @Test
  void theTopicNameIsTheMiddleOfExactlyThreeParts() {
    assertEquals("orders", TopicNames.topicNameOf("CL123#orders#a1b2"));
    assertEquals("o", TopicNames.topicNameOf("#o#"));
    assertNull(TopicNames.topicNameOf(null));
    assertNull(TopicNames.topicNameOf("orders"));
    assertNull(TopicNames.topicNameOf("CL123#orders"));
    assertNull(TopicNames.topicNameOf("CL123##a1b2"), "an empty name");
    assertNull(TopicNames.topicNameOf("CL123#orders#a1#b2"), "four parts");
    assertNull(TopicNames.topicNameOf("CL123#orders#a1b2#"), "a trailing empty part counts");
    assertNull(TopicNames.topicNameOf("##"));
    assertNull(TopicNames.topicNameOf("#"));
  }
}
