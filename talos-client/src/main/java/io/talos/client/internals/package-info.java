/**
 * Machinery of the client, not part of its API: the HTTP transport of Thrift calls, request
 * signing, the client version. May change without notice.
 */
package io.talos.client.internals;
