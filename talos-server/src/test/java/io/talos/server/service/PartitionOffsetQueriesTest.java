package io.talos.server.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.talos.server.ManualClock;
import io.talos.server.metadata.MetadataStore;
import io.talos.server.metadata.MvStoreMetadataStore;
import io.talos.server.metadata.TopicRecord;
import io.talos.server.storage.BlockToAppend;
import io.talos.server.storage.LogConfig;
import io.talos.server.storage.PartitionLogs;
import io.talos.thrift.DescribeTopicRequest;
import io.talos.thrift.DescribeTopicResponse;
import io.talos.thrift.GetPartitionOffsetRequest;
import io.talos.thrift.GetPartitionsOffsetRequest;
import io.talos.thrift.GetTopicOffsetRequest;
import io.talos.thrift.OffsetInfo;
import io.talos.thrift.PartitionState;
import io.talos.thrift.TopicAndPartition;
import io.talos.thrift.TopicTalosResourceName;
import java.io.File;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * describeTopic and the offset calls answer from metadata, kept offsets and segment listings:
 * they do not open (recover) partition logs, so a describe of a topic with many partitions holds
 * no files afterwards. Counts are asserted, never durations; the duration is printed for the
 * record.
 */
class PartitionOffsetQueriesTest {
  private static final int PARTITIONS = 1024;
  private static final String RESOURCE = "CL1#wide#0123456789abcdef";

  @TempDir Path tmp;
  private FileSystem fs;
  private MetadataStore metadata;
  private PartitionLogs logs;
  private final ManualClock clock = new ManualClock(1_700_000_000_000L);
  private final LogConfig config = LogConfig.builder().segmentBytes(4096).build();
  private TopicRecord topic;

  @BeforeEach
  void setUp() throws Exception {
    fs = PartitionLogs.fileSystemFor(URI.create("file:///"), new Configuration());
    metadata = MvStoreMetadataStore.open(tmp.resolve("meta"));
    topic = new TopicRecord("wide", RESOURCE, "CL1", PARTITIONS, 86_400, Map.of(), clock.millis(), 0);
    assertTrue(metadata.createTopic(topic));
    logs = newLogs();
  }

  private PartitionLogs newLogs() {
    return new PartitionLogs(fs, new org.apache.hadoop.fs.Path(tmp.resolve("log").toUri()), config, clock, 0,
        new PartitionLogs.Limits(64, 1024, 60_000, 0, 0, 10_000));
  }

  @AfterEach
  void tearDown() throws Exception {
    logs.close();
    metadata.close();
    fs.close();
  }

  @Test
  void describeAndOffsetCallsOfAThousandPartitionsOpenNoLog() throws Exception {
    // Data in a few partitions, written and closed by an earlier run.
    for (int p = 0; p < 8; p++) {
      for (int i = 0; i <= p; i++) {
        logs.log(RESOURCE, p).append(List.of(new BlockToAppend(3, 0, -1, -1, new byte[100])), clock.millis());
      }
    }
    logs.close();
    logs = newLogs();
    Topics topics = new Topics(metadata);
    TopicServiceHandler topicService = new TopicServiceHandler(topics, logs,
        new TopicDeletions(metadata, logs, clock), clock, 65536, 86_400, 60);
    MessageServiceHandler messageService = new MessageServiceHandler(topics, logs, clock,
        new MessageBlockValidator(MessageBlockValidator.Mode.NONE, 1 << 20, 1 << 21), 100, 1 << 20);
    long fdsBefore = openFds();
    long started = System.nanoTime();

    DescribeTopicResponse describe = topicService.describeTopic(new DescribeTopicRequest("wide"));

    long describeMs = (System.nanoTime() - started) / 1_000_000;
    long fdsAfter = openFds();
    System.out.printf("describeTopic of %d partitions: %d ms, open files %d -> %d%n", PARTITIONS, describeMs,
        fdsBefore, fdsAfter);
    List<PartitionState> states = describe.getTopicState().getPartitionStates();
    assertEquals(PARTITIONS, states.size());
    for (int p = 0; p < PARTITIONS; p++) {
      long messages = p < 8 ? 3L * (p + 1) : 0;
      assertEquals(messages, states.get(p).getLastestOffset() + 1, "partition " + p);
      assertEquals(0, states.get(p).getStartOffset());
    }
    assertEquals(0, logs.openedLogs(), "describe opened partition logs");
    assertEquals(0, logs.openLogCount());
    if (fdsBefore >= 0) assertTrue(fdsAfter - fdsBefore < 16, "open files grew from " + fdsBefore + " to " + fdsAfter);

    TopicTalosResourceName trn = new TopicTalosResourceName(RESOURCE);
    List<OffsetInfo> offsets = messageService.getTopicOffset(new GetTopicOffsetRequest(trn)).getOffsetInfoList();
    assertEquals(PARTITIONS, offsets.size());
    assertEquals(23, offsets.get(7).getEndOffset());
    assertEquals(-1, offsets.get(1000).getEndOffset());
    TopicAndPartition p3 = new TopicAndPartition("wide", trn, 3);
    assertEquals(11, messageService.getPartitionOffset(new GetPartitionOffsetRequest(p3)).getOffsetInfo()
        .getEndOffset());
    List<TopicAndPartition> taps = new ArrayList<>();
    for (int p = 0; p < PARTITIONS; p++) taps.add(new TopicAndPartition("wide", trn, p));
    List<OffsetInfo> listed = messageService.getPartitionsOffset(new GetPartitionsOffsetRequest(taps))
        .getOffsetInfoList();
    assertEquals(5, listed.get(1).getEndOffset());
    assertEquals(0, logs.openedLogs(), "offset calls opened partition logs");
    assertEquals(0, logs.openLogCount());
    assertTrue(!new File(tmp.resolve("log").toFile(), PartitionLogs.encodeDirName(RESOURCE) + "/1000").exists(),
        "an offset query created a partition directory");
  }

  /** Open file descriptors of this JVM (Linux /proc), or -1 elsewhere. */
  static long openFds() {
    String[] fds = new File("/proc/self/fd").list();
    return fds == null ? -1 : fds.length;
  }
}
