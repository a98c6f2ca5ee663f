package io.talos.client.cli;

import io.talos.client.TalosClientConfig;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** Where the server is and how to sign requests; shared by every command. */
final class ConnectionOptions {
  static final String ENDPOINT_ENV = "TALOS_ENDPOINT";
  static final String CREDENTIAL_ENV = "TALOS_CREDENTIAL";
  static final String DEFAULT_CREDENTIAL = "data/admin-credential.properties";

  @Option(names = "--endpoint", paramLabel = "URL",
      defaultValue = "${env:" + ENDPOINT_ENV + ":-" + TalosClientConfig.DEFAULT_ENDPOINT + "}",
      description = "Talos server URL (default: $" + ENDPOINT_ENV + ", else ${DEFAULT-VALUE}).")
  String endpoint;

  @Option(names = "--credential", paramLabel = "FILE",
      defaultValue = "${env:" + CREDENTIAL_ENV + ":-" + DEFAULT_CREDENTIAL + "}",
      description = "Properties file with secretKeyId and secretKey (default: $" + CREDENTIAL_ENV
          + ", else ${DEFAULT-VALUE}).")
  Path credential;

  @Option(names = "--request-timeout-ms", paramLabel = "MS",
      description = "Longest wait for one answer (default: 10000).")
  Integer requestTimeoutMs;

  @Option(names = "--verbose", description = "Print stack traces of errors.")
  boolean verbose;

  /** The client configuration these options describe, plus command-specific settings. */
  TalosClientConfig.Builder configBuilder() {
    TalosClientConfig.Builder builder = TalosClientConfig.builder()
        .endpoint(endpoint)
        .credentialFile(credential);
    if (requestTimeoutMs != null) builder.requestTimeoutMs(requestTimeoutMs);
    return builder;
  }
}
