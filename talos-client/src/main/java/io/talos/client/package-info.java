/**
 * The Talos Java client. Start from {@link io.talos.client.TalosClient}, configured by
 * {@link io.talos.client.TalosClientConfig}; it hands out the
 * {@link io.talos.client.admin.TalosAdmin}, {@link io.talos.client.producer.SimpleProducer}s and
 * {@link io.talos.client.consumer.SimpleConsumer}s, all sharing its connections. Every failure
 * from the server or the network is a {@link io.talos.client.TalosException}.
 *
 * <p>The client speaks the protocol of the Talos SDK 2.0.2 (Thrift compact protocol over HTTP,
 * Galaxy-V3 signatures), so it also works with servers that serve that SDK. Two optional
 * extension fields go beyond it, and servers that do not know them ignore or omit them: the
 * deadline sent with each put and fetch, and the offset a put was stored at.
 */
package io.talos.client;
