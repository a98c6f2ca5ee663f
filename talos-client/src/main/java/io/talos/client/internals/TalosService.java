package io.talos.client.internals;

/** The HTTP endpoints of the Talos API; each carries one Thrift service (credential: a Talos extension). */
public enum TalosService {
  TOPIC("/v1/api/topic"),
  MESSAGE("/v1/api/message"),
  CONSUMER("/v1/api/consumer"),
  QUOTA("/v1/api/quota"),
  CREDENTIAL("/v1/api/credential"),
  CLUSTER("/v1/api/cluster");

  private final String path;

  TalosService(String path) {
    this.path = path;
  }

  /** The URI path, e.g. {@code /v1/api/message}. */
  public String path() {
    return path;
  }
}
