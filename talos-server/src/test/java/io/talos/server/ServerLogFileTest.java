package io.talos.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import org.apache.log4j.Appender;
import org.apache.log4j.LogManager;
import org.apache.log4j.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ServerLogFileTest {
  @TempDir
  Path dir;

  @Test
  void shouldRollTheServerLogBySizeKeepingTheConfiguredBackups() throws Exception {
    Logger root = LogManager.getRootLogger();
    List<Appender> before = new ArrayList<>();
    for (Object a : Collections.list(root.getAllAppenders())) before.add((Appender) a);
    Properties props = new Properties();
    props.setProperty(ServerConfig.LOG_FILE_MAX_BYTES, "2048");
    props.setProperty(ServerConfig.LOG_FILE_BACKUPS, "2");
    Path file = dir.resolve("logs/talos.log");
    try {
      ServerLogFile.configure(file, new ServerConfig(props));
      org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(ServerLogFileTest.class);
      for (int i = 0; i < 200; i++) log.info("line {} of a log that rolls every 2 KiB", i);
    } finally {
      Appender added = root.getAppender(ServerLogFile.APPENDER_NAME);
      root.removeAllAppenders();
      before.forEach(root::addAppender);
      if (added != null) added.close();
    }
    assertTrue(Files.exists(file.resolveSibling("talos.log.1")));
    assertTrue(Files.exists(file.resolveSibling("talos.log.2")));
    assertFalse(Files.exists(file.resolveSibling("talos.log.3")), "log.file.backups=2");
    assertTrue(Files.size(file.resolveSibling("talos.log.1")) <= 2048 + 200);
    assertTrue(Files.readString(file).contains("line 199 of a log"), "the newest lines are in the file itself");
    assertEquals(0, root.getAppender(ServerLogFile.APPENDER_NAME) == null ? 0 : 1);
  }
}
