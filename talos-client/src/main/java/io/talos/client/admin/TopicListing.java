package io.talos.client.admin;

/**
 * A topic's identity.
 *
 * @param name the topic name, unique among live topics
 * @param resourceName {@code ownerId#topicName#uniqueSuffix}: different for a topic deleted and
 *     created again under the same name
 * @param ownerId the identity that created the topic
 */
public record TopicListing(String name, String resourceName, String ownerId) {}
