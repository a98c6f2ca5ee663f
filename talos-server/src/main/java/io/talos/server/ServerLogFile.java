package io.talos.server;

import java.nio.file.Path;
import org.apache.log4j.Appender;
import org.apache.log4j.ConsoleAppender;
import org.apache.log4j.Layout;
import org.apache.log4j.LogManager;
import org.apache.log4j.Logger;
import org.apache.log4j.PatternLayout;
import org.apache.log4j.RollingFileAppender;

/**
 * {@code --log-file}: the server log goes to a file rolled by size ({@code log.file.max.bytes},
 * {@code log.file.backups}) instead of stderr. Replaces the root logger's console appenders of
 * log4j-server.properties, keeping its layout; the audit log (its own logger) is not touched.
 * Called once, before the node starts.
 */
final class ServerLogFile {
  static final String APPENDER_NAME = "file";
  private static final String DEFAULT_PATTERN = "%d{ISO8601} %-5p [%t] %c{1}: %m%n";

  private ServerLogFile() {}

  static void configure(Path file, ServerConfig config) {
    Logger root = LogManager.getRootLogger();
    Layout layout = null;
    for (java.util.Enumeration<?> e = root.getAllAppenders(); e.hasMoreElements(); ) {
      Appender a = (Appender) e.nextElement();
      if (a instanceof ConsoleAppender) {
        if (layout == null) layout = a.getLayout();
        root.removeAppender(a);
      }
    }
    RollingFileAppender appender = new RollingFileAppender();
    appender.setName(APPENDER_NAME);
    appender.setFile(file.toAbsolutePath().toString());
    appender.setAppend(true);
    appender.setMaximumFileSize(config.getLong(ServerConfig.LOG_FILE_MAX_BYTES));
    appender.setMaxBackupIndex(config.getInt(ServerConfig.LOG_FILE_BACKUPS));
    appender.setLayout(layout != null ? layout : new PatternLayout(DEFAULT_PATTERN));
    appender.activateOptions();
    root.addAppender(appender);
  }
}
