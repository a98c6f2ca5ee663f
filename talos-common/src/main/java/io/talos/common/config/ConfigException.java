package io.talos.common.config;

/** A configuration that cannot be used; the message names every bad key. */
public class ConfigException extends RuntimeException {
  public ConfigException(String message) {
    super(message);
  }
}
