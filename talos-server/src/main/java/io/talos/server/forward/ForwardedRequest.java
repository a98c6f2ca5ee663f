package io.talos.server.forward;

/**
 * One client request forwarded from the node that received it to the partition's owner: the
 * caller as the front-end authenticated it (never a secret), the Thrift call as the client sent
 * it, and how the client's clock relates to the sender's (to place the request's deadline).
 *
 * <p>Every request that travels over the peer port is forwarded by definition: the owner serves
 * it only if it owns the partition and never forwards it again.
 *
 * @param secretKeyId the key id the client signed with
 * @param ownerId the account the credential acts as
 * @param admin whether the credential is an admin's
 * @param talosClient whether the client is our SDK (understands extension error codes)
 * @param requestId the client's request id (query parameter {@code id}), or null
 * @param clockOffsetMs receiving node's clock minus the client's (from its signed timestamp)
 * @param service API path segment after /v1/api/ ({@code message})
 * @param method Thrift method name
 * @param body the Thrift compact call; only {@code [0, bodyLength)} is the call
 */
public record ForwardedRequest(String secretKeyId, String ownerId, boolean admin, boolean talosClient,
    String requestId, long clockOffsetMs, String service, String method, byte[] body, int bodyLength) {}
