package io.talos.server.storage;

/** When an append is acknowledged. */
public enum Durability {
  /**
   * Local files: after the data is handed to the OS; survives a crash of the server process, not
   * of the machine. hdfs: after {@code hflush}, the data is in the memory of every DataNode of the
   * write pipeline and visible to new readers; survives the loss of the server and of all but one
   * of those DataNodes, not a power loss of all of them at once.
   */
  FLUSH,
  /**
   * Local files: after {@code fsync} (and of new directory entries); survives a machine crash.
   * hdfs: after {@code hsync}, every pipeline DataNode has synced the block file to disk.
   */
  SYNC
}
