package io.talos.common.config;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * Declares configuration keys once: name, type, default, validation and a doc line (in the manner
 * of Kafka's ConfigDef). {@link #parse} validates a whole set of properties and reports every bad
 * key in one error that names the key, the value and what is allowed. {@link #toPropertiesFile}
 * renders the definition as a properties file with every key at its default, which is how
 * {@code conf/talos.properties} is kept complete (a test compares the two).
 *
 * <p>Keys whose name starts with a declared {@link #definePrefix prefix} (e.g. {@code hadoop.})
 * are passed through unvalidated.
 *
 * <p>Not thread-safe while being built; immutable in use.
 */
public final class ConfigDef {
  public enum Type { INT, LONG, BOOLEAN, STRING }

  /** Checks a parsed value; returns null when fine, else what is allowed. */
  @FunctionalInterface
  public interface Validator {
    String check(Object value);

    static Validator atLeast(long min) {
      return v -> ((Number) v).longValue() >= min ? null : "must be >= " + min;
    }

    static Validator between(long min, long max) {
      return v -> {
        long x = ((Number) v).longValue();
        return x >= min && x <= max ? null : "must be between " + min + " and " + max;
      };
    }

    static Validator oneOf(String... allowed) {
      return v -> List.of(allowed).contains(v) ? null : "must be one of " + String.join(", ", allowed);
    }

    static Validator nonEmpty() {
      return v -> v != null && !v.toString().isEmpty() ? null : "must not be empty";
    }
  }

  public record Key(String name, Type type, Object defaultValue, Validator validator, String section,
      String doc) {}

  private final Map<String, Key> keys = new LinkedHashMap<>();
  private final Map<String, String> prefixes = new LinkedHashMap<>();
  private String section = "";

  /** Starts a new section; following keys are listed under it in the properties file. */
  public ConfigDef section(String title) {
    this.section = title;
    return this;
  }

  public ConfigDef define(String name, Type type, Object defaultValue, Validator validator, String doc) {
    if (keys.containsKey(name)) throw new IllegalArgumentException("key defined twice: " + name);
    Key key = new Key(name, type, defaultValue, validator, section, doc);
    if (defaultValue != null && validator != null && validator.check(defaultValue) != null) {
      throw new IllegalArgumentException("default of " + name + " is invalid: " + validator.check(defaultValue));
    }
    keys.put(name, key);
    return this;
  }

  /** Keys starting with {@code prefix} are accepted as they are (passed to another library). */
  public ConfigDef definePrefix(String prefix, String doc) {
    prefixes.put(prefix, doc);
    return this;
  }

  public Map<String, Key> keys() {
    return Collections.unmodifiableMap(keys);
  }

  /**
   * Parses and validates; unknown keys (not declared, not under a prefix) are errors too, so a
   * typo never silently falls back to a default.
   *
   * @throws ConfigException naming every bad key
   */
  public Map<String, Object> parse(Properties props) {
    Map<String, Object> values = new LinkedHashMap<>();
    List<String> errors = new ArrayList<>();
    for (String name : props.stringPropertyNames()) {
      if (!keys.containsKey(name) && prefixes.keySet().stream().noneMatch(name::startsWith)) {
        errors.add("unknown configuration key '" + name + "'");
      }
    }
    for (Key key : keys.values()) {
      String raw = props.getProperty(key.name());
      Object value;
      if (raw == null) {
        value = key.defaultValue();
      } else {
        try {
          value = convert(key.type(), raw.trim());
        } catch (IllegalArgumentException e) {
          errors.add(key.name() + "=" + raw + ": expected " + key.type().name().toLowerCase(Locale.ROOT));
          continue;
        }
      }
      if (value != null && key.validator() != null) {
        String problem = key.validator().check(value);
        if (problem != null) {
          errors.add(key.name() + "=" + value + ": " + problem);
          continue;
        }
      }
      values.put(key.name(), value);
    }
    for (String name : props.stringPropertyNames()) {
      if (!keys.containsKey(name)) values.put(name, props.getProperty(name));
    }
    if (!errors.isEmpty()) {
      throw new ConfigException("invalid configuration: " + String.join("; ", errors));
    }
    return values;
  }

  private static Object convert(Type type, String raw) {
    switch (type) {
      case INT: return Integer.parseInt(raw);
      case LONG: return Long.parseLong(raw);
      case BOOLEAN:
        if (raw.equalsIgnoreCase("true")) return true;
        if (raw.equalsIgnoreCase("false")) return false;
        throw new IllegalArgumentException(raw);
      default: return raw;
    }
  }

  /** A markdown table per section: key, type, default, meaning. */
  public String toMarkdown() {
    StringBuilder sb = new StringBuilder();
    String current = null;
    for (Key key : keys.values()) {
      if (!key.section().equals(current)) {
        current = key.section();
        sb.append("\n### ").append(current).append("\n\n| key | type | default | meaning |\n|---|---|---|---|\n");
      }
      Object d = key.defaultValue();
      sb.append("| `").append(key.name()).append("` | ").append(key.type().name().toLowerCase(Locale.ROOT))
          .append(" | ").append(d == null || d.toString().isEmpty() ? "(empty)" : "`" + d + "`")
          .append(" | ").append(key.doc().replace("|", "\\|")).append(" |\n");
    }
    for (Map.Entry<String, String> p : prefixes.entrySet()) {
      sb.append("\nKeys starting with `").append(p.getKey()).append("`: ").append(p.getValue()).append("\n");
    }
    return sb.toString();
  }

  /** Every key at its default, commented out, one doc line each, in sections. */
  public String toPropertiesFile(String header) {
    StringBuilder sb = new StringBuilder(header);
    String current = null;
    for (Key key : keys.values()) {
      if (!key.section().equals(current)) {
        current = key.section();
        sb.append("\n## ").append(current).append("\n\n");
      }
      sb.append("# ").append(key.doc()).append('\n');
      sb.append("#").append(key.name()).append('=')
          .append(key.defaultValue() == null ? "" : key.defaultValue()).append("\n\n");
    }
    for (Map.Entry<String, String> p : prefixes.entrySet()) {
      sb.append("# ").append(p.getValue()).append('\n');
      sb.append("#").append(p.getKey()).append("...=\n\n");
    }
    return sb.toString();
  }
}
