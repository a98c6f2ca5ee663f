package io.talos.server.storage;

import io.talos.server.ManualClock;

import static io.talos.server.storage.DataNodeFaults.T0;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Replication 2, two DataNodes, one restarted while producing: the write pipeline drops the
 * stopped DataNode and goes on with the other (replace-datanode-on-failure policy NEVER: there is
 * no third one to swap in), so no append fails; rolls while it is down write single-replica
 * blocks; everything acknowledged stays readable, also from a new owner.
 */
class HdfsTwoReplicaDataNodeRestartTest {
  private static MiniHdfs hdfs;

  @BeforeAll
  static void startCluster() throws IOException {
    hdfs = MiniHdfs.start("dn-restart-r2", 2, 2);
  }

  @AfterAll
  static void stopCluster() {
    if (hdfs != null) hdfs.close();
  }

  @Test
  void shouldKeepAcknowledgingWhileOneOfTwoReplicasRestarts() throws Exception {
    Path dir = new Path("/talos/r2/0");
    LogConfig config = LogConfig.builder().segmentBytes(16 * 1024).indexIntervalBytes(512).build();
    LogFixture fx = new LogFixture();
    try (FileSystem fs = hdfs.newClient()) {
      PartitionLog log = PartitionLog.open(fs, dir, config, new ManualClock(T0));
      for (int i = 0; i < 20; i++) fx.append(log, T0, 2, 200);

      MiniDFSCluster.DataNodeProperties dn = hdfs.cluster().stopDataNode(0);
      int failures = 0;
      for (int i = 0; i < 100; i++) failures += DataNodeFaults.appendRetrying(fx, log, 300); // rolls too
      hdfs.cluster().restartDataNode(dn, true);
      hdfs.cluster().waitActive();
      for (int i = 0; i < 50; i++) failures += DataNodeFaults.appendRetrying(fx, log, 300);
      assertEquals(0, failures, "the pipeline recovered without failing an append");
      assertEquals(190, log.endOffset());
      DataNodeFaults.assertReadableRetrying(fx, log);
      log.close();

      try (FileSystem other = hdfs.newClient()) {
        PartitionLog reopened = PartitionLog.open(other, dir, config, new ManualClock(T0));
        assertEquals(190, reopened.endOffset());
        DataNodeFaults.assertReadableRetrying(fx, reopened);
        reopened.close();
      }
    }
  }
}
