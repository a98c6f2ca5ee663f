package io.talos.server.storage;

/** When an append is acknowledged. */
public enum Durability {
  /**
   * After the data is handed to the OS (local files) or is on every DataNode of the write
   * pipeline (hdfs, hflush): survives a crash of the server process, not of the machine.
   */
  FLUSH,
  /** After the data is synced to disk (fsync / hsync): survives a machine crash. */
  SYNC
}
