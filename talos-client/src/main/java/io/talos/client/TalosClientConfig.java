package io.talos.client;

import io.talos.client.codec.CompressionType;
import io.talos.common.config.ConfigDef;
import io.talos.common.config.ConfigDef.Type;
import io.talos.common.config.ConfigDef.Validator;
import io.talos.common.config.ConfigException;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;

/**
 * Settings of a {@link TalosClient}: where the server is, the credential requests are signed
 * with, timeouts and size limits. Every setting is declared once in {@link #DEFINITION} with its
 * default, allowed range and a doc line; both the {@link Builder} and {@link #fromProperties}
 * validate against it and report every bad setting at once in a {@link ConfigException} that
 * names the setting, e.g. {@code requestTimeoutMs=0: must be between 1 and 3600000}.
 *
 * <p>Immutable and thread-safe.
 */
public final class TalosClientConfig {
  /** Base URL of a Talos server, {@code http://host:port} or {@code https://host:port}. */
  public static final String ENDPOINT = "endpoint";
  /** Identifies the credential; sent in the Authorization header. */
  public static final String SECRET_KEY_ID = "secretKeyId";
  /** Signs requests; never sent. */
  public static final String SECRET_KEY = "secretKey";
  public static final String CONNECT_TIMEOUT_MS = "connectTimeoutMs";
  public static final String REQUEST_TIMEOUT_MS = "requestTimeoutMs";
  public static final String MAX_CONNECTIONS_PER_ENDPOINT = "maxConnectionsPerEndpoint";
  public static final String MAX_MESSAGE_BYTES = "maxMessageBytes";
  public static final String MAX_BLOCK_BYTES = "maxBlockBytes";
  public static final String MAX_FETCH_BYTES = "maxFetchBytes";
  public static final String MAX_RESPONSE_BYTES = "maxResponseBytes";
  public static final String COMPRESSION_TYPE = "compressionType";
  public static final String BODY_DIGEST = "bodyDigest";

  /** The largest message the Talos protocol allows: 10 MiB. */
  public static final int PROTOCOL_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;
  /**
   * Default {@link #MAX_RESPONSE_BYTES}: the largest answer a server with default settings sends
   * is a getMessage of at most message.get.max.bytes (8 MiB) of whole blocks, or one block alone,
   * which is at most a put request (server.request.max.bytes, 32 MiB); twice that leaves room for
   * a server configured larger.
   */
  public static final int DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;
  /** The largest byte array a JVM makes. */
  public static final int MAX_ARRAY_BYTES = Integer.MAX_VALUE - 8;
  public static final String DEFAULT_ENDPOINT = "http://127.0.0.1:8080";

  /** Every setting, its default, range and meaning. */
  public static final ConfigDef DEFINITION = new ConfigDef()
      .section("Connection")
      .define(ENDPOINT, Type.STRING, DEFAULT_ENDPOINT, TalosClientConfig::checkEndpoint,
          "Base URL of a Talos server: http://host:port or https://host:port; the API paths"
              + " /v1/api/... are appended to it.")
      .define(SECRET_KEY_ID, Type.STRING, null, Validator.nonEmpty(),
          "Id of the credential requests are signed with (required).")
      .define(SECRET_KEY, Type.STRING, null, Validator.nonEmpty(),
          "Secret of the credential requests are signed with (required; never sent).")
      .define(CONNECT_TIMEOUT_MS, Type.INT, 5_000, Validator.between(1, 600_000),
          "Longest wait for a TCP connection to the server.")
      .define(REQUEST_TIMEOUT_MS, Type.INT, 10_000, Validator.between(1, 3_600_000),
          "Longest wait from sending a request to its answer's headers (connecting, writing,"
              + " the server's work), then for any one read of the answer's body (a reply that keeps"
              + " arriving is not cut off); also sent to the server as the request's deadline.")
      .define(MAX_CONNECTIONS_PER_ENDPOINT, Type.INT, 1024, Validator.between(1, 65_536),
          "Most open keep-alive connections to one server (endpoint or cluster node); a call"
              + " holds one for its whole exchange, so this bounds the calls in progress to one"
              + " server: more wait for a free connection up to connectTimeoutMs. The default"
              + " covers a producer's max.in.flight.requests (at most 256) and a long-polling"
              + " consumer's one fetch per held partition.")
      .define(MAX_RESPONSE_BYTES, Type.INT, DEFAULT_MAX_RESPONSE_BYTES,
          Validator.between(1024 * 1024, MAX_ARRAY_BYTES),
          "Largest answer body accepted from a server; a longer one (declared in Content-Length or"
              + " as it arrives) fails the call, not retriable, before more memory is taken. An"
              + " answer's buffer grows with what arrives, whatever length it declares. The default"
              + " covers a getMessage answer of a server with default limits (one block of up to 32"
              + " MiB); must be at least maxFetchBytes.")
      .define(BODY_DIGEST, Type.STRING, BodyDigest.AES_GCM.configName(),
          Validator.oneOf(BodyDigest.AES_GCM.configName(), BodyDigest.SHA256.configName(),
              BodyDigest.MD5.configName()),
          "How the signature covers the request body: AES-GCM (header X-Xiaomi-Content-Tag, a tag"
              + " keyed by the secret; the cheapest, 2.5-3x faster than SHA-256), SHA-256 (header"
              + " X-Xiaomi-Content-SHA256; for Talos servers of the previous version) or MD5 (header"
              + " X-Xiaomi-Content-MD5, as the SDK 2.0.2 sends; for servers that know neither).")
      .section("Messages")
      .define(MAX_MESSAGE_BYTES, Type.INT, PROTOCOL_MAX_MESSAGE_BYTES,
          Validator.between(1, PROTOCOL_MAX_MESSAGE_BYTES),
          "Largest message payload a producer accepts; larger ones are rejected before sending.")
      .define(MAX_BLOCK_BYTES, Type.INT, 1024 * 1024, Validator.between(1, 64 * 1024 * 1024),
          "A producer closes a message block once the serialized (uncompressed) messages in it"
              + " reach this size; a block holds at least one message.")
      .define(MAX_FETCH_BYTES, Type.INT, 2 * 1024 * 1024,
          Validator.between(1, PROTOCOL_MAX_MESSAGE_BYTES),
          "Bytes a consumer asks for per fetch; the server may exceed it to return whole blocks.")
      .define(COMPRESSION_TYPE, Type.STRING, CompressionType.NONE.name(),
          Validator.oneOf("NONE", "SNAPPY", "GZIP"),
          "Compression of the message blocks a producer sends: NONE, SNAPPY or GZIP.");

  private final Map<String, Object> values;

  private TalosClientConfig(Map<String, Object> values) {
    this.values = Map.copyOf(values);
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * Reads the settings named in {@link #DEFINITION} (e.g. {@code endpoint},
   * {@code secretKeyId}, {@code requestTimeoutMs}); absent ones take their defaults.
   *
   * @throws ConfigException naming every unknown key and every bad or missing value
   */
  public static TalosClientConfig fromProperties(Properties properties) {
    Map<String, Object> parsed = DEFINITION.parse(properties);
    Builder builder = builder();
    parsed.forEach((name, value) -> {
      if (value != null) builder.values.put(name, value);
    });
    return builder.build();
  }

  /**
   * Reads {@code secretKeyId} and {@code secretKey} from a properties file such as the server's
   * {@code admin-credential.properties}; other keys in the file are ignored.
   *
   * @throws ConfigException when the file cannot be read or lacks one of the keys
   */
  public static Credential readCredentialFile(Path file) {
    Properties p = new Properties();
    try (InputStream in = Files.newInputStream(file)) {
      p.load(in);
    } catch (NoSuchFileException e) {
      throw new ConfigException("credential file " + file + " does not exist");
    } catch (IOException e) {
      throw new ConfigException("cannot read credential file " + file + ": " + e.getMessage());
    }
    List<String> missing = new ArrayList<>();
    for (String key : List.of(SECRET_KEY_ID, SECRET_KEY)) {
      String v = p.getProperty(key);
      if (v == null || v.isBlank()) missing.add(key);
    }
    if (!missing.isEmpty()) {
      throw new ConfigException("credential file " + file + " has no " + String.join(" and ", missing));
    }
    return new Credential(p.getProperty(SECRET_KEY_ID).strip(), p.getProperty(SECRET_KEY).strip());
  }

  /** A signing credential as read from a file; {@link #toString} hides the secret. */
  public record Credential(String secretKeyId, String secretKey) {
    @Override
    public String toString() {
      return "Credential[" + secretKeyId + "]";
    }
  }

  /** The endpoint without a trailing slash, e.g. {@code http://127.0.0.1:8080}. */
  public String endpoint() {
    return (String) values.get(ENDPOINT);
  }

  public String secretKeyId() {
    return (String) values.get(SECRET_KEY_ID);
  }

  public String secretKey() {
    return (String) values.get(SECRET_KEY);
  }

  public int connectTimeoutMs() {
    return (Integer) values.get(CONNECT_TIMEOUT_MS);
  }

  public int requestTimeoutMs() {
    return (Integer) values.get(REQUEST_TIMEOUT_MS);
  }

  public int maxConnectionsPerEndpoint() {
    return (Integer) values.get(MAX_CONNECTIONS_PER_ENDPOINT);
  }

  public int maxMessageBytes() {
    return (Integer) values.get(MAX_MESSAGE_BYTES);
  }

  public int maxBlockBytes() {
    return (Integer) values.get(MAX_BLOCK_BYTES);
  }

  public int maxFetchBytes() {
    return (Integer) values.get(MAX_FETCH_BYTES);
  }

  public int maxResponseBytes() {
    return (Integer) values.get(MAX_RESPONSE_BYTES);
  }

  public BodyDigest bodyDigest() {
    return BodyDigest.fromConfigName((String) values.get(BODY_DIGEST));
  }

  public CompressionType compressionType() {
    return CompressionType.valueOf((String) values.get(COMPRESSION_TYPE));
  }

  /** A builder holding this configuration's values, to derive a changed copy. */
  public Builder toBuilder() {
    Builder b = builder();
    b.values.putAll(values);
    return b;
  }

  /** Every setting except the secret key. */
  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("TalosClientConfig{");
    String sep = "";
    for (String name : DEFINITION.keys().keySet()) {
      sb.append(sep).append(name).append('=')
          .append(name.equals(SECRET_KEY) ? "(hidden)" : values.get(name));
      sep = ", ";
    }
    return sb.append('}').toString();
  }

  private static String checkEndpoint(Object value) {
    String s = value.toString();
    try {
      URI uri = new URI(s);
      String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
      if (!scheme.equals("http") && !scheme.equals("https")) {
        return "must start with http:// or https://";
      }
      if (uri.getHost() == null) return "has no host";
      if (uri.getRawQuery() != null || uri.getRawFragment() != null) {
        return "must not have a query or fragment";
      }
      return null;
    } catch (URISyntaxException e) {
      return "is not a URL: " + e.getReason();
    }
  }

  /** Collects settings; {@link #build} validates them all. Not thread-safe. */
  public static final class Builder {
    private final Map<String, Object> values = new LinkedHashMap<>();

    private Builder() {}

    public Builder endpoint(String endpoint) {
      return set(ENDPOINT, endpoint);
    }

    public Builder credentials(String secretKeyId, String secretKey) {
      set(SECRET_KEY_ID, secretKeyId);
      return set(SECRET_KEY, secretKey);
    }

    /** Takes the credential from a file, see {@link #readCredentialFile}. */
    public Builder credentialFile(Path file) {
      Credential credential = readCredentialFile(file);
      return credentials(credential.secretKeyId(), credential.secretKey());
    }

    public Builder connectTimeoutMs(int ms) {
      return set(CONNECT_TIMEOUT_MS, ms);
    }

    public Builder requestTimeoutMs(int ms) {
      return set(REQUEST_TIMEOUT_MS, ms);
    }

    public Builder maxConnectionsPerEndpoint(int connections) {
      return set(MAX_CONNECTIONS_PER_ENDPOINT, connections);
    }

    public Builder maxMessageBytes(int bytes) {
      return set(MAX_MESSAGE_BYTES, bytes);
    }

    public Builder maxBlockBytes(int bytes) {
      return set(MAX_BLOCK_BYTES, bytes);
    }

    public Builder maxFetchBytes(int bytes) {
      return set(MAX_FETCH_BYTES, bytes);
    }

    public Builder maxResponseBytes(int bytes) {
      return set(MAX_RESPONSE_BYTES, bytes);
    }

    public Builder bodyDigest(BodyDigest digest) {
      return set(BODY_DIGEST, Objects.requireNonNull(digest, "digest").configName());
    }

    public Builder compressionType(CompressionType type) {
      return set(COMPRESSION_TYPE, Objects.requireNonNull(type, "type").name());
    }

    /**
     * Validates every setting against {@link #DEFINITION}.
     *
     * @throws ConfigException naming every missing or invalid setting
     */
    public TalosClientConfig build() {
      Map<String, Object> resolved = new LinkedHashMap<>();
      List<String> errors = new ArrayList<>();
      for (ConfigDef.Key key : DEFINITION.keys().values()) {
        Object value = values.containsKey(key.name()) ? values.get(key.name()) : key.defaultValue();
        if (value == null) {
          errors.add(key.name() + " is not set");
          continue;
        }
        String problem = key.validator() == null ? null : key.validator().check(value);
        if (problem != null) {
          errors.add(key.name() + "=" + value + ": " + problem);
          continue;
        }
        resolved.put(key.name(), value);
      }
      if (resolved.get(MAX_RESPONSE_BYTES) instanceof Integer response
          && resolved.get(MAX_FETCH_BYTES) instanceof Integer fetch && response < fetch) {
        errors.add(MAX_RESPONSE_BYTES + "=" + response + ": must be at least " + MAX_FETCH_BYTES + "=" + fetch
            + " (a fetch's answer holds up to that many payload bytes)");
      }
      if (!errors.isEmpty()) {
        throw new ConfigException("invalid Talos client configuration: " + String.join("; ", errors));
      }
      String endpoint = (String) resolved.get(ENDPOINT);
      while (endpoint.endsWith("/")) endpoint = endpoint.substring(0, endpoint.length() - 1);
      resolved.put(ENDPOINT, endpoint);
      return new TalosClientConfig(resolved);
    }

    private Builder set(String name, Object value) {
      values.put(name, value);
      return this;
    }
  }
}
