package io.talos.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.common.config.ConfigDef;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * docs/clients.md carries a generated table of each client settings class between
 * {@code <!-- NAME-config:begin -->} and {@code <!-- NAME-config:end -->}. The check fails when a
 * table differs from the definition; with {@code -Dtalos.writeConf=true} it rewrites it instead.
 */
public final class ConfigDocs {
  private ConfigDocs() {}

  public static void assertTableCurrent(String name, ConfigDef definition) throws IOException {
    Path docs = Path.of("..", "docs", "clients.md");
    String text = Files.readString(docs, StandardCharsets.UTF_8);
    String begin = "<!-- " + name + "-config:begin -->\n";
    String end = "<!-- " + name + "-config:end -->";
    int from = text.indexOf(begin);
    int to = text.indexOf(end);
    assertTrue(from >= 0 && to > from, begin.strip() + " markers missing in " + docs);
    String table = definition.toMarkdown().strip() + "\n";
    String updated = text.substring(0, from + begin.length()) + table + text.substring(to);
    if (Boolean.getBoolean("talos.writeConf")) {
      Files.writeString(docs, updated, StandardCharsets.UTF_8);
    } else {
      assertEquals(updated, text, docs + " is out of date: regenerate it (see its configuration sections)");
    }
  }
}
