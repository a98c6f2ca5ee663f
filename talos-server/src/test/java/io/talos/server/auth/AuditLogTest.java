package io.talos.server.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.server.ManualClock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import org.apache.log4j.Hierarchy;
import org.apache.log4j.Level;
import org.apache.log4j.PropertyConfigurator;
import org.apache.log4j.spi.RootLogger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The audit log's own file (the server's log4j configuration, loaded into a private log4j
 * hierarchy), its rate limit per key id with a bounded number of tracked key ids, and escaping.
 */
class AuditLogTest {

  @Test
  void theServerLog4jConfigurationWritesAuditLinesToTheirOwnFileOnly(@TempDir Path dir) throws Exception {
    Properties p = new Properties();
    try (var in = AuditLogTest.class.getResourceAsStream("/log4j-server.properties")) {
      p.load(in);
    }
    System.setProperty("talos.log.dir", dir.toString());
    Hierarchy hierarchy = new Hierarchy(new RootLogger(Level.DEBUG));
    new PropertyConfigurator().doConfigure(p, hierarchy);
    hierarchy.getLogger(AuditLog.LOGGER_NAME).info("action=test outcome=ok");
    hierarchy.shutdown();
    List<String> lines = Files.readAllLines(dir.resolve("audit.log"));
    assertEquals(1, lines.size(), lines.toString());
    assertTrue(lines.get(0).endsWith(" action=test outcome=ok"), lines.get(0));
    assertFalse(hierarchy.getLogger(AuditLog.LOGGER_NAME).getAdditivity(), "not also on stderr");
  }

  @Test
  void valuesAreEscapedAndCut() {
    assertEquals("TK1", AuditLog.value("TK1"));
    assertEquals("\"a b\"", AuditLog.value("a b"));
    assertEquals("\"x\\u000aaction=forged\"", AuditLog.value("x\naction=forged"));
    assertEquals("-", AuditLog.value(null));
    assertEquals(AuditLog.MAX_VALUE_CHARS + 3, AuditLog.value("k".repeat(10_000)).length());
  }

  @Test
  void trackedKeyIdsAreBoundedAndTheRestShareOneEntry() {
    ManualClock clock = new ManualClock(1_000_000);
    AuditLog audit = new AuditLog(clock, 60_000, 3);
    for (int i = 0; i < 1_000; i++) audit.authFailure(401, "TK" + i, "10.0.0.1:1", "invalid signature");
    assertEquals(4, audit.trackedKeys(), "3 key ids and the shared entry");
    clock.advanceMs(60_000);
    audit.authFailure(401, "TKnew", "10.0.0.1:1", "invalid signature");
    assertEquals(1, audit.trackedKeys(), "ended windows were dropped to make room");
  }
}
