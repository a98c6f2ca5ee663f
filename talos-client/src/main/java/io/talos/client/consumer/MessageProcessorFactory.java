package io.talos.client.consumer;

/** Makes one {@link MessageProcessor} per partition a {@link TalosConsumer} takes over. */
@FunctionalInterface
public interface MessageProcessorFactory {
  MessageProcessor createProcessor();
}
