package io.talos.common.config;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

/** Validated values of a {@link ConfigDef}; immutable, thread-safe. */
public class TalosConfig {
  private final ConfigDef def;
  private final Map<String, Object> values;

  public TalosConfig(ConfigDef def, Properties props) {
    this.def = def;
    this.values = Collections.unmodifiableMap(new LinkedHashMap<>(def.parse(props)));
  }

  public ConfigDef definition() {
    return def;
  }

  public int getInt(String key) {
    return (Integer) require(key);
  }

  public long getLong(String key) {
    return (Long) require(key);
  }

  public boolean getBoolean(String key) {
    return (Boolean) require(key);
  }

  public String getString(String key) {
    return (String) values.get(checkDeclared(key));
  }

  /** Undeclared keys under {@code prefix}, with the prefix removed. */
  public Map<String, String> withPrefix(String prefix) {
    Map<String, String> out = new LinkedHashMap<>();
    values.forEach((k, v) -> {
      if (k.startsWith(prefix) && !def.keys().containsKey(k)) out.put(k.substring(prefix.length()), v.toString());
    });
    return out;
  }

  private Object require(String key) {
    Object v = values.get(checkDeclared(key));
    if (v == null) throw new ConfigException(key + " has no value and no default");
    return v;
  }

  private String checkDeclared(String key) {
    if (!def.keys().containsKey(key)) throw new IllegalArgumentException("undeclared key " + key);
    return key;
  }
}
