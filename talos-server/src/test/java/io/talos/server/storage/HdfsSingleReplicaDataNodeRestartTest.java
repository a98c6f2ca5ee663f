package io.talos.server.storage;

import io.talos.server.ManualClock;

import static io.talos.server.storage.DataNodeFaults.T0;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Replication 1, one DataNode, restarted while producing: appends fail (retriable IOException,
 * nothing acknowledged, nothing visible) while it is down, and resume by themselves once it is
 * back; the segment whose write failed has its lease recovered on the first read so that its
 * acknowledged records, last block included, stay readable.
 */
class HdfsSingleReplicaDataNodeRestartTest {
  private static MiniHdfs hdfs;

  @BeforeAll
  static void startCluster() throws IOException {
    hdfs = MiniHdfs.start("dn-restart-r1", 1, 1);
  }

  @AfterAll
  static void stopCluster() {
    if (hdfs != null) hdfs.close();
  }

  @Test
  void shouldFailAppendsWhileTheOnlyDataNodeIsDownAndResumeByItselfAfterItsRestart() throws Exception {
    Path dir = new Path("/talos/r1/0");
    LogConfig config = LogConfig.builder().segmentBytes(64 * 1024).indexIntervalBytes(512).build();
    LogFixture fx = new LogFixture();
    try (FileSystem fs = hdfs.newClient()) {
      PartitionLog log = PartitionLog.open(fs, dir, config, new ManualClock(T0));
      for (int i = 0; i < 20; i++) fx.append(log, T0, 2, 200);

      MiniDFSCluster.DataNodeProperties dn = hdfs.cluster().stopDataNode(0);
      for (int i = 0; i < 3; i++) {
        IOException e = assertThrows(IOException.class, () -> log.append(DataNodeFaults.oneBlock(40), T0));
        assertFalse(e instanceof PartitionFencedException, e.toString());
        assertEquals(40, log.endOffset(), "nothing acknowledged while the DataNode is down");
      }

      hdfs.cluster().restartDataNode(dn, true);
      hdfs.cluster().waitActive();
      DataNodeFaults.appendRetrying(fx, log, 100);
      for (int i = 0; i < 10; i++) assertEquals(0, DataNodeFaults.appendRetrying(fx, log, 100));
      assertEquals(51, log.endOffset());
      DataNodeFaults.assertReadableRetrying(fx, log);
      log.close();

      try (FileSystem other = hdfs.newClient()) {
        PartitionLog reopened = PartitionLog.open(other, dir, config, new ManualClock(T0));
        assertEquals(51, reopened.endOffset(), "none of the failed appends appears after a restart");
        DataNodeFaults.assertReadableRetrying(fx, reopened);
        reopened.close();
      }
    }
  }
}
