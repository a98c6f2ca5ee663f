package io.talos.common.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.common.config.ConfigDef.Type;
import io.talos.common.config.ConfigDef.Validator;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class ConfigDefTest {
  private static final ConfigDef DEF = new ConfigDef()
      .section("A")
      .define("a.port", Type.INT, 8080, Validator.between(0, 65535), "The port.")
      .define("a.mode", Type.STRING, "flush", Validator.oneOf("flush", "sync"), "The mode.")
      .define("a.on", Type.BOOLEAN, true, null, "A switch.")
      .definePrefix("hadoop.", "Passed through.");

  private static Properties props(String... kv) {
    Properties p = new Properties();
    for (int i = 0; i < kv.length; i += 2) p.setProperty(kv[i], kv[i + 1]);
    return p;
  }

  @Test
  void defaultsApplyAndValuesParse() {
    TalosConfig c = new TalosConfig(DEF, props("a.port", "9000", "hadoop.dfs.replication", "2"));
    assertEquals(9000, c.getInt("a.port"));
    assertEquals("flush", c.getString("a.mode"));
    assertTrue(c.getBoolean("a.on"));
    assertEquals("2", c.withPrefix("hadoop.").get("dfs.replication"));
  }

  @Test
  void everyBadKeyIsNamedInOneError() {
    ConfigException e = assertThrows(ConfigException.class,
        () -> new TalosConfig(DEF, props("a.port", "70000", "a.mode", "fast", "a.on", "maybe", "a.typo", "1")));
    String m = e.getMessage();
    assertTrue(m.contains("a.port=70000: must be between 0 and 65535"), m);
    assertTrue(m.contains("a.mode=fast: must be one of flush, sync"), m);
    assertTrue(m.contains("a.on=maybe: expected boolean"), m);
    assertTrue(m.contains("unknown configuration key 'a.typo'"), m);
  }

  @Test
  void propertiesFileListsEveryKeyAtItsDefault() {
    String file = DEF.toPropertiesFile("# header\n");
    assertTrue(file.contains("## A"));
    assertTrue(file.contains("# The port.\n#a.port=8080\n"));
    assertTrue(file.contains("#a.mode=flush\n"));
    assertTrue(file.contains("#hadoop....="));
  }

  @Test
  void invalidDefaultIsRejectedAtDefinition() {
    assertThrows(IllegalArgumentException.class,
        () -> new ConfigDef().define("x", Type.INT, -1, Validator.atLeast(0), "x"));
  }
}
