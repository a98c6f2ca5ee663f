package io.talos.client.producer;

import java.util.OptionalLong;

/**
 * The outcome of a successful put: all its messages are stored, in order, at consecutive
 * offsets.
 *
 * @param messageCount messages stored
 * @param blockCount message blocks they were sent in
 * @param firstOffset the first message's offset when the server reports it (Talos servers do;
 *     servers of the original protocol do not)
 */
public record PutResult(int messageCount, int blockCount, OptionalLong firstOffset) {

  /** The last message's offset, when the first one is known and the put was not empty. */
  public OptionalLong lastOffset() {
    return firstOffset.isPresent() && messageCount > 0
        ? OptionalLong.of(firstOffset.getAsLong() + messageCount - 1) : OptionalLong.empty();
  }
}
